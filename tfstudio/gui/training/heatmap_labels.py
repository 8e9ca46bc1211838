"""Which token labels a heatmap writes, without Qt: whether it writes any (:func:`labelled`),
and when its cells are smaller than a line of text every k-th row and column
(:func:`label_stride`), never two closer than a line, and the hovered row always
(:func:`rows_to_label`). :class:`~.heatmap.Heatmap` lays them out."""
from __future__ import annotations

import math

MAX_LABELLED = 96  # more rows or columns than this and labels would overlap: leave them out


def labelled(wanted: bool, fit: bool, rows: int, cols: int, scrollable: bool) -> bool:
    """Whether a map of ``rows`` x ``cols`` labelled tokens writes them (``wanted``, and
    ``fit`` while their layout fits): every one of up to MAX_LABELLED each way, or any number
    in a scrollable map, which shows a window of readable cells."""
    most = rows + cols if scrollable else MAX_LABELLED
    return wanted and fit and 0 < rows <= most and 0 < cols <= most


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
