"""Export the canvas (the graph level on screen) as a PNG or an SVG picture."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

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


def _render(scene, painter: QPainter, source: QRectF, target: QRectF) -> None:
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
    painter.fillRect(target, QColor(theme.current().canvas))
    selected = scene.selectedItems()
    scene.clearSelection()  # a picture shows the model, not what happened to be selected
    try:
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
