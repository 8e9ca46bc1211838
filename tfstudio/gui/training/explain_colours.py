"""The colours of Explain's pictures as rgb, without Qt: a vector's strip (white at zero, red
above, blue below, on a scale symmetric around zero; grey where masked) and a logit-lens cell's
background (deeper blue the surer it is). The widgets paint them."""
from __future__ import annotations

import math

import numpy as np

MASKED_RGB = (160, 160, 160)   # a value the model could not see (not finite)


def strip_scale(values) -> float:
    """The |value| a strip's full colour stands for: its largest finite one (0: none)."""
    finite = np.asarray(values, dtype=np.float64).reshape(-1)
    finite = finite[np.isfinite(finite)]
    return float(np.abs(finite).max()) if finite.size else 0.0


def strip_rgb(value: float, scale: float) -> tuple[int, int, int]:
    """A strip cell's colour: blue for negative, red for positive, white at zero, as saturated
    as |value| is of ``scale`` (clamped); grey for a masked value."""
    if not math.isfinite(value):
        return MASKED_RGB
    t = max(-1.0, min(1.0, value / scale)) if scale > 0 else 0.0
    if t >= 0:
        return 255, int(255 * (1 - t)), int(255 * (1 - t))
    return int(255 * (1 + t)), int(255 * (1 + t)), 255


def lens_rgb(p: float) -> tuple[int, int, int]:
    """A lens cell's background: white at probability 0, deep blue at 1."""
    t = min(max(float(p), 0.0), 1.0)
    return int(255 - 215 * t), int(255 - 175 * t), int(255 - 75 * t)
