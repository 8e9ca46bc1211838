"""The breadcrumb above the canvas: where you are (model › layer group › ...), and the way back."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from ..graph import Graph
from .editor_state import crumbs


class Breadcrumb(QWidget):
    navigate = Signal(tuple)  # the path to show

    def __init__(self, parent=None):
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(8, 4, 8, 4)
        self._layout.setSpacing(2)
        self.buttons: list[QPushButton] = []

    def show_path(self, root: Graph, path: tuple[str, ...]) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item.widget() is not None:
                # hide at once: deleteLater waits for the event loop, and until then the old
                # crumb would paint underneath the new one
                item.widget().hide()
                item.widget().deleteLater()
        self.buttons = []
        for i, (label, target) in enumerate(crumbs(root, path)):
            if i:
                sep = QLabel("›")
                sep.setProperty("role", "muted")
                self._layout.addWidget(sep)
            button = QPushButton(label)
            button.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Preferred)
            button.setFlat(True)
            button.setEnabled(target != path)  # you are here
            button.setToolTip("Go back to this level" if target != path else "You are here")
            button.clicked.connect(lambda _=False, t=target: self.navigate.emit(t))
            self._layout.addWidget(button)
            self.buttons.append(button)
        if path:
            hint = QLabel("  inside a group: its inputs and outputs blocks are the group's ports; "
                          "edits apply to every copy")
            hint.setProperty("role", "muted")
            hint.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # never widens the window
            self._layout.addWidget(hint, 1)
        else:
            self._layout.addStretch(1)
