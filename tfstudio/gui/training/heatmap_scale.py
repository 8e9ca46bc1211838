"""The numbers a heatmap's colour scale stands for, without Qt: the range its colours span
(:func:`scale_range`), where each value sits on it (:func:`on_scale`) and the text at each end
of its colour bar (:func:`bar_label`). :mod:`.heatmap_paint` draws them."""
from __future__ import annotations

import numpy as np


def scale_range(values: np.ndarray, kind: str) -> tuple[float, float]:
    """The values a colour scale spans, from the finite ``values`` it shows: "diverging" is
    symmetric about 0 (±max |v|); "sequential" starts at 0, never at the data's minimum, so
    a map of small weights looks light (it goes below 0 only for negative values); "negative"
    (a quantity that is never positive, as an ALiBi bias) ends at 0 and is darkest at its most
    negative value."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if kind == "diverging":
        top = float(np.abs(values).max()) if values.size else 0.0
        return (-top, top) if top > 0 else (-1.0, 1.0)
    if kind == "negative":
        low = float(values.min()) if values.size else 0.0
        return (low, 0.0) if low < 0 else (-1.0, 0.0)
    top = float(values.max()) if values.size else 0.0
    low = min(0.0, float(values.min()) if values.size else 0.0)
    return (low, top if top > low else low + 1.0)


def on_scale(values: np.ndarray, value_range: tuple[float, float]) -> np.ndarray:
    """Where ``values`` sit on the colour scale spanning ``value_range``: 0 at its low end, 1
    at its high end (a flat range: the values less its low end)."""
    lo, hi = value_range
    return (values - lo) / (hi - lo if hi > lo else 1.0)


def bar_label(value: float) -> str:
    """A colour bar's end in two significant digits and at most seven characters: powers of
    ten past three zeros, their exponent unpadded ("-1.2e-4", "3.8e2", "-0.19")."""
    text = f"{value:.2g}"
    if "e" not in text and len(text.lstrip("-")) > 6:  # 0.00012
        text = f"{value:.1e}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text
