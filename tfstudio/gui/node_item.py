"""A block on the canvas: header with icon and title, typed ports, a summary, its diagnostics.

A layer group is drawn open: a frame with its ×N badge holding its inside as small read-only
blocks (the attention, FFN and norms a student came to see), its ports on the frame's edges at
the height of its stream; the chevron in its header closes it to a plain box. Items only draw
and forward gestures: a press on a port asks the scene to start a wire, a double-click on a
group asks the scene to enter it, a click on the chevron asks it to open or close the group.
A block switched off in Explain (ablated) is drawn dimmed with a dashed outline and an "off"
badge (:meth:`NodeItem.set_ablated`). Nothing here edits the graph.
"""
from __future__ import annotations

import html
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath,
                           QPainterPathStroker, QPen)
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from ..graph import GROUP_INPUT, GROUP_OUTPUT, Graph, Node, get_spec
from ..graph.model import group_boundary, kind_words, parse_port_list
from ..graph.layout import (HEADER_H, NODE_WIDTH, ROW_H, SUMMARY_H, Frame, closed_size,
                            group_frame, port_y, wire_route)
from ..graph.schema import PortSpec
from . import theme
from .icons import paint_badge, paint_family_icon
from .param_count import block_count
from .summaries import node_summary, node_tooltip
from .title_fit import fitted_title, title_font_fitting  # noqa: F401 (tests import it here)

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
        self.set_shape(None)

    def set_shape(self, shape: str | None) -> None:
        """The tooltip: the port's name, what it carries, its shape when known, and how to
        wire it."""
        side = "input" if self.is_input else "output"
        lines = [f"<b>{html.escape(self.name)}</b> ({side}): {html.escape(kind_words(self.kind))}"]
        if self.spec.description:
            lines.append(html.escape(self.spec.description))
        lines.append(f"shape: {html.escape(shape)}" if shape else "shape: known once wired")
        lines.append("<i>Drag to " + ("an output" if self.is_input else "an input")
                     + " to wire it" + ("; drag its wire away to move it" if self.is_input
                                        else "") + ".</i>")
        self.setToolTip("<qt>" + "<br>".join(lines) + "</qt>")

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

    def __init__(self, node: Node, graph: Graph, is_open: bool = True):
        super().__init__()
        self.node = node
        self.is_open = is_open          # a group drawn as a frame showing its inside
        self.frame: Frame | None = None
        self._minis: list[_Mini] = []
        self._inner_wires: list[QPainterPath] = []
        self._inner_edges: list = []  # the wire of the inside each of _inner_wires draws
        # a block dragged over this item would land here: the frame (inside the group) or
        # one of its inner wires (spliced into it); drawn in the accent colour
        self.drop_hint: bool = False
        self.hot_edge = None
        self._width = NODE_WIDTH
        self.spec = get_spec(node.type)
        self.inputs: dict[str, PortItem] = {}
        self.outputs: dict[str, PortItem] = {}
        self.diagnostics: list = []
        self.inner_diagnostics: list = []  # problems inside a group, shown as a smaller badge
        self.inner_block_severity: dict[str, str] = {}  # ... and on the small block that has it
        self.params: int | None = None
        self.setFlags(QGraphicsItem.ItemIsMovable | QGraphicsItem.ItemIsSelectable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self._summary = ""
        self._height = 0.0
        self.telemetry: tuple[QColor, str] | None = None  # (colour, label) from training
        self.switched_off: list[str] = []  # the Explain switches ablating this block
        self.inner_switched_off: dict[str, list[str]] = {}  # ... and each block of an open group
        self.refresh(graph)

    # ------------------------------------------------------------------ state
    @property
    def width(self) -> float:
        return self._width

    @property
    def severity(self) -> str | None:
        """"error", "warning" or None: the worst diagnostic on this node."""
        if any(d.severity == "error" for d in self.diagnostics):
            return "error"
        return "warning" if self.diagnostics else None

    @property
    def ablated(self) -> bool:
        """Switched off in Explain, wholly (every head and expert) in at least one copy."""
        return _whole(self.switched_off)

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
        show_inside = (self.node.is_group and self.is_open and self.node.subgraph is not None
                       and len(self.node.subgraph.nodes) > 0)
        self.frame = group_frame(graph, self.node.id) if show_inside else None
        if self.frame is not None:
            self._width, self._height = self.frame.size.width, self.frame.size.height
            in_ys, out_ys = self.frame.input_ys, self.frame.output_ys
            self._layout_inside(self.frame)
        else:
            closed = closed_size(max(len(ins), len(outs)), self.node.is_group)
            self._width, self._height = closed.width, closed.height
            in_ys = [port_y(i) for i in range(len(ins))]
            out_ys = [port_y(i) for i in range(len(outs))]
            self._minis, self._inner_wires, self._inner_edges = [], [], []
        for port, y in zip(self.inputs.values(), in_ys):
            port.setPos(0.0, y)
        for port, y in zip(self.outputs.values(), out_ys):
            port.setPos(self.width, y)
        self._summary = node_summary(self.node, graph)
        self._update_tooltip()
        self.update()

    def set_open(self, is_open: bool, graph: Graph) -> None:
        """Show a group's inside in a frame (True) or as a closed box."""
        self.is_open = is_open
        self.refresh(graph)

    def _layout_inside(self, frame: Frame) -> None:
        """The small blocks and the wires between them, in item coordinates."""
        inside = self.node.subgraph
        self._minis = []
        rects: dict[str, QRectF] = {}
        for nid, (x, y) in frame.inner.items():
            size = frame.inner_sizes[nid]
            rects[nid] = QRectF(x, y, size.width, size.height)
            node = inside.nodes[nid]
            if node.type not in (GROUP_INPUT, GROUP_OUTPUT):
                self._minis.append(_Mini(rects[nid], node, node_summary(node, inside),
                                         self.inner_switched_off.get(nid, []),
                                         self.inner_block_severity.get(nid)))
        in_names = [p.name for p in self._boundary_ports(GROUP_INPUT)]
        out_names = [p.name for p in self._boundary_ports(GROUP_OUTPUT)]
        boxes = [(r.x(), r.y(), r.width(), r.height()) for r in (m.rect for m in self._minis)]
        self._inner_wires, self._inner_edges = [], []
        for e in inside.edges:
            if e.src not in rects or e.dst not in rects:
                continue
            src, dst = inside.nodes[e.src], inside.nodes[e.dst]
            if src.type == GROUP_INPUT:  # from the frame's own port on its left edge
                start = (0.0, _port_height(in_names, frame.input_ys, e.src_port,
                                           rects[e.src].center().y()))
            else:
                start = (rects[e.src].right(), rects[e.src].center().y())
            if dst.type == GROUP_OUTPUT:
                end = (frame.size.width, _port_height(out_names, frame.output_ys, e.dst_port,
                                                      rects[e.dst].center().y()))
            else:
                end = (rects[e.dst].left(), rects[e.dst].center().y())
            others = [b for b, nid in zip(boxes, [m.node.id for m in self._minis])
                      if nid not in (e.src, e.dst)]
            self._inner_wires.append(routed_path(start, end, wire_route(start, end, others, 6)))
            self._inner_edges.append(e)

    def inner_edge_at(self, item_pos: QPointF, reach: float = 6.0):
        """The wire inside this open group passing within ``reach`` of ``item_pos`` (None
        when none, or when the point is on one of the small blocks)."""
        if any(m.rect.contains(item_pos) for m in self._minis):
            return None
        stroker = QPainterPathStroker()
        stroker.setWidth(2 * reach)
        for edge, path in zip(self._inner_edges, self._inner_wires):
            if stroker.createStroke(path).contains(item_pos):
                return edge
        return None

    def set_drop_hint(self, on: bool, edge=None) -> None:
        """Show where a dragged block would land: in this frame, or into ``edge``."""
        if (on, edge) != (self.drop_hint, self.hot_edge):
            self.drop_hint, self.hot_edge = on, edge
            self.update()

    def _boundary_ports(self, boundary_type: str):
        inner = group_boundary(self.node, boundary_type)
        if inner is None:
            return []
        return [PortSpec(n, k) for n, k in parse_port_list(inner.param("ports"))]

    def chevron_rect(self) -> QRectF:
        """Where a group's open / close chevron sits in its header."""
        return QRectF(PAD - 4, 5, 20, 20)

    def mousePressEvent(self, event):
        if (self.node.is_group and event.button() == Qt.LeftButton
                and self.chevron_rect().contains(event.pos()) and self.scene() is not None):
            self.scene().toggle_group(self.node.id)
            event.accept()
            return
        super().mousePressEvent(event)

    def set_feedback(self, diagnostics, inner_diagnostics, params: int | None,
                     inner_severity: dict[str, str] | None = None) -> None:
        """Problems of this block, of its inside, and (an open frame) the worst per block
        inside, drawn on that small block."""
        self.diagnostics = list(diagnostics)
        self.inner_diagnostics = list(inner_diagnostics)
        self.params = params
        self.inner_block_severity = dict(inner_severity or {})
        for mini in self._minis:
            mini.severity = self.inner_block_severity.get(mini.node.id)
        self._update_tooltip()
        self.update()

    def set_telemetry(self, colour: QColor | None, label: str = "") -> None:
        """Colour the block by what training measured in it (gradient norm, activation RMS);
        None clears it. Set by the training panel (gui.training.telemetry)."""
        telemetry = (QColor(colour), label) if colour is not None else None
        if telemetry != self.telemetry:  # (set at every look inside, mostly to the same)
            self.telemetry = telemetry
            self.update()

    def set_ablated(self, switched_off: list[str],
                    inner: dict[str, list[str]] | None = None) -> None:
        """Mark the block as switched off in Explain: ``switched_off`` names the switches
        ablating it ("layers.0.attn", "layers.1.attn:head=0"), ``inner`` the same for each
        block inside an open group; empty restores the normal drawing."""
        self.switched_off = list(switched_off)
        self.inner_switched_off = {k: list(v) for k, v in (inner or {}).items() if v}
        for mini in self._minis:
            mini.switched_off = self.inner_switched_off.get(mini.node.id, [])
        self.setOpacity(ABLATED_OPACITY if self.ablated else 1.0)
        self._update_tooltip()
        self.update()

    def _update_tooltip(self) -> None:
        tip = node_tooltip(self.node, self.diagnostics + self.inner_diagnostics, self.params)
        off = self.switched_off + [n for names in self.inner_switched_off.values() for n in names]
        if off:
            tip = tip.removesuffix("</qt>") + (
                "<p style='color:#c98210'><b>Switched off in Explain (ablated):</b> "
                f"{html.escape(', '.join(off))}. Right-click the block, <i>Switch off in "
                "Explain</i>, to switch it back on (or untick it in Explain's Ablation "
                "tab).</p></qt>")
        self.setToolTip(tip)

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
        icon_w = 0.0 if boost > 1.1 else 20.0  # zoomed out, the title needs the room more
        if self.node.is_group:
            icon_w = 20.0
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

        if lod > 0.3:  # below that even enlarged text is noise
            self._paint_ports_text(painter, t, boost)
            self._paint_summary(painter, t, boost)
        if self.telemetry is not None:
            self._paint_telemetry(painter, t, body, lod)

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
        painter.setBrush(canvas.lighter(103) if canvas.lightness() > 128 else canvas.lighter(135))
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
        if lod > 0.3:
            small = scaled_font(11 * boost)
            painter.setFont(small)
            painter.setPen(t.color("node_muted"))
            line = QRectF(PAD, HEADER_H + 2, body.width() - 2 * PAD, SUMMARY_H * min(boost, 1.3))
            text = self._summary + (f"  ·  {block_count(self.node, self.params)}" if self.params
                                    else "")
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
        if lod > 0.3:
            self._paint_frame_port_names(painter, t, boost)
        if self.telemetry is not None:
            self._paint_telemetry(painter, t, body, lod)
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
                             block_count(self.node, self.params, short=True))

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
        # keep the badge at least ~18 screen pixels wide however far the view zooms out
        size = max(20.0, 18.0 / max(lod, 1e-3)) if lod < 1 else 20.0
        size = min(size, 90.0)
        if not self.severity:  # only inside the group: a smaller badge
            size *= 0.8
        colour = t.color("error" if severity == "error" else "warning")
        rect = QRectF(self.width - size * 0.6, -size * 0.4, size, size)
        paint_badge(painter, rect, severity, colour)


