"""Incremental text generation with the KV cache, streaming tokens as they are produced.

Past the trained length a model has never seen its positions (an untrained row of a learned
table, unseen RoPE angles, longer ALiBi distances), so generation slides a window: the model only
ever reads the last ``window`` tokens. When the window is full the cache is rebuilt from its last
three quarters (a rebuild per new token would cost a whole window per token), so every scheme,
learned, sinusoidal, RoPE, ALiBi or none, decoder or encoder-decoder, sees positions
``0 .. window - 1`` only, and any number of new tokens works.
"""
from __future__ import annotations

import secrets
from typing import Iterable, Iterator

import torch

from .sampling import sample_next


def context_window(model, trained_length: int | None = None) -> int | None:
    """How many tokens the model may read at once: the length it was trained at when known,
    else its graph's ``context_length``; None when neither is known (no window)."""
    if trained_length:
        return int(trained_length)
    graph = getattr(model, "graph", None)
    length = graph.meta.get("context_length") if graph is not None else None
    return int(length) if length else None


def fit_to_window(ids: list[int], window: int | None) -> list[int]:
    """``ids`` cut to their last ``window`` tokens (unchanged when they fit)."""
    return list(ids[-window:]) if window and len(ids) > window else list(ids)


class _Window:
    """Which part of the growing sequence the model reads: ``seq[start:]``, plus the first
    token when ``pin_first`` (an encoder-decoder's target always starts with its BOS)."""

    def __init__(self, window: int | None, pin_first: bool):
        self.size, self.pin_first = window, pin_first
        self.start = 0

    def slide(self, length: int) -> bool:
        """Move the start so that at most ``size`` tokens are read; True when it moved."""
        if not self.size or self._read(length) <= self.size:
            return False
        keep = max(1, self.size - max(1, self.size // 4) - int(self.pin_first))
        self.start = length - keep
        return True

    def _read(self, length: int) -> int:
        return length - self.start + (int(self.pin_first) if self.start > 0 else 0)

    def tokens(self, seq: torch.Tensor) -> torch.Tensor:
        if self.start == 0:
            return seq
        body = seq[:, self.start:]
        return torch.cat([seq[:, :1], body], dim=1) if self.pin_first else body


@torch.no_grad()
def generate_ids(model, prompt_ids: list[int], *, max_new_tokens: int = 100,
                 temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                 seed: int | None = None, stop_ids: Iterable[int] = (),
                 source_ids: list[int] | None = None, use_cache: bool = True,
                 window: int | None = None) -> Iterator[int]:
    """Yield new token ids one at a time.

    Decoders continue ``prompt_ids``; encoder-decoders read ``source_ids`` and continue the
    target ``prompt_ids`` (start it with the tokenizer's BOS). With ``use_cache`` each step feeds
    only the new token and reuses the keys and values of earlier ones; without it every step
    recomputes the whole window (the two give the same tokens, which a test checks).

    ``window`` (default: :func:`context_window`) is the most tokens the model reads at once; a
    longer prompt or source is cut to its end (:func:`fit_to_window`)."""
    if model.family == "encoder":
        raise ValueError(encoder_only_message())
    if not prompt_ids:
        raise ValueError("the prompt is empty; give at least one token (e.g. a BOS or newline)")
    if model.family == "encoder-decoder" and source_ids is None:
        raise ValueError("an encoder-decoder needs source_ids to generate from")
    window = window if window is not None else context_window(model)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    generator = torch.Generator(device=device)
    # without a seed draw one from the OS: torch.seed() would reseed the global generator that
    # a training run on another thread relies on
    generator.manual_seed(seed if seed is not None else secrets.randbits(63))
    stop = set(stop_ids)
    seq = torch.tensor([fit_to_window(prompt_ids, window)], dtype=torch.long, device=device)
    inputs = ()
    if model.family == "encoder-decoder":
        inputs = (torch.tensor([fit_to_window(source_ids, window)], dtype=torch.long,
                               device=device),)
    view = _Window(window, pin_first=model.family == "encoder-decoder")
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
            if view.slide(seq.shape[1]) or cache is None:
                cache = _fresh_cache(model, cache)
                logits = _forward(model, inputs, view.tokens(seq), cache)
            else:
                logits = model(*inputs, nxt.view(1, 1), cache=cache)
    finally:
        model.train(was_training)


def _fresh_cache(model, old):
    """An empty cache that keeps ``old``'s encoder output (the source does not change)."""
    if old is None:
        return None
    cache = model.new_cache()
    cache.encoded = old.encoded
    return cache


def _forward(model, inputs, tokens, cache):
    return model(*inputs, tokens, cache=cache) if cache is not None else model(*inputs, tokens)


def encoder_only_message() -> str:
    return ("this is an encoder-only model (a masked LM): it fills in masked positions and does "
            "not generate text left to right; to generate, train a decoder such as tiny-gpt or an "
            "encoder-decoder such as tiny-t5")


class StopText:
    """Finds stop sequences in streamed text: :meth:`feed` returns the text safe to show (held
    back while it might be the start of a stop sequence) and whether a stop was reached; the stop
    sequence itself is never shown."""

    def __init__(self, stops: Iterable[str] = ()):
        self.stops = [s for s in stops if s]
        self.pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        self.pending += text
        hits = [self.pending.find(s) for s in self.stops if s in self.pending]
        if hits:
            shown, self.pending = self.pending[:min(hits)], ""
            return shown, True
        hold = max((n for s in self.stops for n in range(1, len(s))
                    if self.pending.endswith(s[:n])), default=0)
        cut = len(self.pending) - hold
        shown, self.pending = self.pending[:cut], self.pending[cut:]
        return shown, False

    def flush(self) -> str:
        """What is still held back (at the end, when no stop came)."""
        shown, self.pending = self.pending, ""
        return shown


def stream_text(model, tokenizer, prompt_ids: list[int], *, stops: Iterable[str] = (),
                **settings) -> Iterator[str]:
    """Generated text in pieces as it is produced: ends at the end-of-text token or a stop
    sequence (not shown); a multi-byte character is shown once all its bytes have arrived.
    ``settings`` go to :func:`generate_ids`."""
    matcher = StopText(stops)
    pending: list[int] = []
    for token in generate_ids(model, prompt_ids, stop_ids=[tokenizer.eot_id], **settings):
        if token == tokenizer.eot_id:
            break
        pending.append(token)
        text = tokenizer.decode(pending)
        if text.endswith("\ufffd"):  # wait for the rest of a multi-byte character
            continue
        pending.clear()
        shown, stopped = matcher.feed(text)
        if shown:
            yield shown
        if stopped:
            return
    rest = matcher.flush()
    if rest:
        yield rest
