"""The walk drawn as the forward pass: the residual stream as a spine from left to right, cut into
stretches (the embedding, each layer copy, the final norm and head, the sampling) named above
it; under each stretch a box per block the stream passes through, in the order computed (its
branch reads the spine and adds back), and in each box a small square per stage it computes. The stage explained is
filled in the accent colour and its block outlined; a click on a square explains that stage.

:mod:`.flow_layout` is the layout as plain data (tested without painting)."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from .colours import themed_colour
from .flow_layout import SPINE_Y, TITLE, FlowBlock, FlowColumn, flow_columns, flow_geometry

KIND_COLOURS = {"attention": (214, 226, 247), "cross_attention": (214, 226, 247),
                "feed_forward": (222, 240, 220), "moe": (222, 240, 220),
                "norm": (240, 236, 222), "layer": (236, 236, 236), "sampling": (246, 226, 214)}


class FlowDiagram(QWidget):
    """The picture itself (see the module docstring); ``stage_clicked(index)`` on a click."""

    stage_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.columns: list[FlowColumn] = []
        self.names: list[str] = []
        self.current = -1
        self._squares: list[tuple[QRectF, int]] = []
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.ClickFocus)   # clicked, the arrow keys walk on from there
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)

    def set_stages(self, summaries: list[dict]) -> None:
        self.columns = flow_columns(summaries)
        self.names = [s["name"] for s in summaries]
        self.current = -1
        self._lay_out()
        self.update()

    def set_current(self, index: int) -> None:
        self.current = index
        self.update()

    def square_of(self, index: int) -> QRectF | None:
        """Where stage ``index`` is drawn (for tests and for scrolling it into view)."""
        return next((rect for rect, i in self._squares if i == index), None)

    def _lay_out(self) -> None:
        geometry = flow_geometry(self.columns)
        self._boxes: list[tuple[QRectF, FlowBlock]] = [(QRectF(*rect), block)
                                                       for rect, block in geometry.boxes]
        self._spans: list[tuple[float, float, str]] = geometry.spans
        self._squares = [(QRectF(*rect), index) for rect, index in geometry.squares]
        self.setFixedSize(*geometry.size)

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        ink, accent = QColor(themed_colour("node_text")), QColor(themed_colour("accent"))
        grey = QColor(120, 120, 120)
        painter.setPen(QPen(grey, 3))
        right = self.width() - 10
        painter.drawLine(QPointF(4, SPINE_Y), QPointF(right, SPINE_Y))
        painter.setBrush(grey)
        painter.drawPolygon(QPolygonF([QPointF(right + 6, SPINE_Y),
                                       QPointF(right - 2, SPINE_Y - 5),
                                       QPointF(right - 2, SPINE_Y + 5)]))
        metrics = painter.fontMetrics()
        for start, end, title in self._spans:
            painter.setPen(QPen(grey, 1))
            painter.drawLine(QPointF(start - 6, SPINE_Y - 8), QPointF(start - 6, SPINE_Y + 8))
            painter.setPen(ink)
            painter.drawText(QRectF(start, 0, end - start, SPINE_Y - 4),
                             Qt.AlignLeft | Qt.AlignVCenter,
                             metrics.elidedText(title, Qt.ElideRight, int(end - start)))
        current_block = None
        for box, block in self._boxes:
            # the branch: read from the spine on the left, added back on the right
            painter.setPen(QPen(QColor(150, 150, 150), 1))
            painter.drawLine(QPointF(box.left() + 4, SPINE_Y), QPointF(box.left() + 4, box.top()))
            painter.drawLine(QPointF(box.right() - 4, box.top()),
                             QPointF(box.right() - 4, SPINE_Y))
            painter.setBrush(QColor(*KIND_COLOURS.get(block.kind, (238, 238, 238))))
            painter.drawRoundedRect(box, 4, 4)
            painter.setPen(QColor(40, 40, 40))
            painter.drawText(QRectF(box.left() + 5, box.top(), box.width() - 7, TITLE),
                             Qt.AlignLeft | Qt.AlignVCenter,
                             metrics.elidedText(block.name, Qt.ElideRight, int(box.width() - 7)))
            if self.current in block.stages:
                current_block = box
        for rect, index in self._squares:
            painter.setPen(QPen(QColor(70, 70, 70), 1))
            painter.setBrush(accent if index == self.current else QColor(255, 255, 255))
            painter.drawRect(rect)
        if current_block is not None:
            painter.setBrush(Qt.NoBrush)
            painter.setPen(QPen(accent, 2.5))
            painter.drawRoundedRect(current_block.adjusted(-1, -1, 1, 1), 5, 5)
        painter.end()

    def _stage_at(self, point) -> int | None:
        return next((i for rect, i in self._squares
                     if rect.adjusted(-1, -1, 1, 1).contains(point)), None)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        index = self._stage_at(event.position())
        if index is not None:
            self.stage_clicked.emit(index)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        index = self._stage_at(event.position())
        self.setToolTip(self.names[index] if index is not None else "")
