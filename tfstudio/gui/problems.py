"""The problems panel: every diagnostic of the whole model, errors first, each with its fix;
a problem with one obvious fix has a button that applies it as one undoable edit. Clicking one
opens the group that holds the block and selects it. With no problems it is one
line ("No problems: this graph compiles."), so an empty list takes no room from the canvas."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QLabel, QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from ..graph.edit_rules import fix_text
from .graph_report import GraphReport
from .icons import severity_icon

DIAG_ROLE = Qt.UserRole + 1


class ProblemsPanel(QWidget):
    activated = Signal(tuple, object)  # (path, node_id or None)
    fix_requested = Signal(object)     # a Diagnostic whose one obvious fix is to be applied

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel()
        self.summary.setProperty("role", "muted")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Problem", "Fix", "Where", ""])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        self.tree.setColumnWidth(0, 430)
        self.tree.setColumnWidth(1, 430)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)

    def show_report(self, report: GraphReport) -> None:
        self.tree.clear()
        ordered = sorted(report.diagnostics, key=lambda d: (d.severity != "error", d.where))
        for d in ordered:
            item = QTreeWidgetItem([d.message, d.hint, d.where])
            item.setIcon(0, severity_icon(d.severity))
            item.setToolTip(0, f"{d.severity}: {d.message}")
            item.setToolTip(1, d.hint)
            item.setData(0, DIAG_ROLE, d)
            self.tree.addTopLevelItem(item)
            if d.fix is not None:  # one obvious fix: a button applies it (one undo step)
                button = QPushButton(fix_text(d))
                button.setToolTip(f"{fix_text(d)} in {d.where} (one undo step)")
                button.clicked.connect(lambda _=False, d=d: self.fix_requested.emit(d))
                self.tree.setItemWidget(item, 3, button)
        for failure in report.failures:
            item = QTreeWidgetItem([failure, "please report this; the graph may be unusual",
                                    "analysis"])
            item.setIcon(0, severity_icon("warning"))
            self.tree.addTopLevelItem(item)
        errors, warnings = report.errors, report.warnings
        empty = not report.diagnostics and not report.failures
        self.tree.setVisible(not empty)
        if empty:
            self.summary.setText("No problems: this graph compiles.")
        else:
            self.summary.setText(f"{errors} error{'s' * (errors != 1)}, "
                                 f"{warnings} warning{'s' * (warnings != 1)}. "
                                 "Click one to go to its block.")

    @property
    def collapsed(self) -> bool:
        """Whether the panel is down to its one summary line (nothing to list)."""
        return self.tree.isHidden()

    def diagnostics(self) -> list:
        return [self.tree.topLevelItem(i).data(0, DIAG_ROLE)
                for i in range(self.tree.topLevelItemCount())
                if self.tree.topLevelItem(i).data(0, DIAG_ROLE) is not None]

    def fix_buttons(self) -> list[QPushButton]:
        """The rows' Fix buttons, in row order (rows without one skipped)."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [b for b in (self.tree.itemWidget(item, 3) for item in items) if b is not None]

    def activate_row(self, row: int) -> None:
        """What a click on row ``row`` does."""
        self._clicked(self.tree.topLevelItem(row), 0)

    def _clicked(self, item: QTreeWidgetItem, column: int) -> None:
        d = item.data(0, DIAG_ROLE) if item is not None else None
        if d is not None:
            self.activated.emit(tuple(d.path or ()), d.node_id)
