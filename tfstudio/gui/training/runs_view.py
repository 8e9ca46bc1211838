"""The run history: every run this app trained or opened, remembered across restarts. Tick a
run to overlay its curves; open one to look inside it again (its snapshots and its weights)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..param_count import RUN_HEADER, RUN_HEADER_TIP
from .history import RunRecord
from .labels import muted
from .run_lines import COLUMNS, runs_row


def _choose_run_folder(parent) -> str:
    return QFileDialog.getExistingDirectory(parent, "Open a run folder")


OPEN_RUN_FOLDER = [_choose_run_folder]  # tests replace it


class RunsView(QWidget):
    open_requested = Signal(object)              # RunRecord
    overlay_toggled = Signal(object, bool)       # RunRecord, shown
    forget_requested = Signal(object)            # RunRecord
    add_folder_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self.notes: dict[str, str] = {}  # run folder -> a line about its checkpoints
        self.note = QLabel()  # not muted: a damaged checkpoint is worth reading
        self.note.setWordWrap(True)
        self.note.hide()
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.headerItem().setToolTip(COLUMNS.index(RUN_HEADER), RUN_HEADER_TIP)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.itemDoubleClicked.connect(lambda item, _: self._open(item))
        self.open = QPushButton("Open")
        self.open.setToolTip("Show this run's curves, snapshots and weights in every view")
        self.open.clicked.connect(lambda: self._open(self.tree.currentItem()))
        add = QPushButton("Add run folder…")
        add.setToolTip("Open a run trained elsewhere, e.g. with `tfstudio train --out DIR`")
        add.clicked.connect(self._add_folder)
        forget = QPushButton("Forget")
        forget.setToolTip("Remove from this list (the run folder stays on disk)")
        forget.clicked.connect(self._forget)
        buttons = QHBoxLayout()
        for b in (self.open, add, forget):
            buttons.addWidget(b)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(muted("Tick runs to overlay their curves (same corpus and seed make a "
                               "fair comparison of two architectures)."))
        column.addWidget(self.tree, 1)
        column.addWidget(self.note)
        column.addLayout(buttons)
        self._filling = False

    def set_records(self, records: list[RunRecord], shown: set[str]) -> None:
        self._filling = True
        current = self.tree.currentItem()
        current_path = current.data(0, Qt.UserRole) if current else None
        self.records = list(records)
        self.tree.clear()
        for record in self.records:
            row = runs_row(record, self.notes.get(record.path, ""))
            item = QTreeWidgetItem(row.cells)
            for column, tip in row.tips.items():
                item.setToolTip(COLUMNS.index(column), tip)
            item.setData(0, Qt.UserRole, record.path)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(0, Qt.Checked if record.path in shown else Qt.Unchecked)
            self.tree.addTopLevelItem(item)
            if record.path == current_path:
                self.tree.setCurrentItem(item)
        for i in range(len(COLUMNS) - 1):
            self.tree.resizeColumnToContents(i)
        self._filling = False

    def set_note(self, path: str, note: str) -> None:
        """Say under the list, and on the run's row, which checkpoint its weights came from when
        a newer one was damaged ("": nothing to say)."""
        if note:
            self.notes[path] = note
        else:
            self.notes.pop(path, None)
        self.note.setText(f"⚠ {note}" if note else "")
        self.note.setVisible(bool(note))
        self.set_records(self.records, self._shown())

    def _shown(self) -> set[str]:
        return {item.data(0, Qt.UserRole) for i in range(self.tree.topLevelItemCount())
                if (item := self.tree.topLevelItem(i)).checkState(0) == Qt.Checked}

    def record_of(self, item: QTreeWidgetItem | None) -> RunRecord | None:
        if item is None:
            return None
        path = item.data(0, Qt.UserRole)
        return next((r for r in self.records if r.path == path), None)

    def item_of(self, path: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, Qt.UserRole) == path:
                return item
        return None

    def show_overlaid(self, path: str) -> None:
        """Tick the run's box without it counting as the user's click."""
        item = self.item_of(path)
        if item is not None:
            self._filling = True
            item.setCheckState(0, Qt.Checked)
            self._filling = False

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != 0:
            return
        record = self.record_of(item)
        if record is not None:
            self.overlay_toggled.emit(record, item.checkState(0) == Qt.Checked)

    def _open(self, item) -> None:
        record = self.record_of(item)
        if record is not None:
            self.open_requested.emit(record)

    def _forget(self) -> None:
        record = self.record_of(self.tree.currentItem())
        if record is not None:
            self.forget_requested.emit(record)

    def _add_folder(self) -> None:
        path = OPEN_RUN_FOLDER[0](self)
        if path:
            self.add_folder_requested.emit(path)
