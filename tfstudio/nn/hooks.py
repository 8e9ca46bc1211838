"""Hook points: named places inside a block where a probe reads the tensor the model computed.

In the spirit of TransformerLens's ``HookPoint``: an identity ``nn.Module`` a probe attaches a
function to. Each block creates its points in ``__init__`` (``self.hook_scores =
HookPoint("scores", "S = q k^T / sqrt(d_head)")``) and calls them in ``forward`` only while its
``hooked`` flag is set, so a model nobody looks at runs exactly the code it ran before (one
attribute test per block). The label and formula travel with the point, so a probe that shows
the forward pass needs no table of what each block computes; ``per`` says which leading axis
(after the batch) is a head: "head" for query heads, "kv_head" for key/value heads.

    with attached(model, lambda name, point, tensor: seen.append((name, tensor))):
        model(ids)            # seen: every point of every block, in the order computed
"""
import contextlib

from torch import nn


class HookPoint(nn.Module):
    """Identity on one intermediate tensor; the functions attached see it (and may replace it:
    one that returns a tensor passes that on instead)."""

    def __init__(self, label: str, formula: str = "", per: str = ""):
        super().__init__()
        self.label, self.formula, self.per = label, formula, per
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
    """Every hook point of ``model`` by its dotted name ("layers.0.attn.hook_scores")."""
    return {name: m for name, m in model.named_modules() if isinstance(m, HookPoint)}


@contextlib.contextmanager
def attached(model: nn.Module, fn, names=None):
    """Attach ``fn(name, point, tensor)`` to the hook points of ``model`` (those in ``names``,
    else all) for the duration; the blocks holding them call them while it lasts."""
    owners, added = [], []
    try:
        for owner_name, owner in model.named_modules():
            points = [(n, p) for n, p in owner.named_children() if isinstance(p, HookPoint)]
            for child, point in points:
                name = f"{owner_name}.{child}" if owner_name else child
                if names is not None and name not in names:
                    continue

                def call(p, x, name=name):
                    return fn(name, p, x)
                point.fns.append(call)
                added.append((point, call))
                if "hooked" not in owner.__dict__:
                    owners.append(owner)
                    owner.hooked = True
        yield
    finally:
        for point, call in added:
            point.fns.remove(call)
        for owner in owners:
            del owner.hooked   # back to the class's False
