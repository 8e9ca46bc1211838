"""The token streams a run trained and validated on, rebuilt from its folder: the same corpus,
tokenizer and split the trainer used, so every measurement here sees the trainer's data."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import load_corpus, split_train_val, token_array
from ..runs import RunFolder


@dataclass
class RunSplits:
    train: np.ndarray
    val: np.ndarray
    vocab_size: int


def run_splits(folder: RunFolder) -> RunSplits:
    """The run's train and validation tokens; ValueError for runs on a synthetic task, whose
    examples are drawn afresh rather than cut from one token stream."""
    config = folder.config()
    corpus = load_corpus(config.corpus, errors=config.corpus_errors)
    if corpus.task is not None:
        raise ValueError(f"{folder.path} trained on the synthetic task {config.corpus!r}, which "
                         "has no token stream to measure; use a run trained on text")
    tokenizer = folder.tokenizer()
    train, val = split_train_val(token_array(corpus, tokenizer), config.val_fraction)
    return RunSplits(np.asarray(train), np.asarray(val), tokenizer.vocab_size)
