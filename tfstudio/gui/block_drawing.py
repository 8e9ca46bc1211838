"""How blocks are drawn, the pieces shared by every block item: fonts that grow as the view
zooms out (semantic zoom), the small read-only blocks inside an open layer frame, the "off"
badge of a block switched off in Explain, the group chevron and the rounded path of a routed
wire."""
from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen

from ..graph import Node, get_spec
from ..graph.layout import MINI_H
from . import theme
from .ablation_marks import badge_text, whole
from .block_look import shows_words
from .icons import paint_badge
from .ink import readable_ink
from .title_fit import fitted_title

PORT_R = 6.0
PAD = 10.0
ABLATED_OPACITY = 0.45  # a block switched off in Explain: still readable, visibly not in use


def _font(pixels: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(pixels)
    f.setBold(bold)
    return f


SMALL_FONT = _font(11)
BADGE_FONT = _font(12, bold=True)


def scaled_font(pixels: float, bold: bool = False) -> QFont:
    return _cached_font(max(1, round(pixels)), bold)


@lru_cache(maxsize=64)
def _cached_font(pixels: int, bold: bool) -> QFont:
    return _font(pixels, bold)


def _readable_on(colour: QColor) -> QColor:
    """Black or white, whichever reads better on ``colour`` (ink.readable_ink's rule)."""
    return QColor(readable_ink(colour.redF(), colour.greenF(), colour.blueF()))


class _Mini:
    """A block inside an open group, drawn small (a click shows it in the inspector, a
    double-click enters the group with it selected): a colour strip of its family, its title
    and its summary on up to two lines."""

    def __init__(self, rect: QRectF, node: Node, summary: str, switched_off: list[str],
                 severity: str | None = None):
        self.rect = rect
        self.node = node
        self.summary = summary
        self.family = get_spec(node.type).family
        self.switched_off = switched_off  # the Explain switches ablating it, if any
        self.severity = severity  # "error" / "warning": its worst problem, drawn on it
        self.selected = False  # clicked: the inspector shows it

    def paint(self, painter: QPainter, t, boost: float, lod: float) -> None:
        painter.save()
        if whole(self.switched_off):
            painter.setOpacity(painter.opacity() * ABLATED_OPACITY)
        self._paint_block(painter, t, boost, lod)
        painter.restore()
        if self.switched_off:
            painter.setBrush(Qt.NoBrush)
            painter.setPen(ablated_pen(t))
            painter.drawRoundedRect(self.rect, 6, 6)
            paint_off_badge(painter, t, QPointF(self.rect.center().x(), self.rect.top()),
                            self.switched_off)
        if self.selected:
            painter.setBrush(Qt.NoBrush)
            painter.setPen(QPen(t.color("accent"), 2.5))
            painter.drawRoundedRect(self.rect.adjusted(-3, -3, 3, 3), 8, 8)
        if self.severity:
            colour = t.color("error" if self.severity == "error" else "warning")
            painter.setBrush(Qt.NoBrush)
            painter.setPen(QPen(colour, 2.5))
            painter.drawRoundedRect(self.rect, 6, 6)
            size = 16.0
            corner = QRectF(self.rect.right() - size * 0.6, self.rect.top() - size * 0.4,
                            size, size)
            paint_badge(painter, corner, self.severity, colour)

    def title_lines(self, boost: float = 1.0) -> tuple[QFont, list[str]]:
        """The font and the one or two lines of this small block's title, as drawn."""
        width = self.rect.width() - 18  # inside the colour strip and the right margin
        return fitted_title(self.node.label, 12 * min(boost, 1.2), width, floor=10)

    def _paint_block(self, painter: QPainter, t, boost: float, lod: float) -> None:
        colour = theme.family_colour(self.family)
        painter.setPen(QPen(t.color("node_border"), 1))
        painter.setBrush(t.color("node_body"))
        painter.drawRoundedRect(self.rect, 6, 6)
        strip = QPainterPath()
        strip.addRoundedRect(QRectF(self.rect.x(), self.rect.y(), 6, self.rect.height()), 3, 3)
        painter.setPen(Qt.NoPen)
        painter.setBrush(colour)
        painter.drawPath(strip)
        if not shows_words(lod):
            return
        inner = self.rect.adjusted(12, 4, -6, -4)
        title_font, lines = self.title_lines(boost)
        # a wrapped title takes a second line from the summary
        head_h = max(18.0, len(lines) * QFontMetricsF(title_font).lineSpacing())
        head = QRectF(inner.x(), inner.y(), inner.width(), head_h)
        painter.setPen(t.color("node_text"))
        _draw_title(painter, head, title_font, lines)
        font = scaled_font(11 * min(boost, 1.2))
        painter.setFont(font)
        painter.setPen(t.color("node_muted"))
        body = QRectF(inner.x(), inner.y() + head_h, inner.width(), inner.height() - head_h)
        if self.rect.height() >= MINI_H:  # an Add, shorter, is its title alone (a junction)
            painter.drawText(body, Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, self.summary)


def _draw_title(painter: QPainter, rect: QRectF, font: QFont, lines: list[str]) -> None:
    """One or two title lines, centred as a block in ``rect``'s height."""
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignVCenter | Qt.AlignLeft, "\n".join(lines))


