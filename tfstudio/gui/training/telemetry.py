"""Telemetry on the graph, without Qt: the values nodes are coloured by (the gradient norm or
the activation RMS of the latest look inside the model, tfstudio.probes.telemetry), where each
sits on a log scale from the smallest to the largest value shown, so a layer whose gradients
vanish or explode stands out, and the words the canvas strip's legend says.

What is shown is coloured: the blocks of the level on the canvas, and the blocks inside each
open group frame (all its copies together), on one scale; a group also gets its per-copy values
(``copy_values``), which the legend lists. :mod:`.strip` draws them on the canvas."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...probes.telemetry import node_values

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

    def scale_at(self, value: float) -> float:
        """Where ``value`` sits on the log scale: 0 at ``lo`` (its blue end), 1 at ``hi`` (red);
        the middle when every value is the same."""
        lo, hi = math.log10(self.lo), math.log10(self.hi)
        return (math.log10(value) - lo) / (hi - lo) if hi > lo else 0.5

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


def legend_text(mode: str) -> str:
    if mode == "off":
        return ""
    return (f"Nodes coloured by {MODES[mode].lower()} (log scale): blue lowest, red highest; "
            "a group shows all its copies together")


def note_line(mode: str, coloured: bool, extra: str) -> str:
    """The line under the telemetry picker: what the colours mean, and ``extra``
    (``ShownState.telemetry``'s: whose look they come from); with nothing ``coloured``,
    ``extra`` alone says why."""
    return extra if not coloured and extra else legend_text(mode) + extra


def legend_lines(shown: Shown | None) -> list[str]:
    """The legend's words: the scale and what the number is, then each open group's copies."""
    if shown is None:
        return []
    at = f" at step {shown.step:,}" if shown.step is not None else ""
    lines = [f"{MODES[shown.mode]}{at}, log scale: {shown.label(shown.lo)} … {shown.hi:.3g}",
             f"{MEANING[shown.mode]}; no unit"]
    for group, values in shown.copies.items():
        each = " · ".join(f"{i}: {v:.3g}" for i, v in enumerate(values))
        lines.append(f"{group} per copy: {each}")
    return lines
