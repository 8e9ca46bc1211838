"""Text as the training views show it: tokens with their whitespace made visible, muted notes
and the centred hint an empty view shows."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


def display_token(text: str) -> str:
    """A token as a label: whitespace made visible, nothing invisible left."""
    if text == "":
        return "∅"
    return "".join(_VISIBLE.get(ch, ch if ch.isprintable() else f"\\x{ord(ch):02x}")
                   for ch in text)


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
