"""Hook points: named places inside a block where a probe reads the tensor the model computed.

In the spirit of TransformerLens's ``HookPoint``: an identity ``nn.Module`` a probe attaches a
function to. A block lists its points in ``_hook_points()`` (name -> ``HookPoint`` with a label
and a formula); :func:`attached` makes them, sets them on the block as ``hook_<name>`` and sets
its ``hooked`` flag, and ``forward`` calls them only while the flag is set. So a model nobody
looks at runs exactly the code it ran before (one attribute test per block) and holds no hook
modules. A standalone export copies the blocks as written, their ``if self.hooked`` branches
included (never taken there: nothing in the file sets the flag), but neither ``_hook_points()``
nor this module. The label and formula travel with the point, so a probe that shows the forward pass needs no table
of what each block computes; ``per`` says which leading axis (after the batch) is a head:
"head" for query heads, "kv_head" for key/value heads.

A layer copy of a group (``GraphLayer``) has a generated ``forward`` that cannot call points, so
its points "in" (the stream entering it) and "out" (its first output, the stream it hands on)
are fed by a forward pre-hook and a forward hook that :func:`attached` registers and removes.

    with attached(model, lambda name, point, tensor: seen.append((name, tensor))):
        model(ids)            # seen: every point of every block, in the order computed
"""
from torch import nn


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
        self.made, self.points = [], {}


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
