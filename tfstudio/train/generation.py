"""Incremental text generation with the KV cache, streaming tokens as they are produced."""
from __future__ import annotations

import secrets
from typing import Iterable, Iterator

import torch

from .sampling import sample_next


@torch.no_grad()
def generate_ids(model, prompt_ids: list[int], *, max_new_tokens: int = 100,
                 temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                 seed: int | None = None, stop_ids: Iterable[int] = (),
                 source_ids: list[int] | None = None, use_cache: bool = True) -> Iterator[int]:
    """Yield new token ids one at a time.

    Decoders continue ``prompt_ids``; encoder-decoders read ``source_ids`` and continue the
    target ``prompt_ids`` (start it with the tokenizer's BOS). With ``use_cache`` each step feeds
    only the new token and reuses the keys and values of earlier ones; without it every step
    recomputes the whole sequence (the two give the same tokens, which a test checks)."""
    if model.family == "encoder":
        raise ValueError("an encoder-only model (masked LM) does not generate text left to right; "
                         "use the next-token view on a masked position instead")
    if not prompt_ids:
        raise ValueError("the prompt is empty; give at least one token (e.g. a BOS or newline)")
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    generator = torch.Generator(device=device)
    # without a seed draw one from the OS: torch.seed() would reseed the global generator that
    # a training run on another thread relies on
    generator.manual_seed(seed if seed is not None else secrets.randbits(63))
    stop = set(stop_ids)
    seq = torch.tensor([prompt_ids], dtype=torch.long, device=device)
    src = (torch.tensor([source_ids], dtype=torch.long, device=device)
           if source_ids is not None else None)
    inputs = (src,) if model.family == "encoder-decoder" else ()
    if model.family == "encoder-decoder" and src is None:
        raise ValueError("an encoder-decoder needs source_ids to generate from")
    try:
        cache = model.new_cache() if use_cache else None
        logits = model(*inputs, seq, cache=cache) if cache is not None else model(*inputs, seq)
        for _ in range(max_new_tokens):
            nxt = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator)
            token = int(nxt.item())
            yield token
            if token in stop:
                return
            seq = torch.cat([seq, nxt.view(1, 1)], dim=1)
            if cache is not None:
                logits = model(*inputs, nxt.view(1, 1), cache=cache)
            else:
                logits = model(*inputs, seq)
    finally:
        model.train(was_training)