class _Mini:
    """A block inside an open group, drawn small and read-only (double-click the group to edit
    it): a colour strip of its family, its title and its summary on up to two lines."""

    def __init__(self, rect: QRectF, node: Node, summary: str, switched_off: list[str],
                 severity: str | None = None):
        self.rect = rect
        self.node = node
        self.summary = summary
        self.family = get_spec(node.type).family
        self.switched_off = switched_off  # the Explain switches ablating it, if any
        self.severity = severity  # "error" / "warning": its worst problem, drawn on it

    def paint(self, painter: QPainter, t, boost: float, lod: float) -> None:
        painter.save()
        if _whole(self.switched_off):
            painter.setOpacity(painter.opacity() * ABLATED_OPACITY)
        self._paint_block(painter, t, boost, lod)
        painter.restore()
        if self.switched_off:
            painter.setBrush(Qt.NoBrush)
            painter.setPen(ablated_pen(t))
            painter.drawRoundedRect(self.rect, 6, 6)
            paint_off_badge(painter, t, QPointF(self.rect.center().x(), self.rect.top()),
                            self.switched_off)
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
        if lod <= 0.3:
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
        painter.drawText(body, Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap, self.summary)


def _draw_title(painter: QPainter, rect: QRectF, font: QFont, lines: list[str]) -> None:
    """One or two title lines, centred as a block in ``rect``'s height."""
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignVCenter | Qt.AlignLeft, "\n".join(lines))


def _whole(switched_off: list[str]) -> bool:
    """A switch without ":head=" / ":expert=" turns the whole block off."""
    return any(":" not in name for name in switched_off)


def ablated_pen(t) -> QPen:
    """The dashed outline of a block switched off in Explain."""
    return QPen(t.color("warning"), 2.5, Qt.DashLine)


def paint_off_badge(painter: QPainter, t, top_centre: QPointF, switched_off: list[str]) -> None:
    """A pill on the block's top edge: "off" (the whole block) or "part off" (heads, experts)."""
    text = "off" if _whole(switched_off) else "part off"
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


def _port_height(names: list[str], heights: list[float], name: str, fallback: float) -> float:
    index = names.index(name) if name in names else -1
    return heights[index] if 0 <= index < len(heights) else fallback


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
