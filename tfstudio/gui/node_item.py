"""A block on the canvas: header with icon and title, typed ports, a summary, its diagnostics.

Items only draw and forward gestures: a press on a port asks the scene to start a wire, a
double-click on a group asks the scene to enter it. Nothing here edits the graph.
"""
from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from ..graph import Graph, Node, get_spec
from ..graph.layout import (GROUP_WIDTH, HEADER_H, NODE_WIDTH, ROW_H, SUMMARY_H, closed_size,
                            port_y)
from ..graph.schema import PortSpec
from . import theme
from .icons import paint_badge, paint_family_icon
from .summaries import node_summary, node_tooltip
from .text import count_label

PORT_R = 6.0
PAD = 10.0


def _font(pixels: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setPixelSize(pixels)
    f.setBold(bold)
    return f


TITLE_FONT = _font(13, bold=True)
PORT_FONT = _font(11)
SMALL_FONT = _font(11)
BADGE_FONT = _font(12, bold=True)


def text_boost(lod: float) -> float:
    """How much to enlarge text when zoomed out, so a fitted overview stays readable
    (semantic zoom, as map applications do): 1 at 80% zoom and above, at most 1.5."""
    return min(1.5, max(1.0, 0.8 / max(lod, 1e-3)))


def scaled_font(pixels: float, bold: bool = False) -> QFont:
    return _cached_font(max(1, round(pixels)), bold)


@lru_cache(maxsize=64)
def _cached_font(pixels: int, bold: bool) -> QFont:
    return _font(pixels, bold)


def _readable_on(colour: QColor) -> QColor:
    """Black or white, whichever reads better on ``colour``."""
    lum = 0.299 * colour.redF() + 0.587 * colour.greenF() + 0.114 * colour.blueF()
    return QColor("#1d2230") if lum > 0.62 else QColor("white")


class PortItem(QGraphicsItem):
    """A typed connection point; pressing it starts (or picks up) a wire."""

    def __init__(self, node_item: "NodeItem", spec: PortSpec, is_input: bool):
        super().__init__(node_item)
        self.node_item = node_item
        self.spec = spec
        self.is_input = is_input
        self.connected = False
        self.highlight: str | None = None  # "ok" / "no" while a wire is being dragged
        self._hover = False
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CrossCursor)
        self.setZValue(2)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def node_id(self) -> str:
        return self.node_item.node.id

    def boundingRect(self) -> QRectF:
        r = PORT_R + 5
        return QRectF(-r, -r, 2 * r, 2 * r)

    def scene_anchor(self) -> QPointF:
        return self.scenePos()

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        colour = theme.port_colour(self.kind)
        r = PORT_R + (2 if self._hover or self.highlight == "ok" else 0)
        if self.highlight == "no":
            colour.setAlpha(70)
        painter.setPen(QPen(theme.current().color("node_body"), 2))
        painter.setBrush(QBrush(colour))
        painter.drawEllipse(QPointF(0, 0), r, r)
        if self.is_input and not self.connected and self.spec.required:
            painter.setBrush(theme.current().color("node_body"))
            painter.setPen(Qt.NoPen)
            painter.drawEllipse(QPointF(0, 0), r * 0.45, r * 0.45)

    def hoverEnterEvent(self, event):
        self._hover = True
        self.update()

    def hoverLeaveEvent(self, event):
        self._hover = False
        self.update()

    # The scene owns the wire-drawing state machine; the port only reports the gesture.
    def mousePressEvent(self, event):
        if event.button() == Qt.LeftButton:
            self.scene().begin_wire(self, event.scenePos())
            event.accept()
        else:
            event.ignore()

    def mouseMoveEvent(self, event):
        self.scene().drag_wire(event.scenePos())

    def mouseReleaseEvent(self, event):
        self.scene().finish_wire(event.scenePos())


