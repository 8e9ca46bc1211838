"""tfstudio tokenizers <-> Hugging Face ``tokenizer.json`` (the ``tokenizers`` library format
that ``PreTrainedTokenizerFast`` loads).

Export (needs the ``tokenizers`` package, which transformers brings):

- byte: a byte-level BPE with the 256 byte symbols as ids 0..255 and no merges;
- bpe:N and tiktoken:NAME: a byte-level BPE whose vocabulary is the tiktoken ranks (id = rank)
  and whose merges are recovered from the ranks (each token's merge is the split that BPE,
  using only lower ranks, arrives at), with the same split regex;
- char: a word-level model over single characters, ``<|unk|>`` for the rest.

Special tokens keep their ids. One difference is inherent to HF: text that literally contains a
special token's name ("<|endoftext|>") encodes as that special token there, while tfstudio's
``encode`` never produces specials.

Import: the exact tfstudio tokenizer when the folder came from tfstudio
(``tfstudio_tokenizer.json``); otherwise a byte-level BPE ``tokenizer.json`` (GPT-2 style) whose
merges agree with its id order becomes a tfstudio "bpe" tokenizer. SentencePiece-style
tokenizers (LLaMA, Mistral: Metaspace with byte fallback) and WordPiece (BERT) have no tfstudio
counterpart and are reported as such.

A tokenizer of the user's choice (``import-hf --tokenizer byte``): ``read_vocabulary`` finds
which checkpoint row holds which token (byte-level symbols, or SentencePiece byte fallback
``<0x41>``) and ``rows_for`` picks, for each id of the chosen tokenizer, the row of the same
token, or says which token has none.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..data.tokenizer import BOS, EOT, MASK, PAD, SPECIAL_TOKENS, UNK
from .errors import InteropError
from .folder_files import NotInside, parse_json, read_bytes_inside, read_json_inside

SIDECAR = "tfstudio_tokenizer.json"
# GPT-2's pre-tokenizer regex (what ByteLevel(use_regex=True) applies)
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WHOLE_TEXT = r"[\s\S]+"  # no pre-split


@lru_cache(maxsize=1)
def byte_symbols() -> dict[int, str]:
    """GPT-2's printable stand-in character for each byte (as ``tokenizers`` ByteLevel uses)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    symbols, extra = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return symbols


def _to_symbols(data: bytes) -> str:
    table = byte_symbols()
    return "".join(table[b] for b in data)


def _from_symbols(text: str) -> bytes:
    reverse = {c: b for b, c in byte_symbols().items()}
    return bytes(reverse[c] for c in text)


# ================================================================================ export
def export_files(tokenizer, out_dir: Path, model_max_length: int) -> tuple[list[str], str]:
    """Write ``tokenizer.json`` + ``tokenizer_config.json`` (when possible) and the exact
    ``tfstudio_tokenizer.json``; returns (files written, a sentence on what was exported)."""
    files = [SIDECAR]
    (out_dir / SIDECAR).write_text(json.dumps(tokenizer.to_dict()), encoding="utf-8")
    try:
        hf = build_hf_tokenizer(tokenizer)
    except ImportError:
        return files, (f"tokenizer: only {SIDECAR} (tfstudio's own format); install the "
                       "'tokenizers' package to write an HF tokenizer.json as well")
    hf.save(str(out_dir / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast",
              "model_max_length": int(model_max_length), "clean_up_tokenization_spaces": False}
    roles = {"eos_token": EOT, "bos_token": BOS, "pad_token": PAD, "mask_token": MASK,
             "unk_token": UNK}
    config.update({role: name for role, name in roles.items() if name in tokenizer.specials})
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2), "utf-8")
    files += ["tokenizer.json", "tokenizer_config.json"]
    return files, (f"tokenizer: {tokenizer.name} as tokenizer.json (PreTrainedTokenizerFast, "
                   f"{tokenizer.vocab_size} ids, same ids as tfstudio)")


