"""Canvas units: graph positions are spread by CANVAS_SCALE on the canvas, so the wire
between two neighbours is long enough to carry its shape label (graph/layout.py says why)."""
from __future__ import annotations

from PySide6.QtCore import QPointF

from ..graph.layout import CANVAS_SCALE

SPREAD = CANVAS_SCALE  # canvas units per graph unit


def to_scene(pos: tuple[float, float]) -> QPointF:
    return QPointF(pos[0] * SPREAD, pos[1] * SPREAD)


def to_graph(point: QPointF) -> tuple[float, float]:
    return (round(point.x() / SPREAD, 2), round(point.y() / SPREAD, 2))
