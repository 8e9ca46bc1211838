"""The canvas's grid (no Qt): shown only from a zoom where its lines are apart, a major line
every fifth, lines at whole multiples of the step. view.drawBackground draws what this says."""
from __future__ import annotations

HIDDEN_BELOW = 0.3  # zoomed out further, the lines would merge into a grey wash
MAJOR_EVERY = 5


def shows_grid(zoom: float) -> bool:
    return zoom >= HIDDEN_BELOW


def grid_lines(low: float, high: float, step: float) -> list[tuple[float, bool]]:
    """The lines from the multiple of ``step`` at or below ``low`` to before ``high``, each with
    whether it is a major line (a whole multiple of MAJOR_EVERY steps, counted from 0)."""
    lines = []
    at = int(low // step) * step
    while at < high:
        lines.append((at, round(at / step) % MAJOR_EVERY == 0))
        at += step
    return lines


def snaps(snap_on: bool, dragging: bool, force: bool = False) -> bool:
    """Whether a block's position goes on the grid: with snapping on, while the user drags it
    or where a move lands (``force``); positions read from a file are kept exact."""
    return snap_on and (dragging or force)


def on_grid(x: float, y: float, step: float) -> tuple[float, float]:
    """The grid point nearest (x, y)."""
    return round(x / step) * step, round(y / step) * step
