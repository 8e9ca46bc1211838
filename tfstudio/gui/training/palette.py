"""The training views' colours as numbers, without Qt: one per overlaid run, expert or head
(:data:`SERIES_COLOURS`, Tableau 10: legible on light and dark), and the ColorBrewer ramps of
heatmaps and canvas telemetry (:func:`ramp_rgb`). colours.py makes them Qt colours and ramps
whole arrays."""
from __future__ import annotations

# Distinct colours for overlaid runs, experts and heads (Tableau 10: legible on light and dark).
SERIES_COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                  "#ff9da7", "#9c755f", "#bab0ac"]

SEQUENTIAL = [(0.0, (247, 251, 255)), (0.25, (198, 219, 239)), (0.5, (107, 174, 214)),
              (0.75, (33, 113, 181)), (1.0, (8, 48, 107))]                    # ColorBrewer Blues
DIVERGING = [(0.0, (33, 102, 172)), (0.25, (146, 197, 222)), (0.5, (247, 247, 247)),
             (0.75, (244, 165, 130)), (1.0, (178, 24, 43))]                   # ColorBrewer RdBu


def series_rgb(i: int) -> tuple[int, int, int]:
    """The ``i``-th run's (expert's, head's) colour; past ten they repeat."""
    code = SERIES_COLOURS[i % len(SERIES_COLOURS)]
    return int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16)


def stops(kind: str) -> list[tuple[float, tuple[int, int, int]]]:
    """The ramp of ``kind``: "diverging" blue through white to red, else the Blues."""
    return DIVERGING if kind == "diverging" else SEQUENTIAL


def ramp_rgb(value: float, kind: str = "sequential") -> tuple[int, int, int]:
    """A value in [0, 1]'s colour along the ramp of ``kind`` ("negative": the Blues reversed,
    dark at 0); NaN as 0, out of range clamped."""
    ramp = stops(kind)
    value = 0.0 if value != value else min(1.0, max(0.0, float(value)))  # NaN as 0
    if kind == "negative":
        value = 1.0 - value
    (x0, low), (x1, high) = next(((a, b) for a, b in zip(ramp, ramp[1:]) if value <= b[0]),
                                 ramp[-2:])
    if value >= x1:
        return high
    return tuple(int((b - a) / (x1 - x0) * (value - x0) + a) for a, b in zip(low, high))
