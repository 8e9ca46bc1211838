"""The course in the editor: every lesson in the story's order; picking one shows its claim and
what it varies, and "Put on the canvas" opens its base graph with the blocks its variants change
selected; "Train it in Compare" trains it in the Compare view, through the same lessons
framework as ``tfstudio lesson NAME`` (named in the panel), and shows its verdict there."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QLabel, QListWidget, QListWidgetItem, QPushButton, QScrollArea,
                               QVBoxLayout, QWidget)

from .lesson_lines import EMPTY_HINT, course_row, lesson_page, trains_in_compare

NAME_ROLE = Qt.UserRole + 1


class LessonsPanel(QWidget):
    """``opened(graph, node ids)`` asks the window to put ``graph`` on the canvas and select
    the nodes."""

    opened = Signal(object, list)
    train_requested = Signal(str)   # the lesson's variants, side by side in Compare

    def __init__(self, parent=None):
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.details = QLabel(EMPTY_HINT)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.RichText)
        self.details.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.details.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.open_button = QPushButton("Put on the canvas")
        self.open_button.setToolTip("Open the lesson's base graph, the blocks its variants "
                                    "change selected")
        self.open_button.setEnabled(False)
        self.train_button = QPushButton("Train it in Compare")
        self.train_button.setToolTip("Train the lesson's variants over its seeds in the Train "
                                     "workspace's Compare view, which then shows its verdict, "
                                     "table and plots (the page tfstudio lesson writes)")
        self.train_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 2)
        # a long claim scrolls: its wrapped label never sets the dock's (and so the window's)
        # height; in it, 1366x768 grew to 1366x774 and the claim was cut off
        details = QScrollArea()
        details.setWidget(self.details)
        details.setWidgetResizable(True)
        details.setFrameShape(QScrollArea.NoFrame)
        layout.addWidget(details, 3)
        layout.addWidget(self.open_button)
        layout.addWidget(self.train_button)
        self.list.currentItemChanged.connect(lambda item, _: self.show_lesson(
            item.data(NAME_ROLE) if item is not None else None))
        self.list.itemDoubleClicked.connect(lambda _: self.open_current())
        self.open_button.clicked.connect(self.open_current)
        self.train_button.clicked.connect(
            lambda: self.current_name() and self.train_requested.emit(self.current_name()))

    def showEvent(self, event) -> None:
        self.fill()  # every lesson module loads (~0.25 s): only once the panel is first shown
        super().showEvent(event)

    def fill(self) -> None:
        """List the course (once)."""
        if self.list.count():
            return
        from ..experiments.lessons.course import course, minutes_text

        for i, lesson in enumerate(course(), 1):
            item = QListWidgetItem(course_row(i, lesson))
            item.setData(NAME_ROLE, lesson.name)
            item.setToolTip(minutes_text(lesson))
            self.list.addItem(item)

    def current_name(self) -> str | None:
        item = self.list.currentItem()
        return item.data(NAME_ROLE) if item is not None else None

    def show_lesson(self, name: str | None) -> None:
        from ..experiments.lessons import LESSONS
        from ..experiments.lessons.course import minutes_text

        lesson = LESSONS.get(name) if name else None
        self.open_button.setEnabled(lesson is not None)
        self.train_button.setEnabled(lesson is not None and trains_in_compare(lesson))
        if lesson is None:
            self.details.setText(EMPTY_HINT)
            return
        self.details.setText(lesson_page(lesson, minutes_text(lesson)))

    def open_current(self) -> None:
        from ..experiments.lessons.course import differing_nodes

        name = self.current_name()
        if name is not None:
            graph, changed = differing_nodes(name)
            self.opened.emit(graph, changed)
