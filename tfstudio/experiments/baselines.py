"""What counting alone achieves: unigram, bigram and trigram cross-entropies of the corpus.

The models are counted on the run's training split and scored on its validation split (the
tokens and split the trainer uses), in nats per token like the training loss. Smoothing:

    unigram   P1(w)     = (c(w) + 1) / (N + V)                          add-one (Laplace)
    n-gram    Pn(w | h) = (c(h, w) + u(h) Pn-1(w | h')) / (c(h) + u(h)) Witten-Bell
                          interpolation, u(h) = distinct tokens seen after h, h' = h without
                          its first token; an unseen context falls back to Pn-1

Every order predicts the same validation tokens (each from the third on), so the three numbers
are comparable with each other and, up to the first two positions of each window, with the
model's validation loss.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

ORDERS = ("unigram", "bigram", "trigram")


def _keys(tokens: np.ndarray, order: int, vocab: int) -> np.ndarray:
    """Each n-gram of ``tokens`` as one integer: t0 * V^(n-1) + ... + t(n-1)."""
    n = len(tokens) - order + 1
    key = np.zeros(max(n, 0), dtype=np.int64)
    for i in range(order):
        key = key * vocab + tokens[i:i + n].astype(np.int64)
    return key


DENSE_KEYS = 1 << 22   # fewer possible n-grams than this are counted in one array (32 MB)


def _counter(keys: np.ndarray, possible: int) -> tuple[Callable[[np.ndarray], np.ndarray],
                                                      np.ndarray]:
    """(how often each queried key occurs in ``keys``, the distinct keys in order), for keys
    below ``possible``: one bincount where the keys are few (a character vocabulary's bigrams
    and trigrams, a byte vocabulary's bigrams), else np.unique's sort and a binary search."""
    if possible <= DENSE_KEYS:
        counts = np.bincount(keys, minlength=possible)
        return lambda query: counts[query].astype(np.float64), np.flatnonzero(counts)
    table, counts = np.unique(keys, return_counts=True)
    return lambda query: _lookup(table, counts, query), table


def _lookup(table: np.ndarray, counts: np.ndarray, query: np.ndarray) -> np.ndarray:
    """counts[i] where table[i] == query, else 0 (``table`` sorted, as np.unique gives)."""
    if len(table) == 0:
        return np.zeros(len(query), dtype=np.float64)
    at = np.minimum(np.searchsorted(table, query), len(table) - 1)
    return np.where(table[at] == query, counts[at], 0).astype(np.float64)


def _witten_bell(train: np.ndarray, order: int, vocab: int, contexts: np.ndarray,
                 targets: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """P(target | context) of order ``order`` interpolated with ``lower`` (the order below)."""
    histories = vocab ** (order - 1)
    c_gram, grams = _counter(_keys(train, order, vocab), histories * vocab)
    u, _ = _counter(grams // vocab, histories)  # distinct tokens seen after each history
    c, _ = _counter(_keys(train[:-1], order - 1, vocab), histories)
    c_hw, c_h, u_h = c_gram(contexts * vocab + targets), c(contexts), u(contexts)
    return np.where(c_h > 0, (c_hw + u_h * lower) / np.maximum(c_h + u_h, 1), lower)


def ngram_cross_entropies(train: np.ndarray, val: np.ndarray, vocab_size: int
                          ) -> dict[str, float]:
    """{"unigram": nats, "bigram": nats, "trigram": nats} on ``val`` after counting ``train``."""
    if len(train) < 3 or len(val) < 3:
        raise ValueError("n-gram baselines need at least 3 training and 3 validation tokens")
    train, val = np.asarray(train, dtype=np.int64), np.asarray(val, dtype=np.int64)
    targets = val[2:]
    p1 = (np.bincount(train, minlength=vocab_size) + 1.0) / (len(train) + vocab_size)
    uni = p1[targets]
    bi = _witten_bell(train, 2, vocab_size, val[1:-1], targets, uni)
    tri = _witten_bell(train, 3, vocab_size, val[:-2] * vocab_size + val[1:-1], targets, bi)
    return {name: float(-np.log(p).mean()) for name, p in zip(ORDERS, (uni, bi, tri))}
