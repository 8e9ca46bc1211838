"""Where a heatmap's cells go, without Qt, from sizes as numbers: each cell's size in the room
left by the labels, title and colour bar (:func:`cell_size`), square cells centred in that
room (:func:`centred_left`), column labels turned upright when they cannot sit side by side
(:func:`rotate_labels`), the runs of masked cells hatched as one rectangle each
(:func:`masked_runs`), how strongly the hovered query's keys are shaded
(:func:`hover_shades`), a cell's tooltip (:func:`cell_tip`), and where each map of a grid
goes (:func:`grid_places`). heatmap.py measures the labels and draws."""
from __future__ import annotations

import math

import numpy as np

SHADE_FROM = 0.02    # keys the hovered query reads less than this (of its most read): unshaded
SHADE_ALPHA = 0.6    # the most read key's shade


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


def hover_shades(weights: np.ndarray, allowed: np.ndarray) -> list[float | None]:
    """Each column label's shade (an alpha; None: not shaded) while a query row with these
    ``weights`` is hovered: how much it reads each key, against the key it reads most; masked
    keys count as 0."""
    row = np.where(allowed, weights, 0.0)
    top = row.max() if row.size and row.max() > 0 else 1.0
    return [float(min(1.0, w)) * SHADE_ALPHA if w > SHADE_FROM else None for w in row / top]


def cell_tip(rows: list[str], cols: list[str], row: int, col: int, value: float,
             allowed: bool) -> str:
    """The tooltip of the cell under the mouse: its query and key tokens (when labelled) and
    its value, or that it is masked."""
    what = "masked" if not allowed else f"{value:.4g}"
    return (f"{rows[row]} → {cols[col]}: " if rows and cols else "") + what


def grid_places(maps: int, shared_scale: bool) -> list[tuple[int, int, bool]]:
    """(row, column, whether it draws a colour bar) of each of ``maps`` maps in a square-ish
    grid: one colour bar per row when they share a scale (the last map's row included), else
    one per map."""
    columns = max(1, int(math.ceil(math.sqrt(maps))))
    return [(i // columns, i % columns,
             not shared_scale or i % columns == columns - 1 or i == maps - 1)
            for i in range(maps)]
