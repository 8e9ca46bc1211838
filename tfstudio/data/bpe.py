"""Byte-level BPE: merges learned with rustbpe, text encoded by tiktoken.

rustbpe (the trainer nanochat uses) learns a GPT-4-style merge table from the corpus; tiktoken
then runs that table, fast, as an ``Encoding``. Ids 0..255 are single bytes, the merges follow
in the order they were learned, then the special tokens. The requested vocabulary size counts
the specials; a corpus too small to supply that many merges yields fewer (``vocab_size`` tells
the truth).

Trained tables are cached as JSON in ``<cache>/bpe/`` under a key made of the corpus content
fingerprint, the vocabulary size, the training-text cap and the rustbpe version, so choosing
the same corpus and size again costs a file read instead of a training run.
"""
from __future__ import annotations

import base64
import json
from importlib import metadata
from typing import Any, Iterator

import numpy as np
import rustbpe
import tiktoken

from .chunking import rechunk
from .errors import DataError
from .paths import atomic_write_bytes, cache_dir
from .tokenizer import SPECIAL_TOKENS, Tokenizer, special_ids

# GPT-4's split pattern (rustbpe's default), written out so a saved tokenizer never depends on
# a library default that might change.
SPLIT_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}|"""
                 r""" ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+""")
MIN_VOCAB = 256 + len(SPECIAL_TOKENS)
MAX_VOCAB = 1 << 20
MAX_TRAIN_CHARS = 50_000_000  # train on at most this much text; enough for any vocab we offer
TRAIN_PIECE_CHARS = 1 << 16   # rustbpe holds `buffer_size` pieces at once: keep them small
TRAIN_BUFFER = 256


class TiktokenTokenizer(Tokenizer):
    """A tiktoken ``Encoding`` behind the common interface (BPE and named encodings)."""

    def __init__(self, *, kind: str, name: str, pattern: str, ranks: dict[bytes, int],
                 specials: dict[str, int], state: dict[str, Any]) -> None:
        self.kind, self.name = kind, name
        self.ordinary_vocab_size = len(ranks)
        self.specials = dict(specials)
        self._state_fields = state
        self.encoding = tiktoken.Encoding(name=name.replace(":", "-"), pat_str=pattern,
                                          mergeable_ranks=ranks, special_tokens=specials)

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(text)

    def encode_array(self, text: str) -> np.ndarray:
        return np.asarray(self.encoding.encode_ordinary(text), dtype=np.int64)

    def decode(self, ids) -> str:
        ids = [int(i) for i in ids]
        try:
            return self.encoding.decode(ids, errors="replace")
        except (KeyError, ValueError, OverflowError):
            for i in ids:
                self.token_bytes(i)  # raises the explanatory error for the bad id
            raise

    def token_bytes(self, token_id: int) -> bytes:
        self._check_id(token_id)
        try:
            return self.encoding.decode_single_token_bytes(token_id)
        except KeyError:
            raise DataError(f"token id {token_id} is not assigned in {self.name}") from None

    def _state(self) -> dict[str, Any]:
        return dict(self._state_fields)


def train_bpe(corpus, vocab_size: int, *, max_train_chars: int = MAX_TRAIN_CHARS,
              use_cache: bool = True) -> TiktokenTokenizer:
    """A BPE tokenizer of ``vocab_size`` ids (specials included) trained on ``corpus``."""
    if not MIN_VOCAB <= vocab_size <= MAX_VOCAB:
        raise DataError(f"BPE vocabulary size {vocab_size} is out of range: it must be at least "
                        f"{MIN_VOCAB} (256 bytes + {len(SPECIAL_TOKENS)} specials) and at most "
                        f"{MAX_VOCAB}")
    version = metadata.version("rustbpe")
    path = cache_dir("bpe") / (f"{corpus.fingerprint[:32]}-v{vocab_size}-c{max_train_chars}"
                               f"-rustbpe{version}.json")
    if use_cache and path.exists():
        try:
            return bpe_from_state(json.loads(path.read_text(encoding="utf-8")))
        except (DataError, ValueError, KeyError, TypeError):
            pass  # a damaged cache entry: train again and overwrite it

    trainer = rustbpe.Tokenizer()
    trainer.train_from_iterator(_training_pieces(corpus, max_train_chars),
                                vocab_size - len(SPECIAL_TOKENS), buffer_size=TRAIN_BUFFER,
                                pattern=SPLIT_PATTERN)
    ranked = sorted(((bytes(token), rank) for token, rank in trainer.get_mergeable_ranks()),
                    key=lambda item: item[1])
    state = {"format_version": 1, "kind": "bpe", "name": f"bpe:{vocab_size}",
             "pattern": SPLIT_PATTERN,
             "ranks": [base64.b64encode(token).decode("ascii") for token, _ in ranked],
             "specials": special_ids(len(ranked)),
             "trainer": f"rustbpe {version}", "corpus_fingerprint": corpus.fingerprint}
    tokenizer = bpe_from_state(state)
    if use_cache:
        atomic_write_bytes(path, json.dumps(tokenizer.to_dict()).encode())
    return tokenizer


def bpe_from_state(state: dict[str, Any]) -> TiktokenTokenizer:
    """The tokenizer described by ``TiktokenTokenizer.to_dict()`` of a BPE tokenizer."""
    ranks = {base64.b64decode(token, validate=True): rank
             for rank, token in enumerate(state["ranks"])}
    if len(ranks) != len(state["ranks"]) or any(bytes((b,)) not in ranks for b in range(256)):
        raise DataError("BPE table is damaged: duplicate tokens or missing single bytes")
    specials = state["specials"]
    ids = sorted(specials.values()) if isinstance(specials, dict) else None
    if ids is None or any(type(i) is not int for i in ids) or \
            ids != list(range(len(ranks), len(ranks) + len(ids))):
        raise DataError(f"BPE special tokens {str(specials)[:80]} are not the ids after its "
                        f"{len(ranks)} merged tokens; the file was changed")
    extra = {k: state[k] for k in ("pattern", "ranks", "trainer", "corpus_fingerprint")}
    return TiktokenTokenizer(kind="bpe", name=state["name"], pattern=state["pattern"],
                             ranks=ranks, specials=state["specials"], state=extra)


def _training_pieces(corpus, max_chars: int) -> Iterator[str]:
    """The corpus text in pieces cut at pre-token boundaries, up to ``max_chars`` in all."""
    total = 0
    for document in corpus.documents():
        for piece in rechunk(document, TRAIN_PIECE_CHARS):
            if total >= max_chars:
                return
            piece = piece[:max_chars - total]
            total += len(piece)
            yield piece
