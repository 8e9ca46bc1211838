"""The parts of a heatmap's picture that do not depend on its widget: the colour bar that says
what the ends of its scale mean (the numbers: :mod:`.heatmap_scale`), and the hatching of masked
cells. Pure drawing on a ``QPainter``, so the screen, a PNG and an SVG get the same picture."""
from __future__ import annotations

import functools

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QImage, QPainter, QPen

from .colours import colour_ramp, themed_colour
from .heatmap_cells import masked_runs
from .heatmap_scale import bar_label


@functools.cache
def scale_image(kind: str, steps: int = 64) -> QImage:
    """The colour bar's bands, top (1) to bottom (0), as a 1-pixel-wide image: drawn scaled,
    not band by band at every repaint of a live map."""
    ramp = np.ascontiguousarray(colour_ramp(np.linspace(1.0, 0.0, steps), kind)[:, None, :])
    image = QImage(ramp.data, 1, steps, 3, QImage.Format_RGB888)
    return image.copy()  # its own pixels, not a view of the array


def font(px: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    return f


def paint_colour_bar(painter: QPainter, bar: QRectF, kind: str,
                     value_range: tuple[float, float], label_w: float) -> None:
    """The ramp in ``bar``, top (the range's high end) to bottom, its two ends labelled
    right of it in ``label_w`` pixels."""
    painter.drawImage(bar, scale_image(kind))
    painter.setPen(QPen(themed_colour("node_border"), 1))
    painter.drawRect(bar)
    painter.setFont(font(10))
    painter.setPen(themed_colour("muted_text"))
    lo, hi = value_range
    for value, y, align in ((hi, bar.top(), Qt.AlignTop), (lo, bar.bottom() - 14,
                                                          Qt.AlignBottom)):
        painter.drawText(QRectF(bar.right() + 3, y, label_w, 14), Qt.AlignLeft | align,
                         bar_label(value))


def paint_mask(painter: QPainter, masked: np.ndarray, area: QRectF, cw: float,
               ch: float) -> None:
    """Hatch the ``masked`` cells (cells of ``cw`` x ``ch`` from ``area``'s corner): one
    rectangle per run of masked cells in a row."""
    if not masked.any():
        return
    painter.setPen(Qt.NoPen)
    painter.setBrush(QBrush(themed_colour("node_border"), Qt.BDiagPattern))
    for r, start, stop in masked_runs(masked):
        painter.drawRect(QRectF(area.left() + start * cw, area.top() + r * ch,
                                (stop - start) * cw, ch))