def ablated_pen(t) -> QPen:
    """The dashed outline of a block switched off in Explain."""
    return QPen(t.color("warning"), 2.5, Qt.DashLine)


def paint_off_badge(painter: QPainter, t, top_centre: QPointF, switched_off: list[str]) -> None:
    """A pill on the block's top edge: "off" (the whole block) or "part off" (heads, experts)."""
    text = badge_text(switched_off)
    fm = QFontMetricsF(BADGE_FONT)
    w, h = fm.horizontalAdvance(text) + 14, 18.0
    rect = QRectF(top_centre.x() - w / 2, top_centre.y() - h / 2, w, h)
    painter.save()
    painter.setOpacity(1.0)
    painter.setPen(Qt.NoPen)
    painter.setBrush(t.color("warning"))
    painter.drawRoundedRect(rect, h / 2, h / 2)
    painter.setPen(QColor("#1d2230"))
    painter.setFont(BADGE_FONT)
    painter.drawText(rect, Qt.AlignCenter, text)
    painter.restore()


def _paint_chevron(painter: QPainter, rect: QRectF, colour: QColor, opened: bool) -> None:
    """▾ for an open group, ▸ for a closed one (click to switch)."""
    c = rect.center()
    if opened:
        points = [QPointF(c.x() - 5, c.y() - 2.5), QPointF(c.x() + 5, c.y() - 2.5),
                  QPointF(c.x(), c.y() + 3.5)]
    else:
        points = [QPointF(c.x() - 2.5, c.y() - 5), QPointF(c.x() - 2.5, c.y() + 5),
                  QPointF(c.x() + 3.5, c.y())]
    painter.save()
    painter.setPen(Qt.NoPen)
    painter.setBrush(colour)
    painter.drawPolygon(points)
    painter.restore()


def routed_path(start, end, corners) -> QPainterPath:
    """The wire's curve from ``start`` to ``end``: the canvas's bezier, or through
    ``corners`` (from :func:`~tfstudio.graph.layout.wire_route`) with rounded bends."""
    a, b = QPointF(*start), QPointF(*end)
    if not corners:
        dx = max(abs(b.x() - a.x()) * 0.5, 50.0)
        path = QPainterPath(a)
        path.cubicTo(a + QPointF(dx, 0), b - QPointF(dx, 0), b)
        return path
    points = [QPointF(*p) for p in corners]
    path = QPainterPath(points[0])
    for prev, here, nxt in zip(points, points[1:], points[2:]):
        path.lineTo(_towards(here, prev, 10))
        path.quadTo(here, _towards(here, nxt, 10))
    path.lineTo(points[-1])
    return path


def _towards(p: QPointF, q: QPointF, distance: float) -> QPointF:
    d = q - p
    length = (d.x() ** 2 + d.y() ** 2) ** 0.5
    if length < 1e-6:
        return QPointF(p)
    k = min(distance, length / 2) / length
    return p + d * k
