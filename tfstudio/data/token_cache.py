"""Token ids on disk: a corpus tokenized once, then memory-mapped by every run that needs it.

``token_array(corpus, tokenizer)`` returns a read-only ``numpy.memmap`` of all token ids,
each document followed by ``<|endoftext|>``. The file lives in ``<cache>/tokens/`` under a
key made of the corpus fingerprint and the tokenizer fingerprint (so changing either the text
or the tokenizer gives a new entry) and is written to a temporary file that is renamed into
place only when complete. Ids are stored as uint16 when the vocabulary fits (<= 65,536 ids),
else uint32.

Text is encoded in pieces of ``ENCODE_CHARS`` characters cut where the tokenizer's
pre-tokenizer has a boundary anyway (see ``chunking``), so the cache equals tokenizing the
whole text in memory, while memory stays bounded however large the corpus is.

``split_train_val`` takes the last ``val_fraction`` of the tokens as validation data.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from .chunking import rechunk
from .errors import DataError
from .paths import atomic_writer, cache_dir

ENCODE_CHARS = 1 << 20
VAL_FRACTION = 0.1


def token_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def cache_path(corpus, tokenizer) -> Path:
    dtype = token_dtype(tokenizer.vocab_size)
    return cache_dir("tokens") / (f"{corpus.fingerprint[:32]}-{tokenizer.fingerprint[:32]}"
                                  f"-{dtype.name}.bin")


def iter_token_blocks(corpus, tokenizer) -> Iterator[np.ndarray]:
    """The corpus as consecutive int64 id blocks, each document closed by ``eot_id``."""
    eot = np.array([tokenizer.eot_id], dtype=np.int64)
    for document in corpus.documents():
        for piece in rechunk(document, ENCODE_CHARS):
            yield tokenizer.encode_array(piece)
        yield eot


def token_array(corpus, tokenizer, *, use_cache: bool = True) -> np.ndarray:
    """All token ids of ``corpus`` under ``tokenizer`` (a read-only memmap when cached)."""
    dtype = token_dtype(tokenizer.vocab_size)
    if not use_cache:
        return np.concatenate(list(iter_token_blocks(corpus, tokenizer))).astype(dtype)
    path = cache_path(corpus, tokenizer)
    if not path.exists():
        text_tokens = 0
        with atomic_writer(path) as f:
            for block in iter_token_blocks(corpus, tokenizer):
                f.write(block.astype(dtype).tobytes())
                text_tokens += int(np.count_nonzero(block != tokenizer.eot_id))
        if text_tokens == 0:
            path.unlink()
            raise DataError(f"corpus {corpus.spec!r} contains no text to tokenize; choose a "
                            f"corpus with some text in it")
    return np.memmap(path, dtype=dtype, mode="r")


def split_train_val(tokens: np.ndarray, val_fraction: float = VAL_FRACTION
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) views: the validation part is the last ``val_fraction`` of tokens."""
    if not 0.0 <= val_fraction < 1.0:
        raise DataError(f"val_fraction must be in [0, 1), got {val_fraction}")
    cut = len(tokens) - int(round(len(tokens) * val_fraction))
    return tokens[:cut], tokens[cut:]
