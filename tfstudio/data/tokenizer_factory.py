"""The one factory that makes tokenizers, from a spec string or from a saved one.

``build_tokenizer(spec, corpus)`` takes a spec string:

========================  =====================================================================
``"byte"``                UTF-8 bytes (256 ids) then the special tokens; needs no corpus.
``"char"``                one id per character seen in the corpus, then specials and ``<|unk|>``.
``"word:2000"``           the 2,000 commonest words of the corpus (" cat", with its space), then
                          specials and ``<|unk|>`` (``word_tokenizer.py``).
``"bpe:1024"``            byte-level BPE with at most that many ids (specials included; a small
                          corpus may run out of merges), trained on the corpus with rustbpe,
                          run by tiktoken, cached on disk.
``"tiktoken:gpt2"``       a named tiktoken encoding (gpt2, r50k_base, p50k_base, cl100k_base,
                          o200k_base) read from local files only; never downloads.
========================  =====================================================================

``tokenizer_from_dict`` / ``load_tokenizer`` rebuild one saved by ``Tokenizer.save``. Each kind's
module is imported only when that kind is asked for (BPE pulls in rustbpe and tiktoken).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DataError
from .tokenizer import FORMAT_VERSION, KINDS, TOKENIZER_FILE, Tokenizer

SPEC_HELP = ('"byte", "char", "word:<vocab size>" (e.g. "word:2000"), "bpe:<vocab size>" '
             '(e.g. "bpe:1024") or "tiktoken:<name>" (gpt2, r50k_base, p50k_base, cl100k_base, '
             'o200k_base)')


LEARNED_KINDS = ("char", "word", "bpe")   # their ids are learned from a corpus


def learned_from_corpus(spec: str) -> bool:
    """Whether the tokenizer ``spec`` names is learned from a corpus (so building it needs
    one, and a checkpoint made without it has no rows for its ids)."""
    return spec.strip().partition(":")[0].lower() in LEARNED_KINDS


def build_tokenizer(spec: str, corpus=None, **options) -> Tokenizer:
    """Make the tokenizer ``spec`` names; ``corpus`` is needed by "char", "word:N" and
    "bpe:N".

    ``options`` go to the BPE trainer (``max_train_chars``, ``use_cache``).
    """
    kind, _, arg = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "byte" and not arg:
        from .simple_tokenizers import ByteTokenizer
        return ByteTokenizer()
    if kind == "char" and not arg:
        from .simple_tokenizers import CharTokenizer
        return CharTokenizer.from_corpus(_need_corpus(spec, corpus))
    if kind == "word":
        size = _vocabulary_size(spec, arg, "word", "word:2000")
        from .word_tokenizer import WordTokenizer
        return WordTokenizer.from_corpus(_need_corpus(spec, corpus), size)
    if kind == "bpe":
        size = _vocabulary_size(spec, arg, "BPE", "bpe:1024")
        from .bpe import train_bpe
        return train_bpe(_need_corpus(spec, corpus), size, **options)
    if kind == "tiktoken" and arg:
        from .named_encodings import load_named_encoding
        return load_named_encoding(arg)
    raise DataError(f"unknown tokenizer {spec!r}; use {SPEC_HELP}")


def _vocabulary_size(spec: str, arg: str, what: str, example: str) -> int:
    try:
        return int(arg)
    except ValueError:
        raise DataError(f"tokenizer {spec!r}: the {what} vocabulary size must be an integer, "
                        f'e.g. "{example}"') from None


def _need_corpus(spec: str, corpus):
    if corpus is None:
        raise DataError(f"tokenizer {spec!r} is built from a corpus; pass one "
                        f"(build_tokenizer(spec, load_corpus(...))) or use \"byte\"")
    return corpus


def tokenizer_from_dict(data: Any, source: str = "tokenizer") -> Tokenizer:
    """Rebuild a tokenizer from ``to_dict`` output (as saved in a run folder)."""
    if not isinstance(data, dict):
        raise DataError(f"{source}: expected a JSON object describing a tokenizer")
    if data.get("format_version") != FORMAT_VERSION:
        raise DataError(f"{source}: tokenizer format_version {data.get('format_version')!r} is "
                        f"not supported (this tfstudio reads {FORMAT_VERSION})")
    kind = data.get("kind")
    tokenizer = _rebuilt(data, kind, source)
    saved = data.get("specials", tokenizer.specials)
    if saved != tokenizer.specials:  # the ids a model learned its special tokens under
        shown = repr(saved) if len(repr(saved)) <= 80 else repr(saved)[:77] + "..."
        raise DataError(f"{source}: its special tokens {shown} are not the ones this {kind} "
                        f"tokenizer assigns ({tokenizer.specials}); the file was changed: "
                        "restore it from a copy of the run")
    return tokenizer


def _rebuilt(data: dict, kind: Any, source: str) -> Tokenizer:
    try:
        if kind == "byte":
            from .simple_tokenizers import ByteTokenizer
            return ByteTokenizer()
        if kind == "char":
            from .simple_tokenizers import CharTokenizer
            return CharTokenizer(data["alphabet"])
        if kind == "word":
            from .word_tokenizer import WordTokenizer
            return WordTokenizer(list(data["words"]))
        if kind == "bpe":
            from .bpe import bpe_from_state
            return bpe_from_state(data)
        if kind == "tiktoken":
            from .named_encodings import load_named_encoding
            return load_named_encoding(data["encoding"])
    except DataError as exc:
        if str(exc).startswith(source):
            raise
        raise DataError(f"{source}: {exc}") from None  # name the file the fault is in
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{source}: malformed {kind} tokenizer ({exc!r}); save it again from "
                        f"the run that made it") from exc
    raise DataError(f"{source}: unknown tokenizer kind {kind!r}; expected one of {KINDS}")


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Read a tokenizer saved with ``Tokenizer.save`` (a run folder or the .json file)."""
    path = Path(path)
    target = path / TOKENIZER_FILE if path.is_dir() else path
    try:
        data = json.loads(target.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DataError(f"{target}: no tokenizer saved here; was the run trained by tfstudio?") \
            from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{target}: not UTF-8 text (byte {exc.start}: {exc.reason}); the file "
                        "is damaged") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{target}: not valid JSON ({exc}); the file is damaged") from None
    return tokenizer_from_dict(data, str(target))
