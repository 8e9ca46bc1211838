"""Colours and the application style, light and dark.

One place decides every colour: port kinds (a wire takes the colour of what it carries), block
families (the header band and icon of a node), the canvas and the diagnostic states. Widgets ask
:func:`current` for the active theme, so switching theme is a repaint, not a rebuild.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from .qt_compat import guard_none_refcount

# Every view imports the theme before it draws anything, so the guard against PySide6 6.12's
# lost None references (see qt_compat) is applied here, once, ahead of the first widget.
guard_none_refcount()

# What a wire carries decides its colour, in both themes (saturated enough for light and dark).
PORT_COLOURS = {
    "ids": "#e8a33d",      # integer token ids
    "hidden": "#4f8ff7",   # the hidden stream
    "logits": "#b565e0",   # scores over the vocabulary
    "memory": "#1fb5a8",   # encoder output read by cross-attention
}

FAMILY_COLOURS = {
    "input": "#8a94a6",
    "embedding": "#1fa6b5",
    "position": "#38b3e8",
    "attention": "#f07a3a",
    "feedforward": "#3fb76a",
    "norm": "#d9b526",
    "residual": "#9aa3b2",
    "output": "#b565e0",
    "structure": "#6c7bf2",
    "recurrent": "#c0805a",
}


@dataclass(frozen=True)
class Theme:
    name: str
    window: str
    panel: str
    text: str
    muted_text: str
    canvas: str
    grid_minor: str
    grid_major: str
    node_body: str
    node_border: str
    node_text: str
    node_muted: str
    selection: str
    error: str
    warning: str
    label_back: str  # "#AARRGGBB", as QColor reads 8 hex digits
    accent: str

    def color(self, attribute: str) -> QColor:
        return QColor(getattr(self, attribute))


LIGHT = Theme(
    name="light", window="#f3f4f7", panel="#ffffff", text="#1d2230", muted_text="#5d6577",
    canvas="#eceef3", grid_minor="#e0e3ea", grid_major="#d2d6df", node_body="#ffffff",
    node_border="#b9bfcc", node_text="#1d2230", node_muted="#5d6577", selection="#2f7cf6",
    error="#e0403a", warning="#e59a14", label_back="#e6ffffff", accent="#2f7cf6",
)

DARK = Theme(
    name="dark", window="#1e2128", panel="#262a33", text="#e4e7ee", muted_text="#9aa2b4",
    canvas="#1a1d23", grid_minor="#22262e", grid_major="#2b3039", node_body="#2c313b",
    node_border="#464d5b", node_text="#eef0f5", node_muted="#a3abbd", selection="#5b9bff",
    error="#ff5a52", warning="#ffb02e", label_back="#e61a1d23", accent="#5b9bff",
)

THEMES = {"light": LIGHT, "dark": DARK}
_current = LIGHT


def current() -> Theme:
    return _current


def port_colour(kind: str) -> QColor:
    return QColor(PORT_COLOURS.get(kind, "#888888"))


def family_colour(family: str) -> QColor:
    return QColor(FAMILY_COLOURS.get(family, "#888888"))


def apply_theme(app: QApplication, name: str) -> Theme:
    """Make ``name`` the active theme for ``app``: Fusion style, palette and a light stylesheet."""
    global _current
    if name not in THEMES:
        raise ValueError(f"unknown theme '{name}'; choose one of {', '.join(THEMES)}")
    theme = _current = THEMES[name]
    app.setStyle("Fusion")
    app.setPalette(_palette(theme))
    app.setStyleSheet(_stylesheet(theme))
    return theme


def _palette(t: Theme) -> QPalette:
    p = QPalette()
    c = QColor
    p.setColor(QPalette.Window, c(t.window))
    p.setColor(QPalette.WindowText, c(t.text))
    p.setColor(QPalette.Base, c(t.panel))
    p.setColor(QPalette.AlternateBase, c(t.window))
    p.setColor(QPalette.Text, c(t.text))
    p.setColor(QPalette.Button, c(t.panel))
    p.setColor(QPalette.ButtonText, c(t.text))
    p.setColor(QPalette.ToolTipBase, c(t.panel))
    p.setColor(QPalette.ToolTipText, c(t.text))
    p.setColor(QPalette.PlaceholderText, c(t.muted_text))
    p.setColor(QPalette.Highlight, c(t.accent))
    p.setColor(QPalette.HighlightedText, c("#ffffff"))
    p.setColor(QPalette.Link, c(t.accent))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, c(t.muted_text))
    return p


def _stylesheet(t: Theme) -> str:
    return f"""
    QToolTip {{ color: {t.text}; background: {t.panel}; border: 1px solid {t.node_border};
               padding: 4px; }}
    QDockWidget::title {{ background: {t.window}; padding: 5px 8px; font-weight: 600; }}
    QLabel[role="muted"] {{ color: {t.muted_text}; }}
    QLabel[role="heading"] {{ font-weight: 600; font-size: 11pt; }}
    QLabel[role="big"] {{ font-size: 14pt; font-weight: 600; }}
    QLabel[role="error"] {{ color: {t.error}; }}
    QLabel[role="ok"] {{ color: #2e9d57; }}
    QToolBar {{ border: none; spacing: 2px; }}
    QStatusBar {{ color: {t.muted_text}; }}
    QTreeWidget, QListWidget, QTableWidget {{ border: 1px solid {t.node_border}; }}
    QPushButton[segment="true"] {{ padding: 4px 6px; border: 1px solid {t.node_border};
                                   border-radius: 0px; background: {t.panel}; color: {t.text}; }}
    QPushButton[segment="true"]:hover {{ background: {t.window}; }}
    QPushButton[segment="true"]:checked {{ background: {t.accent}; color: white;
                                           border: 1px solid {t.accent}; }}
    """
