"""Causal-LM batches: random windows of T+1 tokens cut from a token array.

``WindowSampler`` draws batch k from a generator seeded with ``(seed, k)``, so its whole state
is two integers: ``state_dict()`` after any number of batches, ``load_state_dict()`` into a
fresh sampler, and the next batches are exactly those the original would have drawn. Inputs
are ``window[:-1]``, targets ``window[1:]``, both int64 ``torch`` tensors of shape (B, T).

``eval_windows`` gives the same fixed, evenly spaced windows every time, for comparable
validation losses.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .errors import DataError


def _check_length(tokens: np.ndarray, context: int, what: str) -> None:
    if context < 1:
        raise DataError(f"context length must be at least 1, got {context}")
    if len(tokens) < context + 1:
        raise DataError(f"the {what} split has {len(tokens):,} tokens, fewer than context + 1 = "
                        f"{context + 1:,}; use a shorter context or a larger corpus")


def _gather(tokens: np.ndarray, starts: np.ndarray, context: int):
    import torch
    windows = np.asarray(tokens[starts[:, None] + np.arange(context + 1)], dtype=np.int64)
    windows = torch.from_numpy(windows)
    return windows[:, :-1], windows[:, 1:]


class WindowSampler:
    """Random (inputs, targets) batches of ``batch_size`` x ``context`` from ``tokens``."""

    def __init__(self, tokens: np.ndarray, context: int, batch_size: int, seed: int = 0,
                 *, split: str = "train") -> None:
        _check_length(tokens, context, split)
        if batch_size < 1:
            raise DataError(f"batch size must be at least 1, got {batch_size}")
        self.tokens, self.context, self.batch_size = tokens, context, batch_size
        self.seed, self.step = int(seed), 0

    def starts(self, step: int) -> np.ndarray:
        """Window start offsets of batch ``step`` (uniform over every full window)."""
        rng = np.random.default_rng([self.seed, step])
        return rng.integers(0, len(self.tokens) - self.context, size=self.batch_size)

    def next_batch(self):
        batch = _gather(self.tokens, self.starts(self.step), self.context)
        self.step += 1
        return batch

    def __iter__(self):
        while True:
            yield self.next_batch()

    def state_dict(self) -> dict:
        return {"seed": self.seed, "step": self.step, "context": self.context,
                "batch_size": self.batch_size, "n_tokens": len(self.tokens)}

    def load_state_dict(self, state: dict) -> None:
        mine = {"context": self.context, "batch_size": self.batch_size,
                "n_tokens": len(self.tokens)}
        for key, value in mine.items():
            if state.get(key) != value:
                raise DataError(f"cannot resume the sampler: it was saved with {key}="
                                f"{state.get(key)} but this one has {key}={value}; resume with "
                                f"the same corpus, tokenizer, context and batch size")
        self.seed, self.step = int(state["seed"]), int(state["step"])


def eval_windows(tokens: np.ndarray, context: int, batch_size: int,
                 max_batches: int = 8) -> Iterator[tuple]:
    """Fixed validation batches: up to ``max_batches`` x ``batch_size`` windows, evenly spread."""
    _check_length(tokens, context, "validation")
    last_start = len(tokens) - context - 1
    count = min(max_batches * batch_size, last_start // max(1, context) + 1)
    starts = np.linspace(0, last_start, num=count).astype(np.int64)
    for i in range(0, count, batch_size):
        yield _gather(tokens, starts[i:i + batch_size], context)
