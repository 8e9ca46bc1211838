"""Canvas units: graph positions are spread by CANVAS_SCALE on the canvas, so the wire
between two neighbours is long enough to carry its shape label (graph/layout.py says why).
The arithmetic needs no Qt; a canvas point is Qt's QPointF, made only where one is asked for."""
from __future__ import annotations

from ..graph.layout import CANVAS_SCALE

SPREAD = CANVAS_SCALE  # canvas units per graph unit


def to_scene(pos: tuple[float, float]):
    """The canvas point (a QPointF) of graph position ``pos``."""
    from PySide6.QtCore import QPointF

    return QPointF(pos[0] * SPREAD, pos[1] * SPREAD)


def to_graph(point) -> tuple[float, float]:
    """The graph position of canvas point ``point`` (anything with x() and y()), to 0.01."""
    return (round(point.x() / SPREAD, 2), round(point.y() / SPREAD, 2))
