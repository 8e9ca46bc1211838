"""Where a heatmap's cells go, without Qt, from sizes as numbers: each cell's size in the room
left by the labels, title and colour bar (:func:`cell_size`), square cells centred in that
room (:func:`centred_left`), column labels turned upright when they cannot sit side by side
(:func:`rotate_labels`), and the runs of masked cells hatched as one rectangle each
(:func:`masked_runs`). heatmap.py measures the labels and draws."""
from __future__ import annotations

import numpy as np


def cell_size(width: float, height: float, rows: int, cols: int, square: bool,
              cell: float | None = None) -> tuple[float, float]:
    """(cell width, cell height) for ``rows`` x ``cols`` cells in ``width`` x ``height``:
    a window's fixed ``cell``; the largest square that fits both ways (matrices of tokens);
    else the room shared out (never under a pixel)."""
    if cell is not None:
        return cell, cell
    if square:
        side = max(min(width / cols, height / rows), 1.0)
        return side, side
    return max(width / cols, 1.0), max(height / rows, 1.0)


def centred_left(left: float, width: float, cell_width: float, cols: int, square: bool
                 ) -> float:
    """Where the cells start: square cells centred in the ``width`` left over, else at
    ``left``."""
    return left + max(0.0, (width - cell_width * cols) / 2) if square else left


def rotate_labels(widest: float, cell_width: float, stride: int) -> bool:
    """Whether the column labels (the widest ``widest`` pixels) are too wide to sit side by
    side, every ``stride``-th one ``stride`` cells apart: then they stand upright."""
    return widest > cell_width * stride - 2


def masked_runs(masked: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, column past the last) of each run of masked cells in each row."""
    runs = []
    for r, row in enumerate(np.asarray(masked, dtype=bool)):
        c = 0
        while c < len(row):
            if row[c]:
                start = c
                while c < len(row) and row[c]:
                    c += 1
                runs.append((r, start, c))
            else:
                c += 1
    return runs
