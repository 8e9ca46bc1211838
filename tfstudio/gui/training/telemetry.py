"""Telemetry on the graph: nodes coloured by the gradient norm or the activation RMS of the
latest look inside the model (tfstudio.probes.telemetry), on a log scale from the smallest to
the largest value shown, so a layer whose gradients vanish or explode stands out."""
from __future__ import annotations

import math

from PySide6.QtGui import QColor

from ...probes.telemetry import node_values
from .colours import ramp_colour

MODES = {"off": "Off", "grad_norm": "Gradient norm", "activation_rms": "Activation RMS"}


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


def apply_to_scene(scene, snapshot: dict | None, mode: str) -> int:
    """Colour the scene's node items (those that can show telemetry); returns how many."""
    items = getattr(scene, "node_items", {})
    colours = node_colours(snapshot, mode, tuple(getattr(scene, "path", ())))
    coloured = 0
    for node_id, item in items.items():
        setter = getattr(item, "set_telemetry", None)
        if setter is None:
            continue
        colour, label = colours.get(node_id, (None, ""))
        setter(colour, label)
        coloured += colour is not None
    return coloured


def legend_text(mode: str) -> str:
    if mode == "off":
        return ""
    return (f"Nodes coloured by {MODES[mode].lower()} (log scale): blue lowest, red highest; "
            "a group shows all its copies together")