def build_hf_tokenizer(tokenizer):
    """A ``tokenizers.Tokenizer`` that gives the same ids as ``tokenizer`` on ordinary text."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    specials = dict(tokenizer.specials)
    if tokenizer.kind == "char":
        vocab = {ch: i for i, ch in enumerate(tokenizer.alphabet)} | specials
        hf = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
        hf.decoder = decoders.Fuse()
    elif tokenizer.kind == "word":   # the same pieces, each looked up whole
        from ..data.word_tokenizer import PIECES
        vocab = {w: i for i, w in enumerate(tokenizer.words)} | specials
        hf = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Split(Regex(PIECES.pattern), behavior="isolated")
        hf.decoder = decoders.Fuse()
    else:
        ranks = _ranks(tokenizer)
        vocab = {_to_symbols(token): rank for token, rank in ranks.items()}
        merges = [(_to_symbols(a), _to_symbols(b)) for a, b in merges_from_ranks(ranks)]
        vocab.update(specials)
        hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
        byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        pattern = _pattern(tokenizer)
        hf.pre_tokenizer = byte_level if pattern is None else pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(pattern), behavior="isolated"), byte_level])
        hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(name, special=True, normalized=False)
                           for name in sorted(specials, key=specials.get)])
    return hf


def _ranks(tokenizer) -> dict[bytes, int]:
    if tokenizer.kind == "byte":
        return {bytes((b,)): b for b in range(256)}
    return {tokenizer.encoding.decode_single_token_bytes(i): i
            for i in range(tokenizer.ordinary_vocab_size)}


def _pattern(tokenizer) -> str | None:
    state = tokenizer.to_dict()
    if tokenizer.kind == "bpe":
        return state["pattern"]
    if tokenizer.kind == "tiktoken":
        from ..data.named_encodings import NAMED_ENCODINGS
        return NAMED_ENCODINGS[state["encoding"]].pattern
    return None  # byte: no pre-split needed, every byte is its own token


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list that reproduces tiktoken's rank-ordered BPE: for each multi-byte token,
    in rank order, the two parts BPE reaches using only lower-ranked merges."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = _bpe(ranks, token, rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not a merge of two lower-ranked "
                             "tokens; this vocabulary is not a BPE merge table")
        merges.append((parts[0], parts[1]))
    return merges


def _bpe(ranks: dict[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    parts = [bytes((b,)) for b in token]
    while len(parts) > 1:
        best, best_rank = None, max_rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_rank:
                best, best_rank = i, r
        if best is None:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


# ================================================================================ import
def import_tokenizer(folder: Path) -> tuple[Any | None, str]:
    """(a tfstudio tokenizer or None, a sentence saying which and why)."""
    from ..data import DataError, tokenizer_from_dict
    from ..data.bpe import bpe_from_state

    sidecar = folder / SIDECAR
    if os.path.lexists(sidecar):
        try:
            tok = tokenizer_from_dict(read_json_inside(folder, SIDECAR, _RECOPY), str(sidecar))
        except (DataError, ValueError) as exc:
            if isinstance(exc, NotInside):
                raise
            return None, f"tokenizer: {SIDECAR} could not be read ({exc})"
        return tok, f"tokenizer: {tok.name}, restored exactly from {SIDECAR}"
    path = folder / "tokenizer.json"
    if not os.path.lexists(path):
        return None, ("tokenizer: the folder has no tokenizer.json, so the run has none "
                      "(import-hf --tokenizer byte gives it one, where the vocabulary allows)")
    raw = read_bytes_inside(folder, "tokenizer.json", _RECOPY)
    try:
        state, added = _bpe_state(parse_json(raw, path, _RECOPY))
    except _Unrepresentable as exc:
        return None, f"tokenizer: not carried, {exc}"
    state["corpus_fingerprint"] = hashlib.sha256(raw).hexdigest()
    state["name"] = f"hf:{folder.name}"
    try:
        tok = bpe_from_state(state)
    except (DataError, ValueError) as exc:
        return None, f"tokenizer: not carried, {exc}"
    extra = (f"; tfstudio's {', '.join(added)} added as ids "
             f"{', '.join(str(tok.specials[n]) for n in added)}" if added else "")
    return tok, (f"tokenizer: byte-level BPE from tokenizer.json ({tok.ordinary_vocab_size} "
                 f"ordinary tokens, same ids{extra})")


class _Unrepresentable(ValueError):
    pass


_RECOPY = "copy the model's tokenizer files into the folder again"


def _bpe_state(data: dict) -> tuple[dict, list[str]]:
    """A tfstudio "bpe" tokenizer state for a byte-level BPE tokenizer.json (and the tfstudio
    special tokens it had to add), or raise saying why it has no tfstudio counterpart."""
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise _Unrepresentable(f"its {model.get('type', 'unknown')} model is not byte-level BPE "
                               "(WordPiece, Unigram and SentencePiece tokenizers have no "
                               "tfstudio counterpart)")
    if data.get("normalizer"):
        raise _Unrepresentable("it normalises text first, which tfstudio's tokenizers never do")
    pattern = _hf_split_pattern(data.get("pre_tokenizer"))
    added = data.get("added_tokens") or []
    if any(not t.get("special") for t in added):
        raise _Unrepresentable("it has non-special added tokens, which tiktoken cannot match")
    special_names = {t["content"]: int(t["id"]) for t in added}
    ordinary = {tok: i for tok, i in model["vocab"].items() if tok not in special_names}
    order = sorted(ordinary.items(), key=lambda item: item[1])
    if [i for _, i in order] != list(range(len(order))):
        raise _Unrepresentable("its ordinary tokens do not take ids 0..n-1 (tfstudio "
                               "numbers special tokens after them)")
    try:
        ranks = {_from_symbols(tok): i for tok, i in order}
    except KeyError:
        raise _Unrepresentable("its vocabulary is not written in byte-level symbols") from None
    if any(bytes((b,)) not in ranks for b in range(256)):
        raise _Unrepresentable("it lacks some of the 256 single-byte tokens")
    _check_merges(model.get("merges") or [], ranks)
    specials, added = dict(special_names), []
    next_id = max([len(ranks) - 1, *specials.values()]) + 1
    for name in SPECIAL_TOKENS:
        if name not in specials:
            specials[name] = next_id
            added.append(name)
            next_id += 1
    ranked = sorted(ranks.items(), key=lambda item: item[1])
    return {"format_version": 1, "kind": "bpe", "name": "hf", "pattern": pattern,
            "ranks": [base64.b64encode(tok).decode("ascii") for tok, _ in ranked],
            "specials": specials, "trainer": "imported from a Hugging Face tokenizer.json",
            "corpus_fingerprint": ""}, added


def _hf_split_pattern(pre) -> str:
    """The split regex of a byte-level pre-tokenizer, or raise."""
    steps = pre.get("pretokenizers", []) if pre and pre.get("type") == "Sequence" else [pre]
    steps = [s for s in steps if s]
    if not steps or steps[-1].get("type") != "ByteLevel":
        raise _Unrepresentable("its pre-tokenizer is not byte-level")
    byte_level = steps[-1]
    if byte_level.get("add_prefix_space"):
        raise _Unrepresentable("it adds a prefix space, which tfstudio's tokenizers never do")
    if len(steps) == 1:  # GPT-2's own regex, or none: the whole text is one piece
        return GPT2_PATTERN if byte_level.get("use_regex", True) else WHOLE_TEXT
    if len(steps) == 2 and steps[0].get("type") == "Split" and not byte_level.get("use_regex"):
        split = steps[0]
        regex = (split.get("pattern") or {}).get("Regex")
        if regex and split.get("behavior") == "Isolated" and not split.get("invert"):
            return regex
    raise _Unrepresentable("its pre-tokenizer chain has no tiktoken counterpart")


def _check_merges(merges: list, ranks: dict[bytes, int]) -> None:
    """tiktoken merges by the rank of the result; HF by the merge's position. They agree when
    every multi-byte token is made by exactly one merge and merges come in rank order."""
    made, last = set(), -1
    for merge in merges:
        a, b = merge.split(" ") if isinstance(merge, str) else merge
        token = _from_symbols(a) + _from_symbols(b)
        rank = ranks.get(token)
        if rank is None or rank <= last:
            raise _Unrepresentable("its merges are not in the order of its token ids")
        made.add(token)
        last = rank
    if any(len(tok) > 1 and tok not in made for tok in ranks):
        raise _Unrepresentable("some multi-byte tokens are made by no merge")


# ================================================================ a tokenizer of your choice
# Specs that need no corpus; "char" and "bpe:N" are learned from text, and a checkpoint's rows
# can only be reused for tokens it already has.
NO_CORPUS_SPECS = "'byte' or 'tiktoken:NAME'"
_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
# the HF config field that names each tfstudio special's counterpart, when it has no named token
_CONFIG_ROLES = {EOT: "eos_token_id", BOS: "bos_token_id", PAD: "pad_token_id"}


def tokenizer_for_import(spec: str):
    """The tokenizer ``import-hf --tokenizer SPEC`` names, or an InteropError saying why not."""
    from ..data import DataError, build_tokenizer
    from ..data.tokenizer_factory import learned_from_corpus

    kind = spec.strip().partition(":")[0].lower()
    if learned_from_corpus(spec):
        raise InteropError(f"--tokenizer {spec}: a {kind} tokenizer is learned from a corpus, "
                           "and the checkpoint has no rows for its ids; use --tokenizer "
                           f"{NO_CORPUS_SPECS}")
    if kind not in ("byte", "tiktoken"):
        raise InteropError(f"--tokenizer {spec!r} is not a tokenizer import-hf can attach; use "
                           f"{NO_CORPUS_SPECS} (or leave it out to keep the folder's own)")
    try:
        return build_tokenizer(spec, None)
    except DataError as exc:
        raise InteropError(f"--tokenizer {spec}: {exc}") from None


@dataclass
class Vocabulary:
    """What a checkpoint's embedding rows stand for: ordinary tokens by their bytes, specials by
    name, and where that knowledge came from (for notes and refusals)."""

    tokens: dict[bytes, int]
    specials: dict[str, int]
    source: str


def read_vocabulary(folder: Path, family: str, rows: int) -> Vocabulary:
    """The token of each of the checkpoint's ``rows`` rows, from the folder's tokenizer files
    (tfstudio's sidecar, tokenizer.json, or GPT-2's vocab.json); a GPT-2 folder without any uses
    GPT-2's own layout, whose ids 0..255 are the bytes in ``byte_symbols`` order."""
    tok = _sidecar(folder)
    if tok is not None:
        tokens = {tok.token_bytes(i): i for i in range(min(tok.ordinary_vocab_size, rows))}
        return Vocabulary(tokens, _below(tok.specials, rows), SIDECAR)
    for name in ("tokenizer.json", "vocab.json"):
        if os.path.lexists(folder / name):
            data = read_json_inside(folder, name, f"copy the model's {name} again")
            return _vocabulary_of(data if name == "tokenizer.json" else
                                  {"model": {"vocab": data}, "decoder": "ByteLevel"}, rows, name)
    if family == "gpt2" and rows >= 256:
        order = sorted(byte_symbols().items(), key=lambda item: item[1])
        tokens = {bytes((b,)): i for i, (b, _) in enumerate(order)}
        specials = {EOT: 50256} if rows == 50257 else {}
        return Vocabulary(tokens, specials, "the folder has no tokenizer files, so GPT-2's own "
                                            "layout: ids 0..255 are its byte tokens")
    raise InteropError(f"{folder} has no tokenizer.json or vocab.json, so which row stands for "
                       f"which byte is unknown; copy the model's tokenizer.json into {folder} "
                       "and import again")


