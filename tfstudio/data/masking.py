"""Masked-LM inputs (BERT): choose 15% of positions; of those 80% become the mask id, 10% a
random ordinary token and 10% stay; labels hold the original id there and -100 elsewhere
(ignored by ``cross_entropy``). Special ids (padding, end of text) are never chosen.

All draws come from the caller's ``torch.Generator``, so a seeded run masks identically.
"""
from __future__ import annotations

from typing import Iterable

from .errors import DataError

IGNORE_INDEX = -100


def mask_tokens(ids, *, mask_id: int, random_high: int, generator, mask_prob: float = 0.15,
                protected_ids: Iterable[int] = ()):
    """(inputs, labels) for a LongTensor batch ``ids``; random replacements are drawn from
    ``[0, random_high)`` (the ordinary tokens)."""
    import torch
    if not 0.0 < mask_prob < 1.0:
        raise DataError(f"mask_prob must be in (0, 1), got {mask_prob}")
    choosable = torch.ones_like(ids, dtype=torch.bool)
    for special in protected_ids:
        choosable &= ids != special
    chosen = (torch.rand(ids.shape, generator=generator) < mask_prob) & choosable
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE_INDEX))
    action = torch.rand(ids.shape, generator=generator)
    random_ids = torch.randint(0, random_high, ids.shape, generator=generator, dtype=ids.dtype)
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_id
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = random_ids[swap]
    return inputs, labels


def mlm_batch(ids, tokenizer, generator, mask_prob: float = 0.15):
    """``mask_tokens`` with the mask id, random range and protected ids from ``tokenizer``."""
    return mask_tokens(ids, mask_id=tokenizer.mask_id,
                       random_high=tokenizer.ordinary_vocab_size, generator=generator,
                       mask_prob=mask_prob, protected_ids=tokenizer.specials.values())
