"""Text as the training views show it: muted notes and the centred hint an empty view shows
(tokens with their whitespace made visible: :mod:`.token_text`)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel

from .token_text import display_token  # its old home: tests/gui import it here

__all__ = ["display_token", "muted", "placeholder"]


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
