"""Per-node numbers for colouring the graph: gradient norm and activation RMS.

Values are keyed by block ("layers.0.attn": node "attn" in copy 0 of group "layers"), as
``model.blocks()`` lists them. :func:`node_values` folds them onto the nodes of one level of
the graph, combining a group's copies exactly: the gradient norm of several copies is the norm
of all their gradients, sqrt(sum of squares); the activation RMS of several copies is the RMS of
all their outputs, sqrt(mean of squares) (every copy's output has the same size).
"""
from __future__ import annotations

import math

from ._util import key_name


def gradient_norms(model) -> dict[str, float]:
    """L2 norm of the gradients of each block's parameters (as left by the last backward and
    clipping); blocks without gradients are left out."""
    import torch

    out = {}
    for key, module in model.blocks():
        grads = [p.grad for p in module.parameters() if p.grad is not None]
        if grads:
            out[key_name(key)] = float(torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(g.float()) for g in grads])))
    return out


class ActivationRecorder:
    """Forward hooks on every block recording the RMS of its output during a ``with`` block::

        with ActivationRecorder(model) as rec:
            model(ids)
        rec.values  # {"embed": 0.98, "layers.0.attn": 0.31, ...}
    """

    def __init__(self, model):
        self.model = model
        self.values: dict[str, float] = {}
        self._handles = []

    def __enter__(self) -> ActivationRecorder:
        for key, module in self.model.blocks():
            self._handles.append(module.register_forward_hook(self._hook(key_name(key))))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _hook(self, name: str):
        def record(module, args, output):
            tensor = output[0] if isinstance(output, (tuple, list)) else output
            if hasattr(tensor, "is_floating_point") and tensor.is_floating_point():
                self.values[name] = float(tensor.detach().float().pow(2).mean().sqrt())
        return record


def node_values(values: dict[str, float], path: tuple[str, ...] = (),
                combine: str = "norm") -> dict[str, float]:
    """{node id: value} for the nodes at graph level ``path`` (a tuple of group ids).

    ``combine`` says how a group's copies (or a node inside a repeated group) are folded:
    "norm" (gradient norms: sqrt of the sum of squares) or "rms" (activation RMS: sqrt of the
    mean of squares)."""
    if combine not in ("norm", "rms"):
        raise ValueError(f"combine must be 'norm' or 'rms'; got {combine!r}")
    depth = len(path)
    gathered: dict[str, list[float]] = {}
    for name, value in values.items():
        parts = name.split(".")
        if len(parts) < 2 * depth + 1 or not _inside(parts, path):
            continue
        rest = parts[2 * depth:]
        if len(rest) == 1 or (len(rest) == 2 and rest[1].isdigit()):
            gathered.setdefault(rest[0], []).append(float(value))
    fold = (lambda v: math.sqrt(sum(x * x for x in v))) if combine == "norm" else \
        (lambda v: math.sqrt(sum(x * x for x in v) / len(v)))
    return {node: fold(vals) for node, vals in gathered.items()}


def _inside(parts: list[str], path: tuple[str, ...]) -> bool:
    """Whether the key runs through every group of ``path`` (any copy of each)."""
    return all(parts[2 * i] == group and parts[2 * i + 1].isdigit()
               for i, group in enumerate(path))
