"""The Explain view's Walk tab: the forward pass as a drawn flow (:mod:`.explain_flow`), the stage
explained as its picture under it (:mod:`.explain_stages`), and that stage in every layer side
by side; Previous / Next (or the arrow keys) walk it, a click on the flow or on a canvas block
jumps, and the canvas lights the block explained (:func:`follow_canvas`)."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from .explain_flow import FlowDiagram
from .explain_links import lit_node, stage_for_block
from .flow_layout import across_layers
from .explain_lines import layers_title, stage_line, walk_buttons
from .explain_stages import StagePicture
from .labels import muted

WALK_HINT = ("The forward pass of the picked Token, drawn left to right along the residual "
             "stream: a box per block, a square per step it computes. Click a square, or walk "
             "with Next / Previous (or the arrow keys); the canvas lights the block. Below: the "
             "step's picture, then the same step in every layer side by side.")
LAYER_PICTURE_WIDTH = 220   # the narrowest a layer's picture gets in the row across the layers


def light_block(scene, block: str) -> None:
    """Select ``block`` ("layers.0.attn") on the canvas, or the group holding it when the
    canvas shows a level above it."""
    node = lit_node(tuple(scene.path), block)
    if node is not None:
        scene.select_nodes([node])


def follow_canvas(explain, scene) -> None:
    """Link ``explain``'s stages and the canvas ``scene`` both ways: the stage's block lit,
    a block selected there explained."""
    def lit(block: str) -> None:
        try:
            light_block(scene, block)
        except RuntimeError:   # the canvas is gone (the window is closing)
            pass

    def picked() -> None:
        try:
            explain.show_block(scene.path, scene.selected_node_ids())
        except RuntimeError:
            pass
    explain.stage_changed.connect(lit)
    scene.selectionChanged.connect(picked)


class WalkPage(QWidget):
    """The tab; ``stage_changed(block)`` when another stage is explained."""

    stage_changed = Signal(str)
    failed = Signal(object)   # an exception a slot caught

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.stage = -1
        self.summaries: list[dict] = []
        self._make_picture = None   # (summary index) -> a StagePicture for the row
        self.flow = FlowDiagram()
        self.flow.stage_clicked.connect(self.set_stage)
        self.flow_scroll = QScrollArea()
        self.flow_scroll.setWidget(self.flow)
        self.flow_scroll.setWidgetResizable(False)
        self.flow_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.steps_column = QVBoxLayout()   # every stage's picture; only the current shown
        self.steps_column.addStretch(0)
        self.layers_title = muted()
        self.layers_row = QHBoxLayout()
        self.layers_row.addStretch(1)
        inner = QWidget()
        column = QVBoxLayout(inner)
        column.addLayout(self.steps_column)
        column.addWidget(self.layers_title)
        column.addLayout(self.layers_row)
        column.addStretch(1)   # the room left goes under the pictures, not between them
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(inner)
        self.previous_button = QPushButton("◀ Previous")
        self.next_button = QPushButton("Next ▶")
        self.previous_button.clicked.connect(lambda: self.move_stage(-1))
        self.next_button.clicked.connect(lambda: self.move_stage(1))
        self.stage_label = QLabel("")
        top = QHBoxLayout()
        for widget in (self.previous_button, self.next_button):
            top.addWidget(widget)
        top.addWidget(self.stage_label, 1)
        page = QVBoxLayout(self)
        page.setContentsMargins(0, 4, 0, 0)
        page.addLayout(top)
        page.addWidget(muted(WALK_HINT))
        page.addWidget(self.flow_scroll)
        page.addWidget(self.scroll, 1)
        for key, step in ((Qt.Key_Right, 1), (Qt.Key_Down, 1), (Qt.Key_Left, -1),
                          (Qt.Key_Up, -1)):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.WidgetWithChildrenShortcut)
            shortcut.activated.connect(lambda step=step: self.move_stage(step))

    def show_stages(self, summaries: list[dict], pictures: list[StagePicture], make_picture,
                    stage: int) -> None:
        """A new walk: its ``pictures`` (one per summary), the flow of its stages, and stage
        ``stage`` explained; ``make_picture(i)`` makes another picture of stage i (for the row
        across the layers)."""
        self.clear()
        self.summaries, self._make_picture = summaries, make_picture
        for picture in pictures:
            picture.hide()
            self.steps_column.insertWidget(self.steps_column.count() - 1, picture)
        self.flow.set_stages(summaries)
        bar = self.flow_scroll.horizontalScrollBar().sizeHint().height()
        self.flow_scroll.setFixedHeight(self.flow.height() + bar + 4)
        self.flow_scroll.show()
        self.set_stage(min(max(stage, 0), len(pictures) - 1))

    def clear(self) -> None:
        self.summaries, self._make_picture = [], None
        for layout in (self.steps_column, self.layers_row):
            while layout.count() > 1:
                widget = layout.takeAt(0).widget()
                if widget is not None:   # hidden now: one waiting for deletion paints no more
                    widget.hide()
                    widget.deleteLater()
        self.layers_title.setText("")
        self.flow.set_stages([])
        self.flow_scroll.hide()
        self.set_stage(-1)

    def pictures(self) -> list[StagePicture]:
        return [self.steps_column.itemAt(i).widget()
                for i in range(self.steps_column.count() - 1)]

    def move_stage(self, step: int) -> None:
        """Next (+1) or previous (-1) stage of the walk (none past either end)."""
        if 0 <= self.stage + step < len(self.pictures()):
            self.set_stage(self.stage + step)

    def set_stage(self, index: int) -> None:
        """Explain stage ``index``: lit on the flow, its picture shown with the same stage in
        every layer beside it, its block lit on the canvas (``stage_changed``)."""
        try:
            pictures = self.pictures()
            if not pictures:
                self.stage = -1
                self.stage_label.setText("")
                self.previous_button.setEnabled(False)
                self.next_button.setEnabled(False)
                return
            self.stage = min(max(index, 0), len(pictures) - 1)
            for i, picture in enumerate(pictures):
                picture.set_current(i == self.stage)
                picture.setVisible(i == self.stage)
            current = pictures[self.stage]
            self.flow.set_current(self.stage)
            square = self.flow.square_of(self.stage)
            if square is not None:
                self.flow_scroll.ensureVisible(int(square.center().x()),
                                               int(square.center().y()), 40, 20)
            self._fill_layers_row()
            # lay out what this walk just made, so the scroll knows where it is
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
            self.scroll.ensureWidgetVisible(current, 0, 0)
            self.stage_label.setText(stage_line(self.stage, len(pictures), current.name))
            previous, following = walk_buttons(self.stage, len(pictures))
            self.previous_button.setEnabled(previous)
            self.next_button.setEnabled(following)
            self.stage_changed.emit(current.block)
        except Exception as exc:  # a slot must never take the app down
            self.failed.emit(exc)

    def layer_pictures(self) -> list[StagePicture]:
        return [self.layers_row.itemAt(i).widget() for i in range(self.layers_row.count() - 1)]

    def _fill_layers_row(self) -> None:
        while self.layers_row.count() > 1:
            widget = self.layers_row.takeAt(0).widget()
            widget.hide()
            widget.deleteLater()
        names = [s["name"] for s in self.summaries]
        same = across_layers(names, self.stage) if 0 <= self.stage < len(names) else []
        if len(same) < 2 or self._make_picture is None:
            self.layers_title.setText("")
            return
        self.layers_title.setText(layers_title(names[self.stage], len(same)))
        # the row fills the view's width when it can, else scrolls
        spare = self.scroll.viewport().width() - 30 - 8 * len(same)   # margins, spacing
        width = max(LAYER_PICTURE_WIDTH, spare // len(same))
        for i in same:
            picture = self._make_picture(i)
            picture.setFixedWidth(width)
            picture.set_current(i == self.stage)
            self.layers_row.insertWidget(self.layers_row.count() - 1, picture)
            picture.show()

    def show_block(self, path: tuple, node_ids: list[str]) -> None:
        """Jump to the first stage of the block clicked on the canvas (in the layer of the
        stage shown, when the block is repeated); stays if that block is already shown."""
        pictures = self.pictures()
        index = stage_for_block([p.block for p in pictures], self.stage, path, node_ids)
        if index is not None:
            self.set_stage(index)
