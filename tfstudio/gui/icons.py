"""One small pictogram per block family, drawn with QPainter (no image files).

The same vector drawing serves the canvas (painted at any zoom) and the palette and menus
(rendered into pixmaps at the screen's device-pixel ratio, so they stay sharp on high-DPI).
"""
from __future__ import annotations

import math
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap

from . import theme


def paint_family_icon(painter: QPainter, family: str, rect: QRectF, colour: QColor) -> None:
    """Draw ``family``'s pictogram inside ``rect`` in ``colour``."""
    painter.save()
    painter.setRenderHint(QPainter.Antialiasing)
    s = min(rect.width(), rect.height())
    pen = QPen(colour, max(1.0, s / 10.0), Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.NoBrush)
    # work in a unit square: (0,0) top-left, (1,1) bottom-right
    x0 = rect.center().x() - s / 2
    y0 = rect.center().y() - s / 2

    def p(u: float, v: float) -> QPointF:
        return QPointF(x0 + u * s, y0 + v * s)

    draw = _DRAWERS.get(family, _draw_default)
    draw(painter, p, s, colour)
    painter.restore()


def _dot(painter, point, r, colour):
    painter.save()
    painter.setPen(Qt.NoPen)
    painter.setBrush(QBrush(colour))
    painter.drawEllipse(point, r, r)
    painter.restore()


def _draw_input(painter, p, s, c):  # an arrow entering a box
    painter.drawRoundedRect(QRectF(p(0.45, 0.18), p(0.92, 0.82)), s * 0.08, s * 0.08)
    painter.drawLine(p(0.08, 0.5), p(0.62, 0.5))
    painter.drawLine(p(0.48, 0.36), p(0.62, 0.5))
    painter.drawLine(p(0.48, 0.64), p(0.62, 0.5))


def _draw_embedding(painter, p, s, c):  # a lookup table: a grid with one highlighted row
    painter.drawRect(QRectF(p(0.12, 0.14), p(0.88, 0.86)))
    for v in (0.38, 0.62):
        painter.drawLine(p(0.12, v), p(0.88, v))
    painter.drawLine(p(0.5, 0.14), p(0.5, 0.86))
    painter.save()
    painter.setPen(Qt.NoPen)
    painter.setBrush(QBrush(c))
    painter.drawRect(QRectF(p(0.12, 0.38), p(0.88, 0.62)))
    painter.restore()


def _draw_position(painter, p, s, c):  # a sine wave
    path = QPainterPath(p(0.08, 0.5))
    for i in range(1, 41):
        u = 0.08 + 0.84 * i / 40
        path.lineTo(p(u, 0.5 - 0.3 * math.sin(2 * math.pi * 1.5 * (u - 0.08) / 0.84)))
    painter.drawPath(path)


def _draw_attention(painter, p, s, c):  # one query looking at several keys
    q = p(0.16, 0.5)
    for v in (0.18, 0.5, 0.82):
        painter.drawLine(q, p(0.82, v))
        _dot(painter, p(0.84, v), s * 0.09, c)
    _dot(painter, q, s * 0.13, c)


def _draw_feedforward(painter, p, s, c):  # a narrow-wide-narrow network
    left = [p(0.14, v) for v in (0.32, 0.68)]
    mid = [p(0.5, v) for v in (0.14, 0.38, 0.62, 0.86)]
    right = [p(0.86, v) for v in (0.32, 0.68)]
    thin = QPen(painter.pen())
    thin.setWidthF(max(0.6, s / 18))
    painter.setPen(thin)
    for a in left:
        for b in mid:
            painter.drawLine(a, b)
    for a in mid:
        for b in right:
            painter.drawLine(a, b)
    for pt in left + mid + right:
        _dot(painter, pt, s * 0.08, c)


def _draw_norm(painter, p, s, c):  # a bell curve over a baseline
    path = QPainterPath(p(0.06, 0.8))
    for i in range(1, 41):
        u = 0.06 + 0.88 * i / 40
        z = (u - 0.5) / 0.16
        path.lineTo(p(u, 0.8 - 0.6 * math.exp(-0.5 * z * z)))
    painter.drawPath(path)
    painter.drawLine(p(0.06, 0.86), p(0.94, 0.86))


