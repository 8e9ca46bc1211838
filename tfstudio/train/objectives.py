"""Losses and accuracy for the three objectives; which one applies follows from the graph.

- causal LM (decoders): predict token t+1 from tokens <= t;
- masked LM (encoders): predict the original token at masked positions;
- seq2seq (encoder-decoders): predict target token t+1 from the source and target tokens <= t
  (teacher forcing).

A batch is ``Batch(inputs=(tensors passed to the model), labels=[B, T] with -100 where no loss)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..data.masking import IGNORE_INDEX as IGNORE


@dataclass
class Batch:
    inputs: tuple[torch.Tensor, ...]
    labels: torch.Tensor

    def to(self, device) -> "Batch":
        return Batch(tuple(t.to(device, non_blocking=True) for t in self.inputs),
                     self.labels.to(device, non_blocking=True))

    @property
    def tokens(self) -> int:
        return int(self.labels.numel())

    def rows(self, start: int, stop: int) -> "Batch":
        return Batch(tuple(t[start:stop] for t in self.inputs), self.labels[start:stop])


def loss_and_logits(model, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy over the labelled positions (0 when a batch has none, e.g. a short
    masked-LM batch where no position was drawn, rather than 0/0 = NaN)."""
    logits = model(*batch.inputs)
    total = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)),
                            batch.labels.reshape(-1), ignore_index=IGNORE, reduction="sum")
    return total / (batch.labels != IGNORE).sum().clamp(min=1), logits


def token_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> tuple[int, int]:
    """(correct, counted) over positions that carry a label."""
    mask = labels != IGNORE
    correct = (logits.argmax(-1) == labels) & mask
    return int(correct.sum()), int(mask.sum())
