"""Word-level tokenizer: one id per word of the corpus, as word2vec and the early neural LMs had.

Text is cut into pieces the way GPT-2 pre-tokenizes: a word with the space before it (" cat"),
a run of punctuation with its space, or a run of whitespace. The ``size`` commonest pieces of
the corpus get ids, most common first (ties by the piece), then the specials and ``<|unk|>``;
any other piece encodes as ``<|unk|>`` and decodes as U+FFFD. So the same word in any sentence
is one id, and so one row of the embedding table: a static vector. " cat" and "Cat" are
different words, as they are to GPT-2.
"""
from __future__ import annotations

import re
from collections import Counter

from .simple_tokenizers import PieceTable
from .tokenizer import SPECIAL_TOKENS, UNK, special_ids

PIECES = re.compile(r" ?\w+| ?[^\w\s]+|\s+(?!\S)|\s+")


def pieces(text: str) -> list[str]:
    """``text`` cut into words, punctuation runs and whitespace runs (joined, they are it)."""
    return PIECES.findall(text)


class WordTokenizer(PieceTable):
    kind = "word"

    def __init__(self, words: list[str]) -> None:
        if not words:
            raise ValueError("a word tokenizer needs at least one word")
        if len(set(words)) != len(words):
            raise ValueError("a word tokenizer's words must be distinct")
        self.words = list(words)
        self.name = f"word:{len(words)}"
        self.ordinary_vocab_size = len(words)
        self.specials = special_ids(len(words), (*SPECIAL_TOKENS, UNK))
        self._ids = {w: i for i, w in enumerate(words)}
        self._names = {i: n for n, i in self.specials.items()}

    @classmethod
    def from_corpus(cls, corpus, size: int) -> "WordTokenizer":
        """The ``size`` commonest pieces of ``corpus`` (read document by document)."""
        from .errors import DataError
        if size < 1:
            raise DataError(f"tokenizer 'word:{size}': the vocabulary size must be at least 1, "
                            'e.g. "word:2000"')
        from .chunking import rechunk
        from .token_cache import ENCODE_CHARS

        counts: Counter[str] = Counter()
        for document in corpus.documents():   # cut as training's encoding cuts it
            for piece in rechunk(document, ENCODE_CHARS):
                counts.update(pieces(piece))
        if not counts:
            raise DataError(f"corpus {corpus.spec!r} has no words to build a word tokenizer "
                            "from")
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
        return cls([w for w, _ in ranked])

    def encode(self, text: str) -> list[int]:
        unk = self.specials[UNK]
        return [self._ids.get(p, unk) for p in pieces(text)]

    @property
    def pieces(self) -> list[str]:
        return self.words

    def _state(self) -> dict:
        return {"words": self.words}