def _draw_residual(painter, p, s, c):  # a plus in a circle
    painter.drawEllipse(QRectF(p(0.12, 0.12), p(0.88, 0.88)))
    painter.drawLine(p(0.5, 0.3), p(0.5, 0.7))
    painter.drawLine(p(0.3, 0.5), p(0.7, 0.5))


def _draw_output(painter, p, s, c):  # a distribution over the vocabulary
    painter.save()
    painter.setPen(Qt.NoPen)
    painter.setBrush(QBrush(c))
    for i, h in enumerate((0.25, 0.7, 0.45, 0.15)):
        u = 0.12 + i * 0.2
        painter.drawRect(QRectF(p(u, 0.86 - h), p(u + 0.14, 0.86)))
    painter.restore()


def _draw_structure(painter, p, s, c):  # stacked layers
    for i, v in enumerate((0.58, 0.38, 0.18)):
        painter.drawRoundedRect(QRectF(p(0.14 + 0.04 * i, v), p(0.86 - 0.04 * i, v + 0.22)),
                                s * 0.05, s * 0.05)


def _draw_recurrent(painter, p, s, c):  # a loop with an arrow head
    painter.drawArc(QRectF(p(0.16, 0.16), p(0.84, 0.84)), 60 * 16, 300 * 16)
    painter.drawLine(p(0.67, 0.21), p(0.78, 0.08))
    painter.drawLine(p(0.67, 0.21), p(0.84, 0.28))


def _draw_default(painter, p, s, c):
    painter.drawRoundedRect(QRectF(p(0.2, 0.2), p(0.8, 0.8)), s * 0.1, s * 0.1)


_DRAWERS = {
    "input": _draw_input, "embedding": _draw_embedding, "position": _draw_position,
    "attention": _draw_attention, "feedforward": _draw_feedforward, "norm": _draw_norm,
    "residual": _draw_residual, "output": _draw_output, "structure": _draw_structure,
    "recurrent": _draw_recurrent,
}


@lru_cache(maxsize=None)
def family_icon(family: str, size: int = 18, ratio: float = 2.0) -> QIcon:
    """A crisp icon for widgets; ``ratio`` is the device-pixel ratio to render at."""
    pix = QPixmap(int(size * ratio), int(size * ratio))
    pix.setDevicePixelRatio(ratio)
    pix.fill(Qt.transparent)
    painter = QPainter(pix)
    paint_family_icon(painter, family, QRectF(1, 1, size - 2, size - 2),
                      theme.family_colour(family))
    painter.end()
    return QIcon(pix)


def severity_icon(severity: str, size: int = 14, ratio: float = 2.0) -> QIcon:
    """A filled circle with '!' (error) or a triangle with '!' (warning)."""
    t = theme.current()
    colour = QColor(t.error if severity == "error" else t.warning)
    pix = QPixmap(int(size * ratio), int(size * ratio))
    pix.setDevicePixelRatio(ratio)
    pix.fill(Qt.transparent)
    painter = QPainter(pix)
    paint_badge(painter, QRectF(0.5, 0.5, size - 1, size - 1), severity, colour)
    painter.end()
    return QIcon(pix)


def paint_badge(painter: QPainter, rect: QRectF, severity: str, colour: QColor) -> None:
    """The diagnostic badge drawn on nodes and in the problems list."""
    painter.save()
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setPen(Qt.NoPen)
    painter.setBrush(QBrush(colour))
    if severity == "error":
        painter.drawEllipse(rect)
    else:
        tri = QPainterPath(QPointF(rect.center().x(), rect.top()))
        tri.lineTo(rect.bottomRight())
        tri.lineTo(rect.bottomLeft())
        tri.closeSubpath()
        painter.drawPath(tri)
    pen = QPen(QColor("white"), max(1.2, rect.width() / 7), Qt.SolidLine, Qt.RoundCap)
    painter.setPen(pen)
    cx = rect.center().x()
    top = rect.top() + rect.height() * (0.24 if severity == "error" else 0.36)
    painter.drawLine(QPointF(cx, top), QPointF(cx, rect.top() + rect.height() * 0.62))
    painter.drawPoint(QPointF(cx, rect.top() + rect.height() * 0.79))
    painter.restore()
