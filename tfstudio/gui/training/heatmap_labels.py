"""Which token labels a heatmap writes when its cells are smaller than a line of text, without
Qt: every k-th row and column (:func:`label_stride`), never two closer than a line, and the
hovered row always (:func:`rows_to_label`). :class:`~.heatmap.Heatmap` lays them out."""
from __future__ import annotations

import math


def label_stride(line: float, cell: float) -> int:
    """k: label every k-th token, so labels of cells ``cell`` pixels apart are at least a
    ``line`` (the label's height) apart."""
    return max(1, math.ceil(line / cell))


def rows_to_label(visible: range, stride: int, hover: int | None = None) -> list[int]:
    """The ``visible`` rows (and, the same, columns) labelled at ``stride``: every k-th; the
    ``hover``ed row gets its own label, and labels nearer to it than k give it room."""
    shown = [r for r in visible if r % stride == 0]
    if hover is not None and stride > 1:
        shown = sorted({r for r in shown if abs(r - hover) >= stride} | {hover})
    return shown
