"""Saving what a view shows: PNG (its pixels), SVG (its drawing) or CSV (its data), from the
"Export" button each view carries (what it offers and which format a name asks for:
:mod:`.export_formats`)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRectF
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QGraphicsView, QMenu, QToolButton, QWidget

from ..export import uncached
from ..file_lines import with_suffix
from .export_formats import FILTERS, export_tip, picture_format


def export_widget(widget: QWidget, path: str | Path) -> Path:
    """Save what ``widget`` shows as a PNG (its pixels) or an SVG (its drawing)."""
    path = Path(path)
    if picture_format(path) == "svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(widget.size())
        generator.setViewBox(QRectF(0, 0, widget.width(), widget.height()))
        generator.setTitle("tfstudio")
        painter = QPainter(generator)
        views = [widget] if isinstance(widget, QGraphicsView) else []
        views += widget.findChildren(QGraphicsView)
        try:  # widgets paint with QPainter: vectors stay vectors
            with uncached(v.scene() for v in views if v.scene() is not None):
                if isinstance(widget, QGraphicsView):  # a plot: render its scene as shown
                    widget.render(painter, QRectF(0, 0, widget.width(), widget.height()),
                                  widget.viewport().rect())
                else:
                    widget.render(painter, QPoint())
        finally:
            painter.end()
    else:
        image = widget.grab()
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}; check the folder exists and is writable")
    if not path.exists():
        raise OSError(f"could not write {path}; check the folder exists and is writable")
    return path


def ask_save_path(parent: QWidget, caption: str, file_filter: str, suffix: str) -> str:
    """A save dialog (tests replace :data:`SAVE_DIALOG`)."""
    path, _ = QFileDialog.getSaveFileName(parent, caption, "", file_filter)
    return with_suffix(path, suffix)


SAVE_DIALOG: list[Callable[[QWidget, str, str, str], str]] = [ask_save_path]


class ExportButton(QToolButton):
    """"Export ▾": PNG and SVG of a view (and CSV of its data when ``csv`` is given)."""

    def __init__(self, target: Callable[[], QWidget], name: str,
                 csv: Callable[[str], Any] | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.target, self.name, self.csv = target, name, csv
        self.setText("Export")
        self.setToolTip(export_tip(name, csv is not None))
        self.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self)
        menu.addAction("Save as PNG…", lambda: self._save("png"))
        menu.addAction("Save as SVG…", lambda: self._save("svg"))
        if csv is not None:
            menu.addAction("Save data as CSV…", lambda: self._save("csv"))
        self.setMenu(menu)
        self.last_path: Path | None = None

    def _save(self, fmt: str) -> None:
        path = SAVE_DIALOG[0](self, f"Save the {self.name}", FILTERS[fmt], f".{fmt}")
        if not path:
            return
        try:
            if fmt == "csv":
                self.csv(path)
            else:
                export_widget(self.target(), path)
        except (OSError, ValueError) as exc:
            self.window().statusBar().showMessage(str(exc), 10000) \
                if hasattr(self.window(), "statusBar") else None
            return
        self.last_path = Path(path)