class NodeItem(QGraphicsItem):
    """One node of the graph at the scene's current path."""

    def __init__(self, node: Node, graph: Graph):
        super().__init__()
        self.node = node
        self.spec = get_spec(node.type)
        self.inputs: dict[str, PortItem] = {}
        self.outputs: dict[str, PortItem] = {}
        self.diagnostics: list = []
        self.inner_diagnostics: list = []  # problems inside a group, shown as a smaller badge
        self.params: int | None = None
        self.setFlags(QGraphicsItem.ItemIsMovable | QGraphicsItem.ItemIsSelectable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self._summary = ""
        self._height = 0.0
        self.telemetry: tuple[QColor, str] | None = None  # (colour, label) from training
        self.refresh(graph)

    # ------------------------------------------------------------------ state
    @property
    def width(self) -> float:
        return GROUP_WIDTH if self.node.is_group else NODE_WIDTH

    @property
    def severity(self) -> str | None:
        """"error", "warning" or None: the worst diagnostic on this node."""
        if any(d.severity == "error" for d in self.diagnostics):
            return "error"
        return "warning" if self.diagnostics else None

    @property
    def inner_severity(self) -> str | None:
        if any(d.severity == "error" for d in self.inner_diagnostics):
            return "error"
        return "warning" if self.inner_diagnostics else None

    def refresh(self, graph: Graph) -> None:
        """Rebuild ports and text from the model node (after a parameter or title change)."""
        self.prepareGeometryChange()
        for port in list(self.inputs.values()) + list(self.outputs.values()):
            port.setParentItem(None)
            if port.scene() is not None:
                port.scene().removeItem(port)
        ins = graph.input_ports(self.node.id)
        outs = graph.output_ports(self.node.id)
        self.inputs = {p.name: PortItem(self, p, True) for p in ins}
        self.outputs = {p.name: PortItem(self, p, False) for p in outs}
        for i, port in enumerate(self.inputs.values()):
            port.setPos(0.0, port_y(i))
        for i, port in enumerate(self.outputs.values()):
            port.setPos(self.width, port_y(i))
        self._summary = node_summary(self.node, graph)
        self._height = closed_size(max(len(ins), len(outs)), self.node.is_group).height
        self._update_tooltip()
        self.update()

    def set_feedback(self, diagnostics, inner_diagnostics, params: int | None) -> None:
        self.diagnostics = list(diagnostics)
        self.inner_diagnostics = list(inner_diagnostics)
        self.params = params
        self._update_tooltip()
        self.update()

    def set_telemetry(self, colour: QColor | None, label: str = "") -> None:
        """Colour the block by what training measured in it (gradient norm, activation RMS);
        None clears it. Set by the training panel (gui.training.telemetry)."""
        self.telemetry = (QColor(colour), label) if colour is not None else None
        self.update()

    def _update_tooltip(self) -> None:
        self.setToolTip(node_tooltip(self.node, self.diagnostics + self.inner_diagnostics,
                                     self.params))

    def port(self, name: str, is_input: bool) -> PortItem | None:
        return (self.inputs if is_input else self.outputs).get(name)

    # ------------------------------------------------------------------ geometry
    def body_rect(self) -> QRectF:
        return QRectF(0, 0, self.width, self._height)

    def boundingRect(self) -> QRectF:
        # room for the outline, the stacked cards of a group and a badge scaled up when zoomed out
        return self.body_rect().adjusted(-PORT_R - 6, -40, PORT_R + 40, 12)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRoundedRect(self.body_rect(), 8, 8)
        return path

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionChange and self.scene() is not None:
            return self.scene().snapped(value)
        if change == QGraphicsItem.ItemPositionHasChanged and self.scene() is not None:
            self.scene().node_item_moved(self)
        return super().itemChange(change, value)

    def mouseDoubleClickEvent(self, event):
        if self.node.is_group:
            self.scene().enter_group(self.node.id)
            event.accept()
        else:
            super().mouseDoubleClickEvent(event)

    # ------------------------------------------------------------------ painting
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        t = theme.current()
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setRenderHint(QPainter.Antialiasing)
        body = self.body_rect()
        family = theme.family_colour(self.spec.family)

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
        icon_w = 0.0 if boost > 1.1 else 20.0  # zoomed out, the title needs the room more
        if icon_w:
            paint_family_icon(painter, self.spec.family, QRectF(PAD - 2, 7, 17, 17), ink)
        right_reserved = 0.0
        if self.node.is_group:
            right_reserved = self._paint_repeat_pill(painter, ink, family)
        title_font = scaled_font(13 * min(boost, 1.25), bold=True)  # titles must still fit
        painter.setPen(ink)
        painter.setFont(title_font)
        title_rect = QRectF(PAD + icon_w, 0, body.width() - PAD * 2 - icon_w - right_reserved,
                            HEADER_H)
        title = QFontMetricsF(title_font).elidedText(self.node.label, Qt.ElideRight,
                                                     title_rect.width())
        painter.drawText(title_rect, Qt.AlignVCenter | Qt.AlignLeft, title)

        if lod > 0.3:  # below that even enlarged text is noise
            self._paint_ports_text(painter, t, boost)
            self._paint_summary(painter, t, boost)
        if self.telemetry is not None:
            self._paint_telemetry(painter, t, body, lod)

        self._paint_outline(painter, t, body)
        self._paint_badges(painter, t, lod)

    def _paint_repeat_pill(self, painter, ink, family) -> float:
        text = f"× {self.node.param('repeat')}"
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
        if boost > 1.2:  # zoomed out: one enlarged line, the count left for the tooltip
            font = scaled_font(11 * boost)
            painter.setFont(font)
            rect = QRectF(PAD, top, self.width - 2 * PAD, SUMMARY_H * lines)
            text = QFontMetricsF(font).elidedText(self._summary, Qt.ElideRight, rect.width())
            painter.drawText(rect, Qt.AlignLeft | Qt.AlignTop, text)
            return
        painter.setFont(SMALL_FONT)
        rect = QRectF(PAD, top, self.width - 2 * PAD, SUMMARY_H * (lines - 1))
        painter.drawText(rect, Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, self._summary)
        if self.params:
            rect = QRectF(PAD, top + SUMMARY_H * (lines - 1), self.width - 2 * PAD, SUMMARY_H)
            painter.drawText(rect, Qt.AlignRight | Qt.AlignVCenter,
                             f"{count_label(self.params)} params")

    def _paint_telemetry(self, painter, t, body, lod: float) -> None:
        """A band in the measured colour along the bottom edge, its value above it."""
        colour, label = self.telemetry
        band = QPainterPath()
        band.addRoundedRect(body, 8, 8)
        strip = QPainterPath()
        strip.addRect(QRectF(0, body.bottom() - 8, body.width(), 8))
        painter.save()
        painter.setPen(Qt.NoPen)
        painter.setBrush(colour)
        painter.drawPath(band.intersected(strip))
        if lod > 0.3 and label:
            painter.setPen(t.color("node_text"))
            painter.setFont(SMALL_FONT)
            painter.drawText(QRectF(PAD, body.bottom() - 8 - SUMMARY_H, body.width() / 2,
                                    SUMMARY_H), Qt.AlignLeft | Qt.AlignVCenter, label)
        painter.restore()

    def _paint_outline(self, painter, t, body) -> None:
        painter.setBrush(Qt.NoBrush)
        severity = self.severity
        if severity:
            painter.setPen(QPen(t.color("error" if severity == "error" else "warning"), 3))
        else:
            painter.setPen(QPen(t.color("node_border"), 1))
        painter.drawRoundedRect(body, 8, 8)
        if self.isSelected():
            painter.setPen(QPen(t.color("selection"), 2.5))
            painter.drawRoundedRect(body.adjusted(-4, -4, 4, 4), 11, 11)

    def _paint_badges(self, painter, t, lod) -> None:
        severity = self.severity or self.inner_severity
        if not severity:
            return
        # keep the badge at least ~18 screen pixels wide however far the view zooms out
        size = max(20.0, 18.0 / max(lod, 1e-3)) if lod < 1 else 20.0
        size = min(size, 90.0)
        if not self.severity:  # only inside the group: a smaller badge
            size *= 0.8
        colour = t.color("error" if severity == "error" else "warning")
        rect = QRectF(self.width - size * 0.6, -size * 0.4, size, size)
        paint_badge(painter, rect, severity, colour)
