"""Byte-level and character-level tokenizers: no training, exact and easy to read in the GUI.

Byte level: ids 0..255 are the UTF-8 bytes, so any text round-trips and the vocabulary is
tiny (260 with the specials). Text is encoded with ``surrogatepass`` so even a lone surrogate
(not valid Unicode, but possible in a Python str) encodes instead of failing; it decodes as
U+FFFD.

Character level: one id per distinct character of the corpus, in code point order, then the
specials and ``<|unk|>``. A character the corpus never contained encodes as ``<|unk|>``, and
``<|unk|>`` decodes as U+FFFD, so text over the corpus alphabet round-trips exactly and any
other character comes back as U+FFFD (one per unknown character).
"""
from __future__ import annotations

import numpy as np

from .tokenizer import SPECIAL_TOKENS, UNK, Tokenizer, special_ids

REPLACEMENT = "\ufffd"


class ByteTokenizer(Tokenizer):
    kind = "byte"
    name = "byte"
    ordinary_vocab_size = 256

    def __init__(self) -> None:
        self.specials = special_ids(256)
        self._special_bytes = {i: n.encode() for n, i in self.specials.items()}

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8", "surrogatepass"))

    def encode_array(self, text: str) -> np.ndarray:
        return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8).astype(np.int64)

    def token_bytes(self, token_id: int) -> bytes:
        if 0 <= token_id < 256:
            return bytes((token_id,))
        self._check_id(token_id)
        return self._special_bytes[token_id]

    def _state(self) -> dict:
        return {}


class PieceTable(Tokenizer):
    """A tokenizer whose ordinary ids index a table of strings (``pieces``: characters,
    words), followed by the special tokens, ``<|unk|>`` decoding to U+FFFD."""

    pieces: list[str]

    def decode(self, ids) -> str:
        return "".join(self._piece(int(i)) for i in ids)

    def _piece(self, token_id: int) -> str:
        if 0 <= token_id < self.ordinary_vocab_size:
            return self.pieces[token_id]
        self._check_id(token_id)
        return REPLACEMENT if self._names[token_id] == UNK else self._names[token_id]

    def token_bytes(self, token_id: int) -> bytes:
        return self._piece(token_id).encode("utf-8", "surrogatepass")

    def token_strings(self, ids) -> list[str]:
        return [self._piece(int(i)) for i in ids]


class CharTokenizer(PieceTable):
    kind = "char"

    def __init__(self, alphabet: str) -> None:
        chars = sorted(set(alphabet))
        if not chars:
            raise ValueError("a character tokenizer needs at least one character")
        self.alphabet = "".join(chars)
        self.name = "char"
        self.ordinary_vocab_size = len(chars)
        self.specials = special_ids(len(chars), (*SPECIAL_TOKENS, UNK))
        self._codes = np.array([ord(c) for c in chars], dtype=np.int64)
        self._names = {i: n for n, i in self.specials.items()}

    @classmethod
    def from_corpus(cls, corpus) -> "CharTokenizer":
        """The alphabet of every character in ``corpus`` (read in chunks)."""
        seen: set[str] = set()
        for document in corpus.documents():
            for chunk in document:
                seen.update(chunk)
        if not seen:
            from .errors import DataError
            raise DataError(f"corpus {corpus.spec!r} has no characters to build a character "
                            f"tokenizer from")
        return cls("".join(seen))

    def encode(self, text: str) -> list[int]:
        return self.encode_array(text).tolist()

    def encode_array(self, text: str) -> np.ndarray:
        # vectorised lookup: code points -> position in the sorted alphabet, else <|unk|>
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(
            np.int64)
        pos = np.searchsorted(self._codes, codes)
        pos_clipped = np.minimum(pos, len(self._codes) - 1)
        known = self._codes[pos_clipped] == codes
        return np.where(known, pos_clipped, self.specials[UNK])

    @property
    def pieces(self) -> list[str]:
        return self.alphabet

    def _state(self) -> dict:
        return {"alphabet": self.alphabet}
