"""The problems panel: every diagnostic of the whole model, errors first, each with its fix;
a problem with one obvious fix has a button that applies it as one undoable edit. Clicking one
opens the group that holds the block and selects it. With no problems it is one
line ("No problems: this graph compiles."), so an empty list takes no room from the canvas;
brief (where the canvas has no height to spare), the line names the first problem, with links
to its fix and to the whole list."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QLabel, QPushButton, QSizePolicy, QTreeWidget, QTreeWidgetItem,
                               QVBoxLayout, QWidget)

from ..graph.edit_rules import fix_text
from .graph_report import GraphReport
from .icons import severity_icon
from .problem_lines import ANALYSIS_FAILED, fix_tip, has_problems, ordered, row_words, summary

DIAG_ROLE = Qt.UserRole + 1


class ProblemsPanel(QWidget):
    activated = Signal(tuple, object)  # (path, node_id or None)
    fix_requested = Signal(object)     # a Diagnostic whose one obvious fix is to be applied
    list_requested = Signal()          # the brief line's "List all": open to the list

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel()
        self.summary.setProperty("role", "muted")
        # a long first problem is cut at the panel's edge, never widens the window
        self.summary.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.summary.linkActivated.connect(self._link)
        self.brief = False
        self._report = GraphReport()
        self._first = None  # the first problem listed: the brief line's fix link applies it
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
        rows = ordered(report)
        for d in rows:
            words, tip = row_words(d)
            item = QTreeWidgetItem(words)
            item.setIcon(0, severity_icon(d.severity))
            item.setToolTip(0, tip)
            item.setToolTip(1, d.hint)
            item.setData(0, DIAG_ROLE, d)
            self.tree.addTopLevelItem(item)
            if d.fix is not None:  # one obvious fix: a button applies it (one undo step)
                button = QPushButton(fix_text(d))
                button.setToolTip(fix_tip(d))
                button.clicked.connect(lambda _=False, d=d: self.fix_requested.emit(d))
                self.tree.setItemWidget(item, 3, button)
        for failure in report.failures:
            item = QTreeWidgetItem([failure, *ANALYSIS_FAILED])
            item.setIcon(0, severity_icon("warning"))
            self.tree.addTopLevelItem(item)
        self._report = report
        self._first = rows[0] if rows else None
        self._show_summary()

    def set_brief(self, brief: bool) -> None:
        """Down to one line naming the first problem (the canvas has no height to spare), or
        the whole list."""
        self.brief = brief
        self._show_summary()

    def _show_summary(self) -> None:
        self.tree.setVisible(self.has_problems and not self.brief)
        line = summary(self._report, self.brief)
        self.summary.setText(line.text)
        self.summary.setToolTip(line.tooltip)

    def _link(self, href: str) -> None:
        if href == "fix" and self._first is not None and self._first.fix is not None:
            self.fix_requested.emit(self._first)
        elif href == "list":
            self.list_requested.emit()

    @property
    def has_problems(self) -> bool:
        return has_problems(self._report)

    @property
    def collapsed(self) -> bool:
        """Whether the panel is down to its one summary line (nothing to list, or brief)."""
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
