"""Text as the training views show it: muted notes and the centred hint an empty view shows
(tokens with their whitespace made visible: :mod:`.token_text`)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel


def placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignCenter)
    label.setWordWrap(True)
    label.setProperty("role", "muted")
    label.setMinimumSize(QSize(120, 60))
    return label


def muted(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setProperty("role", "muted")
    label.setWordWrap(True)
    return label
