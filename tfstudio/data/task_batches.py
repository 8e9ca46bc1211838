"""Batches for the synthetic tasks: causal-LM rows with an answer mask, and seq2seq pairs.

Causal LM (``task_lm_batch``): one example per row, starting at position 0, encoded as
``encode(source + sep) + encode(target) + encode("\\n")`` so the answer's token positions are
known for any tokenizer. ``inputs = ids[:-1]``, ``targets = ids[1:]``; rows are right-padded
with ``pad_id`` in the inputs and -100 in the targets. ``answer_mask`` marks the target
positions that predict answer tokens: task accuracy is argmax == target over those positions.

Seq2seq (``seq2seq_batch``, teacher forcing): ``source`` = the source ids, ``decoder_input`` =
``bos_id`` + target[:-1], ``labels`` = target, where the target ends with ``eot_id``.
``source_mask`` is True at real (non-padding) source tokens; labels are -100 at padding.

``TaskSampler`` draws batch k from ``random.Random`` seeded with (seed, k): its state is two
integers, and a resumed run continues exactly. ``eval_examples`` is a fixed held-out set drawn
from a separate seed stream.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from .errors import DataError
from .masking import IGNORE_INDEX
from .tasks import Task, TaskExample

EVAL_SEED = 1 << 40  # far from any training stream


@dataclass
class TaskLMBatch:
    inputs: Any       # LongTensor (B, T)
    targets: Any      # LongTensor (B, T), -100 at padding
    answer_mask: Any  # BoolTensor (B, T), True where the target is an answer token


@dataclass
class Seq2SeqBatch:
    source: Any         # LongTensor (B, S), pad_id at padding
    source_mask: Any    # BoolTensor (B, S), True at real tokens
    decoder_input: Any  # LongTensor (B, U): bos + target[:-1]
    labels: Any         # LongTensor (B, U): target (ending in eot), -100 at padding


def encode_example(example: TaskExample, tokenizer) -> tuple[list[int], int, int]:
    """(ids, answer_start, answer_end): token ids of the example's line and the answer's
    token range within them."""
    prompt = tokenizer.encode(example.prompt)
    answer = tokenizer.encode(example.target)
    return prompt + answer + tokenizer.encode("\n"), len(prompt), len(prompt) + len(answer)


def task_lm_batch(examples: Sequence[TaskExample], tokenizer) -> TaskLMBatch:
    import torch
    encoded = [encode_example(e, tokenizer) for e in examples]
    width = max(len(ids) for ids, _, _ in encoded) - 1
    inputs, targets, answer_mask = [], [], []
    for ids, start, end in encoded:   # rows padded in Python, then one tensor each
        pad = width - (len(ids) - 1)
        inputs.append(ids[:-1] + [tokenizer.pad_id] * pad)
        targets.append(ids[1:] + [IGNORE_INDEX] * pad)
        answer = [False] * width
        answer[start - 1:end - 1] = [True] * len(answer[start - 1:end - 1])  # p predicts p + 1
        answer_mask.append(answer)
    return TaskLMBatch(torch.tensor(inputs, dtype=torch.long),
                       torch.tensor(targets, dtype=torch.long),
                       torch.tensor(answer_mask, dtype=torch.bool))


def seq2seq_batch(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], tokenizer
                  ) -> Seq2SeqBatch:
    """Teacher-forcing tensors from (source ids, target ids) pairs; ``eot_id`` is appended to
    each target so the decoder learns where to stop."""
    import torch
    if not pairs:
        raise DataError("seq2seq_batch needs at least one (source, target) pair")
    sources = [list(s) for s, _ in pairs]
    targets = [list(t) + [tokenizer.eot_id] for _, t in pairs]
    s_len, t_len = max(map(len, sources)), max(map(len, targets))
    pad = tokenizer.pad_id
    source = [src + [pad] * (s_len - len(src)) for src in sources]
    source_mask = [[True] * len(src) + [False] * (s_len - len(src)) for src in sources]
    decoder_input = [[tokenizer.bos_id] + tgt[:-1] + [pad] * (t_len - len(tgt)) for tgt in targets]
    labels = [tgt + [IGNORE_INDEX] * (t_len - len(tgt)) for tgt in targets]
    return Seq2SeqBatch(torch.tensor(source, dtype=torch.long),
                        torch.tensor(source_mask, dtype=torch.bool),
                        torch.tensor(decoder_input, dtype=torch.long),
                        torch.tensor(labels, dtype=torch.long))


def task_seq2seq_batch(examples: Sequence[TaskExample], tokenizer) -> Seq2SeqBatch:
    return seq2seq_batch([(tokenizer.encode(e.source), tokenizer.encode(e.target))
                          for e in examples], tokenizer)


class TaskSampler:
    """Fresh examples of ``task`` for every batch, reproducible from (seed, step)."""

    def __init__(self, task: Task, tokenizer, batch_size: int, seed: int = 0) -> None:
        if batch_size < 1:
            raise DataError(f"batch size must be at least 1, got {batch_size}")
        self.task, self.tokenizer, self.batch_size = task, tokenizer, batch_size
        self.seed, self.step = int(seed), 0

    def next_examples(self) -> list[TaskExample]:
        rng = random.Random(f"{self.task.spec}|{self.seed}|{self.step}")
        self.step += 1
        return [self.task.example(rng) for _ in range(self.batch_size)]

    def next_lm_batch(self) -> TaskLMBatch:
        return task_lm_batch(self.next_examples(), self.tokenizer)

    def next_seq2seq_batch(self) -> Seq2SeqBatch:
        return task_seq2seq_batch(self.next_examples(), self.tokenizer)

    def eval_examples(self, n: int = 512) -> list[TaskExample]:
        return self.task.examples(n, seed=EVAL_SEED + self.seed)

    def state_dict(self) -> dict:
        return {"seed": self.seed, "step": self.step, "task": self.task.spec,
                "batch_size": self.batch_size}

    def load_state_dict(self, state: dict) -> None:
        if state.get("task") != self.task.spec or state.get("batch_size") != self.batch_size:
            raise DataError(f"cannot resume the task sampler: it was saved for "
                            f"{state.get('task')} with batch size {state.get('batch_size')}, "
                            f"this one is {self.task.spec} with batch size {self.batch_size}")
        self.seed, self.step = int(state["seed"]), int(state["step"])
