"""A label that stays one line whatever it is given: line breaks read as spaces and what does
not fit its width is elided (at the end: "tiny-gpt · 14:02:03 · step 30…"), so a long run or
graph name neither wraps it nor widens the window. ``text()`` keeps the whole text."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QStyleOption


class ElidedLabel(QLabel):
    MIN_WIDTH = 60  # what it asks of a layout at least: the window decides the rest

    def __init__(self, text: str = "", parent=None, elide: Qt.TextElideMode = Qt.ElideRight):
        super().__init__(text, parent)
        self.elide = elide  # a name reads best elided in the middle, a sentence at its end
        self.setWordWrap(False)
        self.setTextFormat(Qt.PlainText)

    def shown_text(self) -> str:
        """What is drawn: one line, elided to the label's width."""
        line = " ".join(self.text().split())
        return self.fontMetrics().elidedText(line, self.elide, max(0, self.contentsRect().width()))

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(min(hint.width(), 400), self.fontMetrics().height() + 4)

    def minimumSizeHint(self) -> QSize:
        return QSize(self.MIN_WIDTH, self.fontMetrics().height() + 4)

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment()),
                                  option.palette, self.isEnabled(), self.shown_text(),
                                  self.foregroundRole())