def _sidecar(folder: Path):
    from ..data import DataError, tokenizer_from_dict
    path = folder / SIDECAR
    if not os.path.lexists(path):
        return None
    data = read_json_inside(folder, SIDECAR, "export the run again")
    try:
        return tokenizer_from_dict(data, str(path))
    except DataError as exc:
        raise InteropError(f"{path}: cannot be read ({exc}); export the run again") from None


def _below(ids: dict[str, int], rows: int) -> dict[str, int]:
    return {name: i for name, i in ids.items() if isinstance(i, int) and 0 <= i < rows}


def _vocabulary_of(data: dict, rows: int, source: str) -> Vocabulary:
    """Tokens by their bytes: byte-level symbols (GPT-2, Qwen2) or SentencePiece's byte
    fallback pieces ``<0x41>`` (LLaMA, Mistral); other vocabularies have no bytes to offer."""
    vocab = (data.get("model") or {}).get("vocab") or {}
    if isinstance(vocab, list):  # Unigram: [piece, score] pairs, id = position
        vocab = {entry[0]: i for i, entry in enumerate(vocab) if entry}
    specials = _below({t.get("content"): t.get("id") for t in data.get("added_tokens") or []},
                      rows)
    pieces = {piece: i for piece, i in vocab.items()
              if isinstance(i, int) and 0 <= i < rows and piece not in specials}
    specials.update({name: pieces.pop(name) for name in SPECIAL_TOKENS if name in pieces})
    fallback = {bytes((int(m.group(1), 16),)): i for piece, i in pieces.items()
                if (m := _BYTE_FALLBACK.match(piece))}
    if len(fallback) == 256:
        return Vocabulary(fallback, specials, f"{source}, byte-fallback pieces <0x00>..<0xFF>")
    if "ByteLevel" not in json.dumps([data.get("pre_tokenizer"), data.get("decoder")]):
        return Vocabulary({}, specials, f"{source}, which is not byte-level")
    tokens = {}
    for piece, i in pieces.items():
        try:
            tokens.setdefault(_from_symbols(piece), i)
        except KeyError:
            continue  # not written in byte-level symbols: no bytes of its own
    return Vocabulary(tokens, specials, f"{source}, byte-level")


