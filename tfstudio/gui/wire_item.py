"""Wires: bezier curves from an output port to an input port, coloured by what they carry,
with the tensor shape written on them ("B×T×64")."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem

from ..graph import Edge
from ..graph.layout import ABOVE, bezier_points, label_box
from . import theme
from .block_drawing import routed_path, scaled_font
from .block_look import shows_words
from .zoom_rules import small_text_pixels, wire_label_pixels

LABEL_FONT = QFont()
LABEL_FONT.setPixelSize(10)


def bezier(start: QPointF, end: QPointF) -> QPainterPath:
    """A horizontal-tangent cubic: leaves an output to the right, enters an input from the left."""
    dx = max(abs(end.x() - start.x()) * 0.5, 50.0)
    path = QPainterPath(start)
    path.cubicTo(start + QPointF(dx, 0), end - QPointF(dx, 0), end)
    return path


class WireItem(QGraphicsItem):
    """A wire of the model (``edge`` set) or the one being dragged (``edge`` None)."""

    def __init__(self, kind: str, edge: Edge | None = None):
        super().__init__()
        self.edge = edge
        self.kind = kind
        self.label = ""
        self.broken = False  # drawn dashed when a port it needs has gone (an Add lost an input)
        self.hot = False     # a block dragged over it would be spliced in: drawn highlighted
        self.label_at = 0.5  # how far along the wire its label sits (off other labels)
        self.label_side = ABOVE  # ... and on which side (graph.layout.label_box)
        self._start = QPointF()
        self._end = QPointF()
        self._path = QPainterPath()
        self.corners: list[tuple[float, float]] = []  # where a routed wire bends
        self.setZValue(-1)
        if edge is not None:
            self.setFlag(QGraphicsItem.ItemIsSelectable)
            self.setAcceptHoverEvents(True)
            self.setToolTip(str(edge))

    def set_ends(self, start: QPointF, end: QPointF, corners=None) -> None:
        """Run from ``start`` to ``end``: a plain curve, or through ``corners`` around the
        blocks in the way (graph.layout.wire_route)."""
        self.prepareGeometryChange()
        self._start, self._end = QPointF(start), QPointF(end)
        self.corners = list(corners) if corners else []
        if self.corners:
            self._path = routed_path((start.x(), start.y()), (end.x(), end.y()), self.corners)
        else:
            self._path = bezier(self._start, self._end)

    def length(self) -> float:
        return self._path.length()

    def points(self) -> list[tuple[float, float]]:
        """The wire as the layout sees it (scene units): a routed wire's corners, else
        points along its curve."""
        if self.corners:
            return list(self.corners)
        return bezier_points((self._start.x(), self._start.y()), (self._end.x(), self._end.y()))

    def drawn_rect(self) -> QRectF:
        """The wire's line in scene coordinates (a routed wire may pass left of every block:
        fitting the view takes it in)."""
        return self.mapRectToScene(self._path.boundingRect())

    def set_hot(self, on: bool) -> None:
        if on != self.hot:
            self.hot = on
            self.update()

    def set_label(self, text: str) -> None:
        self.prepareGeometryChange()
        self.label = text
        if self.edge is not None:
            self.setToolTip(f"{self.edge}\nshape: {text}" if text else str(self.edge))
        self.update()

    def set_label_at(self, fraction: float, side: str = ABOVE) -> None:
        if (fraction, side) != (self.label_at, self.label_side):
            self.prepareGeometryChange()
            self.label_at, self.label_side = fraction, side
            self.update()

    def label_rect(self, fraction: float | None = None, side: str | None = None) -> QRectF:
        """The label's box at 100% zoom, at ``fraction`` along the wire, on ``side`` of it
        (default: where it is)."""
        return self._label_rect(LABEL_FONT, fraction, side)

    def _label_rect(self, font: QFont = LABEL_FONT, fraction: float | None = None,
                    side: str | None = None) -> QRectF:
        if not self.label:
            return QRectF()
        fm = QFontMetricsF(font)
        size = (fm.horizontalAdvance(self.label) + 8, fm.height() + 2)
        mid = self._path.pointAtPercent(self.label_at if fraction is None else fraction)
        box = label_box((mid.x(), mid.y()), size, self.label_side if side is None else side)
        return QRectF(*box)

    def _label_font(self, lod: float) -> QFont:
        """The label's font: enlarged when zoomed out, shrunk to fit between the two blocks
        (the label sits in the gap between them) but never below what can still be read, so
        a short wire keeps its shape too."""
        room = max(abs(self._end.x() - self._start.x()), abs(self._end.y() - self._start.y()))
        width = self._label_rect(scaled_font(small_text_pixels(lod))).width()
        return scaled_font(wire_label_pixels(lod, room, width))

    def boundingRect(self) -> QRectF:
        # room for the label at its largest (zoomed all the way out)
        return self._path.boundingRect().adjusted(-6, -6, 6, 6).united(
            self._label_rect(scaled_font(small_text_pixels(0.0))))

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(12)  # easy to click, the drawn line stays thin
        return stroker.createStroke(self._path)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        t = theme.current()
        painter.setRenderHint(QPainter.Antialiasing)
        colour = theme.port_colour(self.kind)
        width = 2.4
        if self.isSelected() or self.hot:
            painter.setPen(QPen(t.color("accent" if self.hot else "selection"), width + 4,
                                Qt.SolidLine, Qt.RoundCap))
            painter.drawPath(self._path)
        pen = QPen(t.color("error") if self.broken else colour, width, Qt.SolidLine, Qt.RoundCap)
        if self.edge is None or self.broken:
            pen.setStyle(Qt.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self._path)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if self.label and shows_words(lod):
            font = self._label_font(lod)
            rect = self._label_rect(font)
            painter.setPen(Qt.NoPen)
            painter.setBrush(QBrush(t.color("label_back")))
            painter.drawRoundedRect(rect, 4, 4)
            painter.setPen(t.color("muted_text"))
            painter.setFont(font)
            painter.drawText(rect, Qt.AlignCenter, self.label)
