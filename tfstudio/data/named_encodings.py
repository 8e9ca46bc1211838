"""OpenAI's published encodings (gpt2, cl100k_base, ...) from files already on this machine.

tiktoken downloads these on first use; tfstudio never does. We look for the files where
tiktoken caches them (``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
``<tmp>/data-gym-cache``, each file named by the sha1 of its URL) and in
``<tfstudio cache>/tiktoken/`` (named by the sha1 or by the file's own name, e.g.
``cl100k_base.tiktoken``), check each against its published sha256, and build the
``tiktoken.Encoding`` ourselves so no code path can reach the network. Missing files give a
message saying exactly which file to put where.

Besides the encoding's own ``<|endoftext|>``, ``<|pad|>``, ``<|mask|>`` and ``<|bos|>`` are
appended after its largest id, so every objective has the ids it needs (gpt2: 50,257 + 3).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import DataError
from .paths import cache_dir
from .tokenizer import EOT, SPECIAL_TOKENS, Tokenizer

_BLOB = "https://openaipublic.blob.core.windows.net/"
_R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
                   r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])


@dataclass(frozen=True)
class SourceFile:
    url: str
    sha256: str

    @property
    def basename(self) -> str:
        return self.url.rsplit("/", 1)[-1]

    @property
    def cache_key(self) -> str:
        """The file name tiktoken gives this URL in its cache."""
        return hashlib.sha1(self.url.encode()).hexdigest()


@dataclass(frozen=True)
class NamedEncoding:
    files: tuple[SourceFile, ...]  # one .tiktoken file, or data-gym's (vocab.bpe, encoder.json)
    pattern: str
    specials: dict[str, int]


def _tiktoken_file(name: str, sha256: str) -> tuple[SourceFile, ...]:
    return (SourceFile(f"{_BLOB}encodings/{name}.tiktoken", sha256),)


NAMED_ENCODINGS: dict[str, NamedEncoding] = {
    "gpt2": NamedEncoding(
        (SourceFile(f"{_BLOB}gpt-2/encodings/main/vocab.bpe",
                    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
         SourceFile(f"{_BLOB}gpt-2/encodings/main/encoder.json",
                    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783")),
        _R50K_PATTERN, {EOT: 50256}),
    "r50k_base": NamedEncoding(
        _tiktoken_file("r50k_base",
                       "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
        _R50K_PATTERN, {EOT: 50256}),
    "p50k_base": NamedEncoding(
        _tiktoken_file("p50k_base",
                       "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
        _R50K_PATTERN, {EOT: 50256}),
    "cl100k_base": NamedEncoding(
        _tiktoken_file("cl100k_base",
                       "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
        _CL100K_PATTERN, {EOT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                          "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    "o200k_base": NamedEncoding(
        _tiktoken_file("o200k_base",
                       "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
        _O200K_PATTERN, {EOT: 199999, "<|endofprompt|>": 200018}),
}


def search_dirs() -> list[Path]:
    """Folders searched for encoding files, in order."""
    dirs = []
    tiktoken_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if tiktoken_dir is None:
        tiktoken_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if tiktoken_dir:  # tiktoken treats "" as "no cache"
        dirs.append(Path(tiktoken_dir))
    dirs.append(cache_dir("tiktoken"))
    return dirs


def load_named_encoding(name: str) -> Tokenizer:
    """The tokenizer for tiktoken encoding ``name``, from local files only."""
    from .bpe import TiktokenTokenizer
    entry = NAMED_ENCODINGS.get(name)
    if entry is None:
        raise DataError(f"unknown tiktoken encoding {name!r}; available names: "
                        f"{', '.join(NAMED_ENCODINGS)}")
    found = {f: _find_verified(f) for f in entry.files}
    if any(data is None for data, _ in found.values()):
        raise DataError(_missing_message(name, found))
    contents = [data for data, _ in found.values()]
    ranks = _data_gym_ranks(*contents) if len(contents) == 2 else _tiktoken_ranks(contents[0])
    specials = dict(entry.specials)
    next_id = max([len(ranks) - 1, *specials.values()]) + 1
    for extra in SPECIAL_TOKENS:
        if extra not in specials:
            specials[extra] = next_id
            next_id += 1
    return TiktokenTokenizer(kind="tiktoken", name=f"tiktoken:{name}", pattern=entry.pattern,
                             ranks=ranks, specials=specials,
                             state={"encoding": name,
                                    "files_sha256": [f.sha256 for f in entry.files]})


def _find_verified(source: SourceFile) -> tuple[bytes | None, list[str]]:
    """(content, []) for the first local copy with the published sha256, else (None, paths of
    copies whose hash is wrong)."""
    mismatched = []
    for folder in search_dirs():
        for candidate in (folder / source.cache_key, folder / source.basename):
            if candidate.is_file():
                data = candidate.read_bytes()
                if hashlib.sha256(data).hexdigest() == source.sha256:
                    return data, []
                mismatched.append(str(candidate))
    return None, mismatched


def _missing_message(name: str, found: dict) -> str:
    home = cache_dir("tiktoken")
    problems, urls = [], []
    for source, (data, mismatched) in found.items():
        if data is not None:
            continue
        urls.append(source.url)
        problems.append(f"{source.basename} is not on this machine" if not mismatched else
                        f"{', '.join(mismatched)} is not the published {source.basename} "
                        f"(sha256 differs: partial or wrong file; delete it)")
    return (f"tiktoken encoding {name!r} is not available offline: {'; '.join(problems)}. "
            f"tfstudio never downloads. On a machine with internet, download {' and '.join(urls)} "
            f"and copy {'them' if len(urls) > 1 else 'it'} into {home}{os.sep} under the same "
            f"name; or run python -c \"import tiktoken; tiktoken.get_encoding('{name}')\" there "
            f"and copy tiktoken's cache folder here, pointing TIKTOKEN_CACHE_DIR at it. "
            f"Searched: {', '.join(str(d) for d in search_dirs())}.")


def _tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file: one "base64-token rank" pair per line."""
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _data_gym_ranks(vocab_bpe: bytes, encoder_json: bytes) -> dict[bytes, int]:
    """GPT-2's original files: a merge list plus an encoder in which each byte is written as a
    printable stand-in character (bytes that print as themselves keep their own character,
    the others are mapped to chr(256 + n) in byte order)."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    others = [b for b in range(256) if b not in printable]
    stand_in = {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}

    def to_bytes(word: str) -> bytes:
        return bytes(stand_in[c] for c in word)

    ranks = {bytes((b,)): rank for rank, b in enumerate(printable + others)}
    for line in vocab_bpe.decode("utf-8").split("\n")[1:-1]:  # first line: "#version: 0.2"
        first, second = line.split()
        ranks[to_bytes(first) + to_bytes(second)] = len(ranks)
    encoder = {to_bytes(k): v for k, v in json.loads(encoder_json).items()
               if k not in ("<|endoftext|>", "<|startoftext|>")}
    if encoder != ranks:
        raise DataError("gpt2's vocab.bpe and encoder.json do not agree; fetch both again")
    return ranks
