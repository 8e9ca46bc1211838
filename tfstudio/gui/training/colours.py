"""Colours of the training views: one per overlaid run, expert or head, the ColorBrewer ramps
of heatmaps and canvas telemetry, and the theme's named colours."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from .. import theme

# Distinct colours for overlaid runs, experts and heads (Tableau 10: legible on light and dark).
SERIES_COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                  "#ff9da7", "#9c755f", "#bab0ac"]

def series_colour(i: int) -> QColor:
    return QColor(SERIES_COLOURS[i % len(SERIES_COLOURS)])


_SEQUENTIAL = [(0.0, (247, 251, 255)), (0.25, (198, 219, 239)), (0.5, (107, 174, 214)),
               (0.75, (33, 113, 181)), (1.0, (8, 48, 107))]                   # ColorBrewer Blues
_DIVERGING = [(0.0, (33, 102, 172)), (0.25, (146, 197, 222)), (0.5, (247, 247, 247)),
              (0.75, (244, 165, 130)), (1.0, (178, 24, 43))]                  # ColorBrewer RdBu


def colour_ramp(values: np.ndarray, kind: str = "sequential") -> np.ndarray:
    """Values in [0, 1] -> uint8 RGB [..., 3] along a ColorBrewer ramp: "sequential" light to
    dark, "negative" the same ramp reversed (dark at 0, the scale's most negative end; white
    at 1, its 0), "diverging" blue through white to red."""
    stops = _DIVERGING if kind == "diverging" else _SEQUENTIAL
    xs = np.array([s[0] for s in stops])
    values = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
    if kind == "negative":
        values = 1.0 - values
    rgb = np.stack([np.interp(values, xs, [s[1][c] for s in stops]) for c in range(3)], -1)
    return rgb.astype(np.uint8)


def ramp_colour(value: float, kind: str = "sequential") -> QColor:
    """One value's colour of ``colour_ramp``, the same arithmetic without numpy's overhead (a
    look inside colours a dozen blocks)."""
    stops = _DIVERGING if kind == "diverging" else _SEQUENTIAL
    value = 0.0 if value != value else min(1.0, max(0.0, float(value)))  # NaN as 0
    if kind == "negative":
        value = 1.0 - value
    (x0, low), (x1, high) = next(((a, b) for a, b in zip(stops, stops[1:]) if value <= b[0]),
                                 stops[-2:])
    if value >= x1:
        return QColor(*high)
    return QColor(*(int((b - a) / (x1 - x0) * (value - x0) + a) for a, b in zip(low, high)))


def themed_colour(attribute: str) -> QColor:
    return theme.current().color(attribute)
