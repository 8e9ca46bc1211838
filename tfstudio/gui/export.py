"""Export the canvas (the graph level on screen) as a PNG or an SVG picture."""
from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem

from . import theme
from .node_item import NodeItem

MARGIN = 40.0


def content_rect(scene) -> QRectF:
    """The area the blocks (and their wires) cover, with a margin."""
    rect = QRectF()
    for item in scene.items():
        if isinstance(item, NodeItem):
            rect = rect.united(item.sceneBoundingRect())
    if rect.isNull():
        rect = QRectF(0, 0, 400, 300)
    return rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)


@contextmanager
def uncached(scenes: Iterable):
    """Items of ``scenes`` kept as pixmaps for the screen (blocks, plot axes) paint afresh
    meanwhile: a picture gets their drawing (an SVG would get a picture of pixels)."""
    cached = [(item, item.cacheMode()) for scene in scenes for item in scene.items()
              if item.cacheMode() != QGraphicsItem.NoCache]
    for item, _ in cached:
        item.setCacheMode(QGraphicsItem.NoCache)
    try:
        yield
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)


def _render(scene, painter: QPainter, source: QRectF, target: QRectF) -> None:
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
    painter.fillRect(target, QColor(theme.current().canvas))
    selected = scene.selectedItems()
    scene.clearSelection()  # a picture shows the model, not what happened to be selected
    try:
        with uncached([scene]):
            scene.render(painter, target, source, Qt.KeepAspectRatio)
    finally:
        for item in selected:
            item.setSelected(True)


def export_png(scene, path: str | Path, scale: float = 2.0) -> Path:
    """Write the canvas at ``scale`` pixels per scene unit (2 = crisp on high-DPI screens)."""
    source = content_rect(scene)
    image = QImage(QSize(int(source.width() * scale), int(source.height() * scale)),
                   QImage.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(1.0)
    painter = QPainter(image)
    _render(scene, painter, source, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    if not image.save(str(path), "PNG"):
        raise OSError(f"could not write {path}; check the folder exists and is writable")
    return Path(path)


def export_svg(scene, path: str | Path, title: str = "tfstudio graph") -> Path:
    source = content_rect(scene)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(int(source.width()), int(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(title)
    generator.setDescription("Exported from tfstudio")
    painter = QPainter(generator)
    _render(scene, painter, source, QRectF(0, 0, source.width(), source.height()))
    painter.end()
    if not Path(path).exists():
        raise OSError(f"could not write {path}; check the folder exists and is writable")
    return Path(path)
