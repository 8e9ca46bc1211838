"""Colours of the training views as Qt colours: one per overlaid run, expert or head, the
ColorBrewer ramps of heatmaps and canvas telemetry (the numbers: :mod:`.palette`), and the
theme's named colours."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from .. import theme
from .palette import ramp_rgb, series_rgb, stops


def series_colour(i: int) -> QColor:
    return QColor(*series_rgb(i))


def colour_ramp(values: np.ndarray, kind: str = "sequential") -> np.ndarray:
    """Values in [0, 1] -> uint8 RGB [..., 3] along a ColorBrewer ramp: "sequential" light to
    dark, "negative" the same ramp reversed (dark at 0, the scale's most negative end; white
    at 1, its 0), "diverging" blue through white to red."""
    ramp = stops(kind)
    xs = np.array([s[0] for s in ramp])
    values = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
    if kind == "negative":
        values = 1.0 - values
    rgb = np.stack([np.interp(values, xs, [s[1][c] for s in ramp]) for c in range(3)], -1)
    return rgb.astype(np.uint8)


def ramp_colour(value: float, kind: str = "sequential") -> QColor:
    """One value's colour of ``colour_ramp``, the same arithmetic without numpy's overhead (a
    look inside colours a dozen blocks): :func:`~.palette.ramp_rgb`."""
    return QColor(*ramp_rgb(value, kind))


def themed_colour(attribute: str) -> QColor:
    return theme.current().color(attribute)
