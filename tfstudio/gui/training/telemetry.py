"""Telemetry on the graph: nodes coloured by the gradient norm or the activation RMS of the
latest look inside the model (tfstudio.probes.telemetry), on a log scale from the smallest to
the largest value shown, so a layer whose gradients vanish or explode stands out.

What is shown is coloured: the blocks of the level on the canvas, and the blocks inside each
open group frame (all its copies together), on one scale; a group also gets its per-copy values
(``copy_values``), which the canvas strip's legend lists."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from PySide6.QtGui import QColor

from ...probes.telemetry import node_values
from .colours import ramp_colour

MODES = {"off": "Off", "grad_norm": "Gradient norm", "activation_rms": "Activation RMS"}
SHORT = {"grad_norm": "‖g‖", "activation_rms": "rms"}
# what each number is, for the legend: neither has a unit (a norm of gradients of a loss in
# nats, a root mean square of activations)
MEANING = {"grad_norm": "L2 norm of each block's parameter gradients",
           "activation_rms": "root mean square of each block's output"}


@dataclass
class Shown:
    """Telemetry of what the canvas shows: ``top`` {node: value} of its level, ``inner``
    {open group: {node: value}}, ``copies`` {group: [value of copy 0, 1, ...]}, and the log
    scale's ends (the smallest and largest positive value among top and inner)."""
    mode: str
    step: int | None = None  # the training step of the look the values come from
    top: dict[str, float] = field(default_factory=dict)
    inner: dict[str, dict[str, float]] = field(default_factory=dict)
    copies: dict[str, list[float]] = field(default_factory=dict)
    lo: float = 0.0
    hi: float = 0.0

    def colour(self, value: float) -> QColor:
        """``value`` on the log scale from ``lo`` (blue) to ``hi`` (red)."""
        lo, hi = math.log10(self.lo), math.log10(self.hi)
        at = (math.log10(value) - lo) / (hi - lo) if hi > lo else 0.5
        return ramp_colour(at, "diverging")

    def label(self, value: float) -> str:
        return f"{SHORT.get(self.mode, self.mode)} {value:.3g}"


def _positive(values: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in values.items() if v > 0 and math.isfinite(v)}


def shown_values(snapshot: dict | None, mode: str, path: tuple[str, ...] = (),
                 open_groups: tuple[str, ...] = (), groups: tuple[str, ...] = ()
                 ) -> Shown | None:
    """The values to colour the level ``path`` with, its ``open_groups`` drawn open, and the
    per-copy values of its ``groups`` (open or closed); None when off or nothing measured."""
    if mode == "off" or not snapshot:
        return None
    raw = dict(snapshot.get(mode) or {})
    combine = "norm" if mode == "grad_norm" else "rms"
    step = snapshot.get("step")
    shown = Shown(mode, step=int(step) if step is not None else None,
                  top=_positive(node_values(raw, tuple(path), combine=combine)))
    for group in open_groups:
        inner = _positive(node_values(raw, tuple(path) + (group,), combine=combine))
        if inner:
            shown.inner[group] = inner
    for group in dict.fromkeys(open_groups + tuple(groups)):
        copies = copy_values(raw, tuple(path) + (group,))
        if copies:
            shown.copies[group] = copies
    everything = list(shown.top.values()) + [v for d in shown.inner.values() for v in d.values()]
    if not everything:
        return None
    shown.lo, shown.hi = min(everything), max(everything)
    return shown


def copy_values(values: dict[str, float], group_path: tuple[str, ...]) -> list[float]:
    """Each copy's own value of the group at ``group_path`` ("layers.0", "layers.1", ...: the
    model measures each copy whole), in copy order; empty when none was measured."""
    prefix = ".".join(f"{g}.0" for g in group_path[:-1])
    prefix = f"{prefix}." if prefix else ""
    found = {}
    for name, value in values.items():
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest is None:
            continue
        parts = rest.split(".")
        if len(parts) == 2 and parts[0] == group_path[-1] and parts[1].isdigit():
            found[int(parts[1])] = float(value)
    return [found[k] for k in sorted(found)]


def node_colours(snapshot: dict | None, mode: str, path: tuple[str, ...] = ()
                 ) -> dict[str, tuple[QColor, str]]:
    """{node id: (colour, label)} for the graph level ``path``; empty when off or no data."""
    if mode == "off" or not snapshot:
        return {}
    values = node_values(dict(snapshot.get(mode) or {}), tuple(path),
                         combine="norm" if mode == "grad_norm" else "rms")
    positive = {k: v for k, v in values.items() if v > 0 and math.isfinite(v)}
    if not positive:
        return {}
    lo, hi = math.log10(min(positive.values())), math.log10(max(positive.values()))
    span = hi - lo or 1.0
    short = "‖g‖" if mode == "grad_norm" else "rms"
    return {node: (ramp_colour((math.log10(v) - lo) / span if hi > lo else 0.5, "diverging"),
                   f"{short} {v:.3g}")
            for node, v in positive.items()}


def apply_to_scene(scene, snapshot: dict | None, mode: str) -> Shown | None:
    """Colour what the scene shows: its level's blocks, and the blocks inside each open
    frame, on one scale (see ``shown_values``); returns what was coloured (None: nothing)."""
    from .strip import apply_inner  # the frames' insides are drawn by the strip's overlay

    items = getattr(scene, "node_items", {})
    open_groups = tuple(nid for nid, item in items.items()
                        if getattr(item, "frame", None) is not None)
    groups = tuple(nid for nid, item in items.items()
                   if getattr(getattr(item, "node", None), "is_group", False))
    shown = shown_values(snapshot, mode, tuple(getattr(scene, "path", ())), open_groups, groups)
    for node_id, item in items.items():
        setter = getattr(item, "set_telemetry", None)
        if setter is None:
            continue
        value = shown.top.get(node_id) if shown is not None else None
        if value is None:
            setter(None, "")
        else:
            setter(shown.colour(value), shown.label(value))
    apply_inner(scene, shown)
    return shown


def legend_text(mode: str) -> str:
    if mode == "off":
        return ""
    return (f"Nodes coloured by {MODES[mode].lower()} (log scale): blue lowest, red highest; "
            "a group shows all its copies together")


