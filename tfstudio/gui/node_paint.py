"""How a block item paints itself: a closed block (header, ports, summary, outline, badges)
or an open layer group (a frame holding its inside as small blocks). A mixin of
:class:`~tfstudio.gui.node_item.NodeItem`, which keeps the state and the gestures. The
telemetry band a run colours the block with is an item of its own (:class:`TelemetryBand`):
the block is kept as a pixmap, and a look inside repaints the band alone."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from ..graph.layout import HEADER_H, ROW_H, SUMMARY_H
from . import theme
from .block_drawing import (BADGE_FONT, PAD, PORT_R, SMALL_FONT, _draw_title, _paint_chevron,
                            _readable_on, ablated_pen, paint_off_badge, scaled_font)
from .block_look import (badge_size, frame_lighter, frame_summary, shows_words,
                         summary_on_one_line, title_icon_room)
from .icons import paint_badge, paint_family_icon
from .title_fit import fitted_title
from .zoom_rules import text_boost


class NodePainting:
    """The painting half of a block item (``self`` is the NodeItem)."""

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        t = theme.current()
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setRenderHint(QPainter.Antialiasing)
        body = self.body_rect()
        family = theme.family_colour(self.spec.family)

        if self.frame is not None:
            self._paint_frame(painter, t, body, family, lod)
            return
        if self.node.is_group:  # the copies stacked behind, a picture of "repeat"
            for k in (2, 1):
                card = body.translated(4 * k, -4 * k)
                painter.setPen(QPen(t.color("node_border"), 1))
                painter.setBrush(t.color("node_body").darker(100 + 6 * k))
                painter.drawRoundedRect(card, 8, 8)

        painter.setPen(Qt.NoPen)
        painter.setBrush(t.color("node_body"))
        painter.drawRoundedRect(body, 8, 8)

        header = QPainterPath()
        header.addRoundedRect(QRectF(0, 0, body.width(), HEADER_H + 8), 8, 8)
        clip = QPainterPath()
        clip.addRect(QRectF(0, 0, body.width(), HEADER_H))
        painter.setBrush(family)
        painter.drawPath(header.intersected(clip))

        ink = _readable_on(family)
        boost = text_boost(lod)
        icon_w = title_icon_room(boost, self.node.is_group)
        if self.node.is_group:
            _paint_chevron(painter, self.chevron_rect(), ink, opened=False)
        elif icon_w:
            paint_family_icon(painter, self.spec.family, QRectF(PAD - 2, 7, 17, 17), ink)
        right_reserved = 0.0
        if self.node.is_group:
            right_reserved = self._paint_repeat_pill(painter, ink, family)
        title_rect = QRectF(PAD + icon_w, 0, body.width() - PAD * 2 - icon_w - right_reserved,
                            HEADER_H)
        painter.setPen(ink)
        _draw_title(painter, title_rect, *fitted_title(self.node.label, 13 * min(boost, 1.25),
                                                       title_rect.width(), floor=11))

        if shows_words(lod):
            self._paint_ports_text(painter, t, boost)
            self._paint_summary(painter, t, boost)

        self._paint_outline(painter, t, body)
        self._paint_badges(painter, t, lod)

    def inner_title_lines(self) -> dict[str, list[str]]:
        """An open group's small blocks: each one's title as drawn at 100% (one line, or two
        when it does not fit at the smallest size), by node id."""
        return {mini.node.id: mini.title_lines()[1] for mini in self._minis}

    def _paint_frame(self, painter, t, body, family, lod: float) -> None:
        """An open group: a framed panel, the header with chevron, title and ×N, the layer's
        summary under it, then its inside."""
        for k in (2, 1):  # the copies stacked behind, a picture of "repeat"
            painter.setPen(QPen(t.color("node_border"), 1))
            painter.setBrush(t.color("node_body").darker(100 + 6 * k))
            painter.drawRoundedRect(body.translated(4 * k, -4 * k), 10, 10)
        painter.setPen(QPen(family, 1.5))
        canvas = t.color("canvas")  # the frame a shade off the canvas, the blocks on it whiter
        painter.setBrush(canvas.lighter(frame_lighter(canvas.lightness())))
        painter.drawRoundedRect(body, 10, 10)
        header = QPainterPath()
        header.addRoundedRect(QRectF(0, 0, body.width(), HEADER_H + 10), 10, 10)
        clip = QPainterPath()
        clip.addRect(QRectF(0, 0, body.width(), HEADER_H))
        painter.setPen(Qt.NoPen)
        painter.setBrush(family)
        painter.drawPath(header.intersected(clip))
        ink = _readable_on(family)
        boost = text_boost(lod)
        _paint_chevron(painter, self.chevron_rect(), ink, opened=True)
        reserved = self._paint_repeat_pill(painter, ink, family)
        title_rect = QRectF(PAD + 20, 0, body.width() - PAD * 2 - 20 - reserved, HEADER_H)
        painter.setPen(ink)
        _draw_title(painter, title_rect, *fitted_title(self.node.label, 13 * min(boost, 1.25),
                                                       title_rect.width(), floor=11))
        if shows_words(lod):
            small = scaled_font(11 * boost)
            painter.setFont(small)
            painter.setPen(t.color("node_muted"))
            line = QRectF(PAD, HEADER_H + 2, body.width() - 2 * PAD, SUMMARY_H * min(boost, 1.3))
            text = frame_summary(self._summary, self.count_text())
            painter.drawText(line, Qt.AlignVCenter | Qt.AlignLeft,
                             QFontMetricsF(small).elidedText(text, Qt.ElideRight, line.width()))
        painter.setBrush(Qt.NoBrush)
        painter.setPen(QPen(theme.port_colour("hidden"), 1.6, Qt.SolidLine, Qt.RoundCap))
        for edge, path in zip(self._inner_edges, self._inner_wires):
            if edge == self.hot_edge:
                painter.setPen(QPen(t.color("accent"), 4, Qt.SolidLine, Qt.RoundCap))
                painter.drawPath(path)
                painter.setPen(QPen(theme.port_colour("hidden"), 1.6, Qt.SolidLine, Qt.RoundCap))
            else:
                painter.drawPath(path)
        for mini in self._minis:
            mini.paint(painter, t, boost, lod)
        if shows_words(lod):
            self._paint_frame_port_names(painter, t, boost)
        self._paint_outline(painter, t, body)
        if self.drop_hint:
            painter.setBrush(Qt.NoBrush)
            painter.setPen(QPen(t.color("accent"), 3, Qt.DashLine))
            painter.drawRoundedRect(body.adjusted(-3, -3, 3, 3), 12, 12)
        self._paint_badges(painter, t, lod)

    def _paint_frame_port_names(self, painter, t, boost: float) -> None:
        """An open frame's ports named just inside its edges ("x", "memory"): its inputs
        left, its outputs right, each a little above its wire."""
        font = scaled_font(10 * min(boost, 1.3))
        painter.setFont(font)
        painter.setPen(t.color("node_muted"))
        height = QFontMetricsF(font).height()
        for ports, left in ((self.inputs, True), (self.outputs, False)):
            for name, port in ports.items():
                y = port.pos().y() - height - 2
                box = (QRectF(PORT_R + 2, y, 80, height) if left
                       else QRectF(self.width - PORT_R - 82, y, 80, height))
                painter.drawText(box, (Qt.AlignLeft if left else Qt.AlignRight)
                                 | Qt.AlignVCenter, name)

    def _paint_repeat_pill(self, painter, ink, family) -> float:
        text = f"× {self.node.typed_params().repeat}"
        fm = QFontMetricsF(BADGE_FONT)
        w = fm.horizontalAdvance(text) + 14
        rect = QRectF(self.width - PAD - w + 4, 6, w, HEADER_H - 12)
        painter.save()
        painter.setPen(Qt.NoPen)
        painter.setBrush(QColor(255, 255, 255, 70) if ink == QColor("white") else QColor(0, 0, 0, 40))
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setPen(ink)
        painter.setFont(BADGE_FONT)
        painter.drawText(rect, Qt.AlignCenter, text)
        painter.restore()
        return w + 4

    def _paint_ports_text(self, painter, t, boost: float = 1.0) -> None:
        font = scaled_font(11 * boost)
        painter.setFont(font)
        fm = QFontMetricsF(font)
        half = self.width / 2 - PAD - 4
        painter.setPen(t.color("node_text"))
        for port in self.inputs.values():
            rect = QRectF(PAD + 2, port.y() - ROW_H / 2, half, ROW_H)
            painter.drawText(rect, Qt.AlignVCenter | Qt.AlignLeft,
                             fm.elidedText(port.name, Qt.ElideRight, half))
        for port in self.outputs.values():
            rect = QRectF(self.width / 2 + 4, port.y() - ROW_H / 2, half, ROW_H)
            painter.drawText(rect, Qt.AlignVCenter | Qt.AlignRight,
                             fm.elidedText(port.name, Qt.ElideRight, half))

    def _paint_summary(self, painter, t, boost: float = 1.0) -> None:
        rows = max(len(self.inputs), len(self.outputs))
        top = HEADER_H + ROW_H * rows + 8
        lines = 3 if self.node.is_group else 2
        painter.setPen(t.color("node_muted"))
        if summary_on_one_line(boost):  # zoomed out: the count is left for the tooltip
            font = scaled_font(11 * boost)
            painter.setFont(font)
            rect = QRectF(PAD, top, self.width - 2 * PAD, SUMMARY_H * lines)
            text = QFontMetricsF(font).elidedText(self._summary, Qt.ElideRight, rect.width())
            painter.drawText(rect, Qt.AlignLeft | Qt.AlignTop, text)
            return
        painter.setFont(SMALL_FONT)
        rect = QRectF(PAD, top, self.width - 2 * PAD, SUMMARY_H * (lines - 1))
        painter.drawText(rect, Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, self._summary)
        count = self.count_text(short=True)
        if count:
            rect = QRectF(PAD, top + SUMMARY_H * (lines - 1), self.width - 2 * PAD, SUMMARY_H)
            painter.drawText(rect, Qt.AlignRight | Qt.AlignVCenter, count)

    def _paint_outline(self, painter, t, body) -> None:
        painter.setBrush(Qt.NoBrush)
        severity = self.severity
        if severity:
            painter.setPen(QPen(t.color("error" if severity == "error" else "warning"), 3))
        elif self.switched_off:
            painter.setPen(ablated_pen(t))
        else:
            painter.setPen(QPen(t.color("node_border"), 1))
        painter.drawRoundedRect(body, 8, 8)
        if self.switched_off:
            paint_off_badge(painter, t, QPointF(body.width() / 2, 0), self.switched_off)
        if self.isSelected():
            painter.setPen(QPen(t.color("selection"), 2.5))
            painter.drawRoundedRect(body.adjusted(-4, -4, 4, 4), 11, 11)

    def _paint_badges(self, painter, t, lod) -> None:
        severity = self.severity or self.inner_severity
        if not severity:
            return
        size = badge_size(lod, own=bool(self.severity))
        colour = t.color("error" if severity == "error" else "warning")
        rect = QRectF(self.width - size * 0.6, -size * 0.4, size, size)
        paint_badge(painter, rect, severity, colour)


class TelemetryBand(QGraphicsItem):
    """A band in the measured colour along the bottom edge of a block, its value above it: a
    child of the block, so that a look inside (every few steps of a run, every block's value
    new) repaints the bands, while the blocks stay the pixmaps they are cached as."""

    def __init__(self, node_item):
        super().__init__(node_item)
        self.setZValue(1)  # under the ports
        self.setAcceptedMouseButtons(Qt.NoButton)  # presses reach the block
        self.setVisible(False)

    def boundingRect(self) -> QRectF:
        body = self.parentItem().body_rect()
        return QRectF(0, body.bottom() - 8 - SUMMARY_H, body.width(), 8 + SUMMARY_H)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        block = self.parentItem()
        if block.telemetry is None:
            return
        t = theme.current()
        body = block.body_rect()
        colour, label = block.telemetry
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setRenderHint(QPainter.Antialiasing)
        band = QPainterPath()
        band.addRoundedRect(body, 8, 8)
        strip = QPainterPath()
        strip.addRect(QRectF(0, body.bottom() - 8, body.width(), 8))
        painter.setPen(Qt.NoPen)
        painter.setBrush(colour)
        painter.drawPath(band.intersected(strip))
        if shows_words(lod) and label:
            painter.setPen(t.color("node_text"))
            painter.setFont(SMALL_FONT)
            painter.drawText(QRectF(PAD, body.bottom() - 8 - SUMMARY_H, body.width() / 2,
                                    SUMMARY_H), Qt.AlignLeft | Qt.AlignVCenter, label)
        painter.setClipRect(self.boundingRect())  # the block's outline over the band, as before
        block._paint_outline(painter, t, body)
