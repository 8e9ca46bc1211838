"""The Train workspace's left column: Train / Pause / Stop, the progress bar and line, the
status and error lines, "Colour graph by" with its legend, and the run setup below, scrolling
when the screen is short. Widgets only: the panel connects and fills them."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QScrollArea, QVBoxLayout, QWidget)

from .labels import muted
from .telemetry import MODES


class ControlsColumn(QScrollArea):
    def __init__(self, setup: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.train_button = QPushButton("Train")
        self.train_button.setToolTip("Train the graph on the canvas with these settings")
        self.train_button.setDefault(True)
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the run between two steps; its weights are saved")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("no run yet")
        self.status = QLabel("Ready")
        self.status.setWordWrap(True)
        # step, loss, speed and ETA, twice a second: its height changes only with its number of
        # lines (two at least), so an update repaints this line, not the whole column laid out
        self.progress_line = QLabel()
        self.progress_line.setWordWrap(True)
        self.progress_line.hide()
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error.hide()
        self.telemetry = QComboBox()
        for key, title in MODES.items():
            self.telemetry.addItem(title, key)
        self.telemetry.setToolTip("Colour the blocks on the canvas by what the latest look "
                                  "inside measured")
        self.telemetry_note = muted()
        self.blocked = QLabel()  # why Train is disabled, with a link to the problem
        self.blocked.setProperty("role", "error")
        self.blocked.setWordWrap(True)
        self.blocked.setTextFormat(Qt.RichText)
        self.blocked.hide()
        buttons = QHBoxLayout()
        for b in (self.train_button, self.pause_button, self.stop_button):
            buttons.addWidget(b)
        telemetry_row = QHBoxLayout()
        telemetry_row.addWidget(QLabel("Colour graph by"))
        telemetry_row.addWidget(self.telemetry, 1)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(8, 8, 8, 8)
        column.addLayout(buttons)
        for widget in (self.blocked, self.progress, self.progress_line, self.status, self.error):
            column.addWidget(widget)
        column.addLayout(telemetry_row)
        column.addWidget(self.telemetry_note)
        column.addSpacing(6)
        heading = QLabel("Run setup")
        heading.setProperty("role", "heading")
        column.addWidget(heading)
        column.addWidget(setup)
        column.addStretch(1)
        self.setWidget(left)
        self.setWidgetResizable(True)
        self.setMinimumWidth(300)
