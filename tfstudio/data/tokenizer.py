"""The tokenizer interface every kind shares, and the one factory that makes them.

``build_tokenizer(spec, corpus)`` takes a spec string:

========================  =====================================================================
``"byte"``                UTF-8 bytes (256 ids) then the special tokens; needs no corpus.
``"char"``                one id per character seen in the corpus, then specials and ``<|unk|>``.
``"bpe:1024"``            byte-level BPE with at most that many ids (specials included; a small
                          corpus may run out of merges), trained on the corpus with rustbpe,
                          run by tiktoken, cached on disk.
``"tiktoken:gpt2"``       a named tiktoken encoding (gpt2, r50k_base, p50k_base, cl100k_base,
                          o200k_base) read from local files only; never downloads.
========================  =====================================================================

Every tokenizer has the same ids layout: ordinary tokens are ``0 .. ordinary_vocab_size - 1``
and the special tokens come after them. ``encode`` never produces a special id (text that
happens to contain "<|endoftext|>" is encoded as ordinary text); the data layer adds specials
itself: ``eot_id`` ends each document, ``pad_id`` fills ragged batches, ``mask_id`` is the
masked-LM mask, ``bos_id`` starts a seq2seq decoder. Decoding a special id yields its name.

``to_dict()`` holds everything needed to decode exactly as training did (a BPE tokenizer
carries its full merge table), so ``save(run_dir)`` / ``load_tokenizer(run_dir)`` reproduce a
run's tokenizer without the corpus or the cache.
"""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import DataError

EOT, PAD, MASK, BOS, UNK = "<|endoftext|>", "<|pad|>", "<|mask|>", "<|bos|>", "<|unk|>"
SPECIAL_TOKENS = (EOT, PAD, MASK, BOS)
TOKENIZER_FILE = "tokenizer.json"
FORMAT_VERSION = 1
KINDS = ("byte", "char", "bpe", "tiktoken")


class Tokenizer(ABC):
    """Text <-> ids. Subclasses set ``name``, ``kind``, ``ordinary_vocab_size`` and ``specials``."""

    kind: str
    name: str
    ordinary_vocab_size: int
    specials: dict[str, int]

    # -- ids -------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Rows the embedding table needs: one past the largest id."""
        return max([self.ordinary_vocab_size - 1, *self.specials.values()]) + 1

    @property
    def eot_id(self) -> int:
        return self.specials[EOT]

    @property
    def pad_id(self) -> int:
        return self.specials[PAD]

    @property
    def mask_id(self) -> int:
        return self.specials[MASK]

    @property
    def bos_id(self) -> int:
        return self.specials[BOS]

    @property
    def unk_id(self) -> int | None:
        return self.specials.get(UNK)

    # -- text ------------------------------------------------------------------------------
    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Ordinary token ids for ``text`` (never a special id)."""

    def encode_array(self, text: str) -> np.ndarray:
        """``encode`` as an int64 array; kinds override it when they can skip the Python list."""
        return np.asarray(self.encode(text), dtype=np.int64)

    @abstractmethod
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes one id stands for (a special id gives its name in UTF-8)."""

    def decode(self, ids: Iterable[int]) -> str:
        """Text for ``ids``; byte sequences that are not valid UTF-8 become U+FFFD."""
        return b"".join(self.token_bytes(int(i)) for i in ids).decode("utf-8", "replace")

    def token_strings(self, ids: Iterable[int]) -> list[str]:
        """One display string per id, for coloured previews. A token holding part of a
        multi-byte character shows its bytes escaped (``\\xe6\\x97``) rather than a wrong glyph."""
        return [self.token_bytes(int(i)).decode("utf-8", "backslashreplace") for i in ids]

    def _check_id(self, token_id: int) -> None:
        if not 0 <= token_id < self.vocab_size:
            raise DataError(f"token id {token_id} is outside this tokenizer's vocabulary "
                            f"(0..{self.vocab_size - 1}, {self.name}); the ids come from a "
                            f"different tokenizer or model")

    # -- persistence ---------------------------------------------------------------------
    @abstractmethod
    def _state(self) -> dict[str, Any]:
        """Kind-specific fields of ``to_dict``."""

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": FORMAT_VERSION, "kind": self.kind, "name": self.name,
                "specials": dict(self.specials), **self._state()}

    @property
    def fingerprint(self) -> str:
        """sha256 of the canonical ``to_dict`` JSON: equal fingerprints tokenize identically."""
        cached = getattr(self, "_fingerprint", None)
        if cached is None:
            blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=True).encode()
            cached = self._fingerprint = hashlib.sha256(blob).hexdigest()
        return cached

    def save(self, path: str | Path) -> Path:
        """Write ``tokenizer.json`` into a run folder (or to ``path`` if it ends in .json)."""
        from .paths import atomic_write_bytes
        path = Path(path)
        target = path if path.suffix == ".json" else path / TOKENIZER_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, json.dumps(self.to_dict(), ensure_ascii=True).encode())
        return target

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} vocab={self.vocab_size}>"


def special_ids(start: int, names: Sequence[str] = SPECIAL_TOKENS) -> dict[str, int]:
    return {name: start + i for i, name in enumerate(names)}


# -- factory ------------------------------------------------------------------------------------
SPEC_HELP = ('"byte", "char", "bpe:<vocab size>" (e.g. "bpe:1024") or "tiktoken:<name>" '
             '(gpt2, r50k_base, p50k_base, cl100k_base, o200k_base)')


def build_tokenizer(spec: str, corpus=None, **options) -> Tokenizer:
    """Make the tokenizer ``spec`` names; ``corpus`` is needed by "char" and "bpe:N".

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
    if kind == "bpe":
        try:
            vocab_size = int(arg)
        except ValueError:
            raise DataError(f"tokenizer {spec!r}: the BPE vocabulary size must be an integer, "
                            f'e.g. "bpe:1024"') from None
        from .bpe import train_bpe
        return train_bpe(_need_corpus(spec, corpus), vocab_size, **options)
    if kind == "tiktoken" and arg:
        from .named_encodings import load_named_encoding
        return load_named_encoding(arg)
    raise DataError(f"unknown tokenizer {spec!r}; use {SPEC_HELP}")


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