def rows_for(tokenizer, vocab: Vocabulary, n_rows: int, hf_config, spec: str) -> list[int | None]:
    """For each id of ``tokenizer``, the checkpoint row holding the same token; a special with
    no counterpart (by name, or by the HF config's eos/bos/pad id) gets None, to start at the
    mean row. Raises when an ordinary token has no row."""
    rows: list[int | None] = []
    for i in range(tokenizer.ordinary_vocab_size):
        data = tokenizer.token_bytes(i)
        if data not in vocab.tokens:
            what = f"byte 0x{data[0]:02x}" if len(data) == 1 else f"token {data!r}"
            raise InteropError(
                f"--tokenizer {spec}: the checkpoint's vocabulary ({vocab.source}) has no token "
                f"for {what}, so its weights cannot read {spec} ids; leave --tokenizer out, or "
                "use a checkpoint whose vocabulary has a token per byte (byte-level BPE such "
                "as GPT-2's, or SentencePiece byte fallback)")
        rows.append(vocab.tokens[data])
    names = {i: name for name, i in tokenizer.specials.items()}
    for i in range(tokenizer.ordinary_vocab_size, tokenizer.vocab_size):
        name = names.get(i)
        row = vocab.specials.get(name, hf_config.get(_CONFIG_ROLES.get(name, "")))
        rows.append(row if isinstance(row, int) and 0 <= row < n_rows else None)
    return rows
