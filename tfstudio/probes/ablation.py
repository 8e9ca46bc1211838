"""Ablation without retraining: switch off part of a trained model and measure what it did.

A target is a block as ``model.blocks()`` names it, optionally narrowed to one head or expert:

- ``layers.0.attn:head=1``: that head's output z_h is zeroed before the output projection, so
  exactly its term z_h W_o^h leaves the attention output;
- ``layers.1.moe:expert=2``: that expert's output is zeroed (the router still chooses it, the
  other chosen expert keeps its weight);
- ``layers.1.ffn`` (any attention, feed-forward or MoE block): the whole sublayer's output is
  zeroed, leaving the residual stream to pass it by.

The switching is done at the model's own hook points (:mod:`tfstudio.nn.hooks`): a function
attached to a point that returns a tensor replaces what the model computed there. A head is
zeroed in the attention's "mixed" point (z = A v, [B, H, T, d_head]), an expert at its
FeedForward's "out" point, a sublayer at its own "out" point. The weights are never touched, and
the model computes exactly as before when the ``with`` block ends. :func:`ablation_effect`
reports the change in loss on the text and in the next-token distribution (KL divergence and the
top tokens before and after), and, given a span, the loss on the span's tokens alone: on a task,
the answer tokens, which are what training scores (the random prompt characters are never
learned, so the loss over the whole text mostly measures them).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at

_KINDS = ("head", "expert")


@dataclass
class Target:
    block: str               # "layers.0.attn"
    kind: str = "sublayer"   # "sublayer", "head" or "expert"
    index: int = 0

    def __str__(self) -> str:
        return self.block if self.kind == "sublayer" else f"{self.block}:{self.kind}={self.index}"


def parse_target(text: str) -> Target:
    """``BLOCK``, ``BLOCK:head=H`` or ``BLOCK:expert=E``."""
    block, _, narrow = text.strip().partition(":")
    if not narrow:
        return Target(block)
    kind, eq, value = narrow.partition("=")
    if kind not in _KINDS or not eq or not value.strip().isdigit():
        raise ValueError(f"cannot read the ablation target {text!r}; write BLOCK, "
                         "BLOCK:head=H or BLOCK:expert=E (e.g. layers.0.attn:head=1)")
    return Target(block, kind, int(value))


def _module_of(model, target: Target):
    from .. import nn as blocks

    found = {key_name(k): m for k, m in model.blocks()}
    module = found.get(target.block)
    branches = [n for n, m in found.items() if getattr(m, "residual_branch", False)]
    if module is None or not getattr(module, "residual_branch", False):
        choice = (f"choose one of {', '.join(branches)}" if branches else
                  "this model has none to switch off (a recurrent model has no sublayers)")
        raise ValueError(f"{target.block!r} is not an attention, feed-forward or MoE block of "
                         f"this model; {choice}")
    if target.kind == "head":
        if not isinstance(module, (blocks.SelfAttention, blocks.CrossAttention)):
            raise ValueError(f"{target.block} is not attention, so it has no heads")
        if not 0 <= target.index < module.heads:
            raise ValueError(f"{target.block} has heads 0..{module.heads - 1}, not "
                             f"{target.index}")
    if target.kind == "expert":
        if not isinstance(module, blocks.MixtureOfExperts):
            raise ValueError(f"{target.block} is not a mixture of experts")
        if not 0 <= target.index < module.num_experts:
            raise ValueError(f"{target.block} has experts 0..{module.num_experts - 1}, not "
                             f"{target.index}")
    return module


@contextlib.contextmanager
def ablated(model, targets):
    """Inside the ``with`` block the model runs with ``targets`` (Target or text) switched
    off."""
    from ..nn import attached

    zeroed: dict[str, list] = {}   # hook point name -> the heads to zero ([None]: all of it)
    names = {id(m): n for n, m in model.named_modules()}
    for target in targets:
        target = parse_target(target) if isinstance(target, str) else target
        module = names[id(_module_of(model, target))]
        if target.kind == "head":
            zeroed.setdefault(f"{module}.hook_mixed", []).append(target.index)
        elif target.kind == "expert":
            zeroed.setdefault(f"{module}.experts.{target.index}.hook_out", []).append(None)
        else:
            zeroed.setdefault(f"{module}.hook_out", []).append(None)

    def switch_off(name, _point, tensor):
        if None in zeroed[name]:
            return tensor * 0
        tensor = tensor.clone()
        tensor[:, zeroed[name]] = 0     # [B, H, T, d_head]: those heads' z
        return tensor

    with attached(model, switch_off, names=set(zeroed)):
        yield model


# ---------------------------------------------------------------------------- the effect
@dataclass
class AblationEffect:
    targets: list[str]
    position: int              # where the next-token distributions are compared
    loss_before: float         # mean next-token cross-entropy on the text (nats)
    loss_after: float
    kl: float                  # KL(before || after) at ``position`` (nats)
    top_before: list           # [(token, probability)] likeliest first
    top_after: list
    logits_before: np.ndarray  # [T, V]
    logits_after: np.ndarray
    span: tuple[int, int] | None = None   # token positions [start, end) scored apart
    span_label: str = ""                  # what the span is ("the answer tokens", ...)
    span_loss_before: float | None = None
    span_loss_after: float | None = None

    def to_dict(self) -> dict:
        out = {"targets": self.targets, "position": self.position,
               "loss_before": self.loss_before, "loss_after": self.loss_after,
               "loss_change": self.loss_after - self.loss_before, "kl": self.kl,
               "top_before": self.top_before, "top_after": self.top_after}
        if self.span is not None:
            out["span"] = {"start": self.span[0], "end": self.span[1], "label": self.span_label,
                           "loss_before": self.span_loss_before,
                           "loss_after": self.span_loss_after,
                           "loss_change": self.span_loss_after - self.span_loss_before}
        return out


def text_loss(model, inputs, logits) -> float:
    """Mean cross-entropy of the text's own next tokens (for an encoder: of each token at its
    own position, as a masked-LM head reconstructs it)."""
    import torch
    import torch.nn.functional as F

    ids = torch.tensor(inputs.ids[inputs.stream_role], device=logits.device)
    if model.family == "encoder":
        return float(F.cross_entropy(logits[0].float(), ids))
    if ids.numel() < 2:
        return float("nan")
    return float(F.cross_entropy(logits[0, :-1].float(), ids[1:]))


def answer_span(tokens: list[str], separator: str = ">") -> tuple[int, int] | None:
    """[start, end) of the tokens after the last ``separator`` (a task's answer); None without
    one, or with nothing after it."""
    if separator not in tokens:
        return None
    start = len(tokens) - tokens[::-1].index(separator)
    return (start, len(tokens)) if start < len(tokens) else None


def span_loss(model, inputs, logits, start: int, end: int) -> float:
    """Mean cross-entropy of the text's tokens at positions [start, end) only (each predicted
    from the tokens before it; for an encoder, reconstructed at its own position)."""
    import torch
    import torch.nn.functional as F

    ids = torch.tensor(inputs.ids[inputs.stream_role], device=logits.device)
    first = 0 if model.family == "encoder" else 1
    if not first <= start < end <= ids.numel():
        raise ValueError(f"the span {start}:{end} must lie within token positions "
                         f"{first}..{ids.numel()} of the text (end exclusive)")
    shift = 0 if model.family == "encoder" else 1
    return float(F.cross_entropy(logits[0, start - shift:end - shift].float(), ids[start:end]))


def ablation_effect(model, inputs, targets, tokenizer=None, position: int = -1,
                    k: int = 5, span: tuple[int, int] | None = None,
                    span_label: str = "") -> AblationEffect:
    """Run ``inputs`` with and without ``targets`` switched off and compare; ``span``
    (token positions [start, end)) is also scored on its own, labelled ``span_label``."""
    import torch

    targets = [parse_target(t) if isinstance(t, str) else t for t in targets]
    with looking_at(model):
        before = model(*inputs.args)
        with ablated(model, targets):
            after = model(*inputs.args)
    T = before.shape[1]
    if not -T <= position < T:
        raise ValueError(f"position {position} is outside the text's {T} tokens")
    position %= T
    p = torch.log_softmax(before[0, position].float(), -1)
    q = torch.log_softmax(after[0, position].float(), -1)
    kl = float((p.exp() * (p - q)).sum())

    def top(logp):
        probs, ids = logp.exp().topk(min(k, logp.numel()))
        names = tokenizer.token_strings(ids.tolist()) if tokenizer is not None else \
            [str(i) for i in ids.tolist()]
        return [(n, float(v)) for n, v in zip(names, probs)]

    effect = AblationEffect([str(t) for t in targets], position,
                            text_loss(model, inputs, before), text_loss(model, inputs, after),
                            kl, top(p), top(q), before[0].float().cpu().numpy(),
                            after[0].float().cpu().numpy())
    if span is not None:
        effect.span, effect.span_label = (int(span[0]), int(span[1])), span_label
        effect.span_loss_before = span_loss(model, inputs, before, *span)
        effect.span_loss_after = span_loss(model, inputs, after, *span)
    return effect
