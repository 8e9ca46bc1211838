"""AdamW with decay on matrices only, and the warmup-then-cosine learning-rate schedule."""
from __future__ import annotations

import math

import torch


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float,
                   betas: tuple[float, float], device_type: str) -> torch.optim.AdamW:
    """Weight decay on >= 2-D parameters (matrices, embeddings); none on biases and norm gains.

    Tied parameters appear once (``named_parameters`` drops duplicates)."""
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    # the fused kernel does each step in one call instead of a dozen ops per tensor: on CPU a
    # tiny model's optimizer step drops from about 850 to 185 us (tiny-gpt)
    extra = {"fused": True} if device_type in ("cuda", "cpu") else {}
    return torch.optim.AdamW(groups, lr=lr, betas=betas, **extra)


def lr_at(step: int, *, lr: float, warmup: int, total: int, min_ratio: float) -> float:
    """Linear warmup over ``warmup`` steps, then cosine decay to ``lr * min_ratio`` at ``total``."""
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    span = max(1, total - warmup)
    progress = min(1.0, (step - warmup) / span)
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))
