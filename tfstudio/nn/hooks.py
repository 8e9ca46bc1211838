"""Hook points: named places inside a block where a probe reads the tensor the model computed.

As TransformerLens's ``HookPoint``: each block (a :class:`Hooked` module) declares its points in
``__init__`` (``self._declare("q", "k", ...)`` makes the submodules ``hook_q``, ``hook_k``, ...)
and its one forward passes each tensor through its point. A block counts the functions attached
to its points (``hooked``); while that is 0 its forward skips them with one check, so a model
nobody looks at runs its bare maths (passing every point on every call cost a tiny-gpt training
step 1.1% on 2 cores: docs/BENCHMARKS.md). :func:`attached` adds functions to the points and
counts them, and takes them off again; it never replaces a method. Attention computes its scores
and weights explicitly only while a function listens at a point of its pattern (scores, mask,
bias, masked, weights); otherwise it takes the fused kernel, with the same mask
(:mod:`.attention`).

What a point shows (a label, a formula, and ``per``: which leading axis after the batch is a
head, "head" for query heads, "kv_head" for key/value heads) is the block's ``_hook_labels()``
table, which only tfstudio's probes read: a standalone export copies the blocks and
:class:`HookPoint` but leaves the tables and the rest of this module behind. :func:`hook_points`
and :func:`attached` give each point its label.

A layer copy of a group (``GraphLayer``) has a generated ``forward``, so its points "in" (the
stream entering it) and "out" (its first output, the stream it hands on) are fed by a forward
pre-hook and a forward hook that :func:`attached` registers and removes.

    with attached(model, lambda name, point, tensor: seen.append((name, tensor))):
        model(ids)            # seen: every point of every block, in the order computed
"""
from dataclasses import dataclass

from torch import nn


class HookPoint(nn.Module):
    """Identity on a tensor; each function attached sees it (one that returns one replaces it)."""

    def __init__(self):
        super().__init__()
        self.fns = ()   # a tuple: functions come on through attached, which counts them

    def forward(self, x):
        for fn in self.fns:
            x = x if (out := fn(self, x)) is None else out
        return x


class Hooked(nn.Module):
    """A block with hook points ``hook_<name>``, declared in its ``__init__``; ``hooked``: how
    many functions are attached to them (at 0 its forward passes none of them)."""

    def _declare(self, *names: str) -> None:
        self.hooked = 0
        for name in names:
            setattr(self, "hook_" + name, HookPoint())


@dataclass
class HookLabel:
    """What a point shows: its label, its formula (``formulas``: one per head)."""

    label: str
    formula: str = ""
    per: str = ""
    formulas: tuple[str, ...] = ()


def hook_points(model: nn.Module) -> dict[str, HookLabel]:
    """Every hook point ``model`` offers, by dotted name ("layers.0.attn.hook_scores"),
    labelled from its block's table."""
    return {name: point for name, _owner, point in _labelled_points(model)}


def _labelled_points(model: nn.Module):
    """(dotted name, the block it belongs to, point) for every hook point of ``model``, each
    point labelled from its block's table on the way."""
    for owner_name, owner in model.named_modules():
        labels = None
        for child, point in owner.named_children():
            if isinstance(point, HookPoint):
                if labels is None:
                    labels = owner._hook_labels() if hasattr(owner, "_hook_labels") else {}
                about = labels.get(child.removeprefix("hook_")) or HookLabel(child)
                point.label, point.formula = about.label, about.formula
                point.per, point.formulas = about.per, about.formulas
                yield (f"{owner_name}.{child}" if owner_name else child), owner, point


class attached:
    """``with attached(model, fn, names=None) as points:`` attaches ``fn(name, point, tensor)``
    to the hook points of ``model`` (those in ``names``, else all) for the duration; ``points``
    maps every point's name to it. Afterwards the points hold what they held before."""

    def __init__(self, model: nn.Module, fn, names=None):
        self.model, self.fn, self.names = model, fn, names
        self.points: dict[str, HookLabel] = {}
        self.added: list = []    # (block, point, the function added to it)
        self.layers: list = []   # the layer copies whose points this context feeds

    def __enter__(self) -> dict[str, HookLabel]:
        try:
            for name, owner, point in _labelled_points(self.model):
                self.points[name] = point
                if self.names is None or name in self.names:
                    if isinstance(owner, Hooked):   # its forward now passes its points
                        owner.hooked = getattr(owner, "hooked", 0) + 1   # 0: made without _declare
                    call = _named(self.fn, name)
                    point.fns += (call,)
                    self.added.append((owner, point, call))
        except BaseException:   # none left attached, no count left raised
            self.__exit__()
            raise
        self.layers = [m for m in self.model.modules() if getattr(m, "hooked_from_outside", 0)]
        for layer in self.layers:   # fed once, however many contexts are open on it
            if id(layer) not in _FEEDING:
                _FEEDING[id(layer)] = [0, layer.register_forward_pre_hook(_feed_in),
                                       layer.register_forward_hook(_feed_out)]
            _FEEDING[id(layer)][0] += 1
        return self.points

    def __exit__(self, *exc) -> None:
        for layer in self.layers:
            feeding = _FEEDING[id(layer)]
            feeding[0] -= 1
            if not feeding[0]:
                del _FEEDING[id(layer)]
                feeding[1].remove()
                feeding[2].remove()
        for owner, point, call in self.added:
            point.fns = tuple(f for f in point.fns if f is not call)
            if isinstance(owner, Hooked):
                owner.hooked -= 1
        self.points, self.added, self.layers = {}, [], []


# id(layer copy) -> [open contexts feeding its points, its pre-hook handle, its hook handle]
_FEEDING: dict[int, list] = {}


def _named(fn, name: str):
    def call(point, x):
        return fn(name, point, x)
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
