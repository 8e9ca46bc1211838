"""The tokenizer interface every kind shares (``tokenizer_factory.py`` makes them).

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
KINDS = ("byte", "char", "word", "bpe", "tiktoken")


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
