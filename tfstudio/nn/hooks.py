"""Hook points: named places inside a block where a probe reads the tensor the model computed.

In the spirit of TransformerLens's ``HookPoint``: an identity ``nn.Module`` a probe attaches a
function to. A block (a :class:`Hooked` module) lists its points in ``_hook_points()`` (name ->
``HookPoint`` with a label and a formula) and passes each tensor through ``self._at(name, x)``;
:func:`attached` makes the points, sets them on the block as ``hook_<name>`` and sets its
``hooked`` flag, and ``_at`` calls them only while the flag is set. So a model nobody looks at
runs exactly the code it ran before (one attribute test per point) and holds no hook modules. A
standalone export copies the blocks as written and :class:`Hooked` with them, but neither
``_hook_points()`` nor the rest of this module. The label and formula travel with the point, so
a probe that shows the forward pass needs no table of what each block computes; ``per`` says
which leading axis (after the batch) is a head: "head" for query heads, "kv_head" for key/value
heads.

Attention's fused kernel keeps its scores and weights inside, so while an attention block is
hooked, its ``_attend`` is :func:`_attend_hooked`: the fused call as before, unless a function
listens at a point only the explicit computation passes; then the explicit one.

A layer copy of a group (``GraphLayer``) has a generated ``forward`` that cannot call points, so
its points "in" (the stream entering it) and "out" (its first output, the stream it hands on)
are fed by a forward pre-hook and a forward hook that :func:`attached` registers and removes.

    with attached(model, lambda name, point, tensor: seen.append((name, tensor))):
        model(ids)            # seen: every point of every block, in the order computed
"""
import math
import types

import torch
import torch.nn.functional as F
from torch import nn


class Hooked(nn.Module):
    """A block with hook points: ``self._at(name, x)`` is ``x``, unless tfstudio's probes have
    attached a point ``hook_<name>``, which sees ``x`` and may replace it."""

    hooked = False   # True while a probe has attached this block's points

    def _at(self, name: str, x):
        return getattr(self, "hook_" + name)(x) if self.hooked else x


class HookPoint(nn.Module):
    """Identity on one intermediate tensor; the functions attached see it (and may replace it:
    one that returns a tensor passes that on instead)."""

    def __init__(self, label: str, formula: str = "", per: str = "",
                 formulas: tuple[str, ...] = ()):
        super().__init__()
        self.label, self.formula, self.per = label, formula, per
        self.formulas = formulas   # one per head, where the formula holds a per-head number
        self.fns: list = []

    def forward(self, x):
        for fn in self.fns:
            out = fn(self, x)
            if out is not None:
                x = out
        return x

    def extra_repr(self) -> str:
        return repr(self.label)


def hook_points(model: nn.Module) -> dict[str, HookPoint]:
    """Every hook point ``model`` offers, by dotted name ("layers.0.attn.hook_scores")."""
    return {f"{owner}.hook_{name}" if owner else f"hook_{name}": point
            for owner, module in model.named_modules() if hasattr(module, "_hook_points")
            for name, point in module._hook_points().items()}


class attached:
    """``with attached(model, fn, names=None) as points:`` attaches ``fn(name, point, tensor)``
    to the hook points of ``model`` (those in ``names``, else all) for the duration; ``points``
    maps every point's name to it. Afterwards the blocks hold no points and run as before."""

    def __init__(self, model: nn.Module, fn, names=None):
        self.model, self.fn, self.names = model, fn, names
        self.made: list = []   # (block, its points) this context created
        self.points: dict[str, HookPoint] = {}
        self.handles: list = []   # the forward hooks feeding a layer copy's points

    def __enter__(self) -> dict[str, HookPoint]:
        try:
            for owner_name, owner in list(self.model.named_modules()):
                if hasattr(owner, "_hook_points"):
                    self._attach(owner_name, owner)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self.points

    def _attach(self, owner_name: str, owner: nn.Module) -> None:
        if "hooked" not in owner.__dict__:   # (a probe inside another reuses its points)
            self.made.append((owner, list(owner._hook_points().items())))
            for child, point in self.made[-1][1]:
                setattr(owner, f"hook_{child}", point)
            owner.hooked = True
            if hasattr(owner, "_attend"):   # an attention block (as GraphModel duck-types it)
                owner._attend = types.MethodType(_attend_hooked, owner)
            if getattr(owner, "hooked_from_outside", False):
                self.handles += [owner.register_forward_pre_hook(_feed_in),
                                 owner.register_forward_hook(_feed_out)]
        for child, point in owner.named_children():
            if isinstance(point, HookPoint):
                name = f"{owner_name}.{child}" if owner_name else child
                self.points[name] = point
                if self.names is None or name in self.names:
                    point.fns.append(_named(self.fn, name))

    def __exit__(self, *exc) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []
        for point in self.points.values():
            point.fns = [f for f in point.fns if getattr(f, "attached_by", None) is not self.fn]
        for owner, children in self.made:
            for child, _ in children:
                delattr(owner, f"hook_{child}")
            del owner.hooked   # back to the class's False
            vars(owner).pop("_attend", None)   # back to the class's fused call
        self.made, self.points = [], {}


# the points only attention's explicit computation passes: the fused kernel keeps them inside
EXPLICIT_ONLY = ("scores", "mask", "bias", "masked", "weights")


def _attend_hooked(block, q, k, v, mask, is_causal: bool):
    """A hooked attention block's ``_attend``: its class's fused call, or, while a function
    listens at a point in EXPLICIT_ONLY, softmax(q k^T / sqrt(d_head) + mask) v computed step by
    step, each step through its point (tests hold the two equal)."""
    if not any(getattr(block, "hook_" + name).fns for name in EXPLICIT_ONLY):
        return type(block)._attend(block, q, k, v, mask, is_causal)
    groups = block.heads // block.kv_heads
    if groups > 1:  # query head h reads K/V head h // groups, as enable_gqa does
        k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    scores = block.hook_scores((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1])))
    if is_causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril()
    allowed = (torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
               if mask is None else mask if mask.dtype == torch.bool
               else torch.isfinite(mask).reshape(-1, *mask.shape[-2:])[0])
    block.hook_mask(allowed[None])
    if mask is not None and mask.dtype != torch.bool:   # an ALiBi bias [H, Tq, Tk]
        mask = block.hook_bias(mask[None])[0]
    if mask is not None:
        scores = block.hook_masked(scores.masked_fill(~mask, float("-inf"))
                                   if mask.dtype == torch.bool else scores + mask)
    weights = block.hook_weights(torch.softmax(scores.float(), dim=-1).to(q.dtype))
    if block.training and block.dropout > 0:
        weights = F.dropout(weights, block.dropout)
    return weights @ v


def _named(fn, name: str):
    def call(point, x):
        return fn(name, point, x)
    call.attached_by = fn
    return call


def _feed_in(layer, args):
    """A layer copy's "in" point sees (and may replace) the stream entering it."""
    if args and layer.hook_in.fns:
        return (layer.hook_in(args[0]), *args[1:])
    return None


def _feed_out(layer, _args, output):
    """Its "out" point sees (and may replace) its first output, the stream it hands on."""
    if not layer.hook_out.fns:
        return None
    if isinstance(output, tuple):
        return (layer.hook_out(output[0]), *output[1:])
    return layer.hook_out(output)
