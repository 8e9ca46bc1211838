"""The Explain view's Ablation tab: switches for every block, head and expert, which tokens the loss
is scored on (the whole text, the answer after the last separator, or positions A to B), and
what switching off changed, each loss labelled with the tokens it was computed on."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .explain_lines import SEPARATOR, rescored, span_positions
from .labels import muted

ABLATION_HINT = ("Tick a block, head or expert to switch it off (no retraining) and see the loss "
                 "and the next-token distribution change; the canvas draws the block off. "
                 "Right-click a block on the canvas does the same.")
SPANS = ((f"the answer (after the last “{SEPARATOR}”)", "answer"),
         ("positions from … to …", "range"), ("the whole text only", "none"))


class AblationPage(QWidget):
    """The tab; ``changed`` when a switch or the scored span changes."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.switches = QListWidget()
        self.switches.setToolTip("Tick a block, head or expert to switch it off (no "
                                 "retraining) and see what changes")
        self.switches.itemChanged.connect(lambda _item: self.changed.emit())
        self.span_kind = QComboBox()
        for text, kind in SPANS:
            self.span_kind.addItem(text, kind)
        self.span_kind.setToolTip("Which tokens the loss is also scored on: on a task, the "
                                  "answer is what training scores (the random prompt is "
                                  "never learned)")
        self.span_start, self.span_end = QSpinBox(), QSpinBox()
        for box in (self.span_start, self.span_end):
            box.setRange(1, 1)
            box.valueChanged.connect(lambda _v: self._span_edited())
        self.span_kind.currentIndexChanged.connect(lambda _i: self._span_edited())
        self.report = muted()
        self.report.setWordWrap(True)
        row = QHBoxLayout()
        for widget in (QLabel("Score the loss on"), self.span_kind, self.span_start,
                       QLabel("to"), self.span_end):
            row.addWidget(widget)
        row.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(muted(ABLATION_HINT))
        column.addWidget(self.switches, 1)
        column.addLayout(row)
        column.addWidget(self.report)
        self._span_edited(emit=False)

    def _span_edited(self, emit: bool = True) -> None:
        for box in (self.span_start, self.span_end):
            box.setEnabled(self.span_kind.currentData() == "range")
        if emit and rescored(self.ablations()):
            self.changed.emit()

    def set_targets(self, targets: list[str]) -> None:
        self.switches.blockSignals(True)
        self.switches.clear()
        for target in targets:
            item = QListWidgetItem(target)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Unchecked)
            self.switches.addItem(item)
        self.switches.blockSignals(False)

    def set_length(self, length: int) -> None:
        """The text has ``length`` tokens: positions 1..length-1 can be scored."""
        for box in (self.span_start, self.span_end):
            box.blockSignals(True)
            box.setRange(*span_positions(length))
            box.blockSignals(False)

    def span_choice(self) -> tuple[str, int, int]:
        return self.span_kind.currentData(), self.span_start.value(), self.span_end.value()

    def ablations(self) -> list[str]:
        return [self.switches.item(i).text() for i in range(self.switches.count())
                if self.switches.item(i).checkState() == Qt.Checked]

    def set_ablations(self, targets: list[str]) -> None:
        wanted = set(targets)
        self.switches.blockSignals(True)
        for i in range(self.switches.count()):
            item = self.switches.item(i)
            item.setCheckState(Qt.Checked if item.text() in wanted else Qt.Unchecked)
        self.switches.blockSignals(False)
