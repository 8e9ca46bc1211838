"""The walk drawn as the forward pass: the residual stream as a spine from left to right, cut into
stretches (the embedding, each layer copy, the final norm and head, the sampling) named above
it; under each stretch a box per block the stream passes through, in the order computed (its
branch reads the spine and adds back), and in each box a small square per stage it computes. The stage explained is
filled in the accent colour and its block outlined; a click on a square explains that stage.

:func:`flow_columns` is the layout as plain data (tested without painting)."""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from .colours import themed_colour

CELL = 11          # a stage's square
GAP = 3            # between squares
PER_LINE = 4       # squares per line in a block's box
COLUMN = PER_LINE * (CELL + GAP) + 14   # a box's width
TITLE = 14         # a box's title line
SPINE_Y = 22       # the spine's height from the top (the column titles sit above it)
KIND_COLOURS = {"attention": (214, 226, 247), "cross_attention": (214, 226, 247),
                "feed_forward": (222, 240, 220), "moe": (222, 240, 220),
                "norm": (240, 236, 222), "layer": (236, 236, 236), "sampling": (246, 226, 214)}


@dataclass
class FlowBlock:
    name: str                  # "attn", or the block itself at the top level ("embed")
    kind: str
    stages: list[int] = field(default_factory=list)   # indices into the walk's stages


@dataclass
class FlowColumn:
    title: str                 # "embed", "layer 0", "sampling"
    section: str               # "layers.0", "embed", "" for sampling
    blocks: list[FlowBlock] = field(default_factory=list)


def section_of(block: str) -> tuple[str, str]:
    """(the stretch of the stream a step's block belongs to, the block's name inside it):
    "layers.0.attn" -> ("layers.0", "attn"); "layers.0" (the stream a layer hands on) ->
    ("layers.0", "stream"); "embed" -> ("embed", "embed"); "" (sampling) -> ("", "sampling")."""
    if not block:
        return "", "sampling"
    parts = block.split(".")
    copy = next((i for i, p in enumerate(parts) if p.isdigit()), None)
    if copy is None:
        return block, block
    section = ".".join(parts[:copy + 1])
    return section, ".".join(parts[copy + 1:]) or "stream"


def column_title(section: str) -> str:
    if not section:
        return "sampling"
    group, _, copy = section.rpartition(".")
    if copy.isdigit():
        return f"layer {copy}" if group == "layers" else f"{group} {copy}"
    return section


def flow_columns(summaries: list[dict]) -> list[FlowColumn]:
    """The stages grouped as drawn: consecutive stages of one stretch of the stream make a
    column, consecutive stages of one block a box in it. Top-level blocks in a row (embed,
    pos) share a column, so the stream's start and end stay narrow."""
    columns: list[FlowColumn] = []
    for index, summary in enumerate(summaries):
        section, name = section_of(summary.get("block", ""))
        kind = "sampling" if not section else summary.get("kind", "")
        top = section == name and section != ""
        last = columns[-1] if columns else None
        same = last is not None and (last.section == section or
                                     (top and last.section.startswith("top:")))
        if not same:
            last = FlowColumn(section if top else column_title(section),
                              f"top:{section}" if top else section)
            columns.append(last)
        elif top and last.title != section and section not in last.title.split(" · "):
            last.title += f" · {section}"
        if not last.blocks or last.blocks[-1].name != name:
            last.blocks.append(FlowBlock(name, kind))
        last.blocks[-1].stages.append(index)
    return columns


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
        self._boxes: list[tuple[QRectF, FlowBlock]] = []
        self._spans: list[tuple[float, float, str]] = []   # each stretch: x from, x to, title
        self._squares = []
        x, height = 8.0, SPINE_Y + 12
        for column in self.columns:
            start = x
            for block in column.blocks:
                lines = -(-len(block.stages) // PER_LINE)
                box = QRectF(x, SPINE_Y + 10, COLUMN, TITLE + lines * (CELL + GAP) + 4)
                self._boxes.append((box, block))
                for k, index in enumerate(block.stages):
                    row, col = divmod(k, PER_LINE)
                    self._squares.append((QRectF(x + 7 + col * (CELL + GAP),
                                                 box.top() + TITLE + row * (CELL + GAP),
                                                 CELL, CELL), index))
                x += COLUMN + 6
                height = max(height, box.bottom() + 6)
            self._spans.append((start, x - 6, column.title))
            x += 12
        self.setFixedSize(int(x + 12), int(height))

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
