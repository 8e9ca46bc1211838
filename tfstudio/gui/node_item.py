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

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem

from ..graph import GROUP_INPUT, GROUP_OUTPUT, Graph, Node, get_spec
from ..graph.layout import NODE_WIDTH, Frame, closed_size, frame_wires, group_frame, port_y
from ..graph.model import group_boundary, parse_port_list
from ..graph.schema import PortSpec
from . import theme
from .ablation_marks import ablated_tip, whole
from .block_drawing import ABLATED_OPACITY, PAD, PORT_R, _Mini, routed_path
from .drop_rules import nearest_block
from .editor_state import double_click_enters, inner_click
from .node_paint import NodePainting, TelemetryBand
from .param_count import shown_count
from .problem_marks import worst
from .summaries import node_summary, node_tooltip, port_tooltip


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
        """The tooltip (summaries.port_tooltip): what the port carries, its shape when known."""
        self.setToolTip(port_tooltip(self.spec, self.is_input, shape))

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


class NodeItem(NodePainting, QGraphicsItem):
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
        self.errors = 0  # the graph's errors: while there are any, no count is drawn
        self.setFlags(QGraphicsItem.ItemIsMovable | QGraphicsItem.ItemIsSelectable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        # painted once into a pixmap, again only when it changes (update()) or the zoom does: a
        # repaint of the canvas (a run recolours it every few steps) copies the blocks
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self._summary = ""
        self._height = 0.0
        self.telemetry: tuple[QColor, str] | None = None  # (colour, label) from training
        self.band = TelemetryBand(self)  # draws the telemetry, over the cached block
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
        return worst(self.diagnostics)

    @property
    def ablated(self) -> bool:
        """Switched off in Explain, wholly (every head and expert) in at least one copy."""
        return whole(self.switched_off)

    @property
    def inner_severity(self) -> str | None:
        """The worst diagnostic inside this group."""
        return worst(self.inner_diagnostics)

    def refresh(self, graph: Graph) -> None:
        """Rebuild ports and text from the model node (after a parameter or title change)."""
        self.prepareGeometryChange()
        self.band.prepareGeometryChange()  # it follows the body's bottom edge
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
        self._inner_wires, self._inner_edges = [], []
        for e, start, end, route in frame_wires(self.node, frame):
            self._inner_wires.append(routed_path(start, end, route))
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
        return [PortSpec(n, k) for n, k in parse_port_list(inner.typed_params().ports)]

    def chevron_rect(self) -> QRectF:
        """Where a group's open / close chevron sits in its header."""
        return QRectF(PAD - 4, 5, 20, 20)

    def mini_at(self, item_pos: QPointF) -> str | None:
        """The id of the small block of this open frame under ``item_pos`` (None: none)."""
        return next((m.node.id for m in self._minis if m.rect.contains(item_pos)), None)

    def mini_nearest(self, item_pos: QPointF) -> str | None:
        """The id of the small block of this open frame nearest ``item_pos`` (None: none)."""
        centres = [(m.node.id, (m.rect.center().x(), m.rect.center().y())) for m in self._minis]
        return nearest_block(centres, (item_pos.x(), item_pos.y()))

    def set_inner_selected(self, node_id: str | None) -> None:
        for mini in self._minis:
            mini.selected = mini.node.id == node_id
        self.update()

    def mousePressEvent(self, event):
        if (self.node.is_group and event.button() == Qt.LeftButton
                and self.chevron_rect().contains(event.pos()) and self.scene() is not None):
            self.scene().toggle_group(self.node.id)
            event.accept()
            return
        super().mousePressEvent(event)
        scene = self.scene()
        if scene is None or event.button() != Qt.LeftButton:
            return
        chosen = inner_click(bool(event.modifiers()), self.mini_at(event.pos()),
                             scene.inner_selected)
        if chosen is not None and chosen[0] == "select":
            scene.select_inner(self.node.id, chosen[1])
        elif chosen is not None:
            scene.clear_inner()

    def count_text(self, short: bool = False) -> str:
        """The count drawn on this block (an open frame's header, a box's footer)."""
        return shown_count(self.node, self.params, self.errors, short)

    def set_feedback(self, diagnostics, inner_diagnostics, params: int | None,
                     inner_severity: dict[str, str] | None = None, errors: int = 0) -> None:
        """Problems of this block, of its inside, and (an open frame) the worst per block
        inside, drawn on that small block."""
        self.diagnostics = list(diagnostics)
        self.inner_diagnostics = list(inner_diagnostics)
        self.params = params
        self.errors = errors
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
            self.band.setVisible(telemetry is not None)
            self.band.update()  # the band alone: the block's cached pixmap stays as it is

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
        tip = node_tooltip(self.node, self.diagnostics + self.inner_diagnostics,
                           None if self.errors else self.params)
        off = self.switched_off + [n for names in self.inner_switched_off.values() for n in names]
        if off:
            tip = tip.removesuffix("</qt>") + ablated_tip(off) + "</qt>"
        self.setToolTip(tip)

    def port(self, name: str, is_input: bool) -> PortItem | None:
        return (self.inputs if is_input else self.outputs).get(name)

    # ------------------------------------------------------------------ geometry
    def body_rect(self) -> QRectF:
        return QRectF(0, 0, self.width, self._height)

    def drawn_rect(self) -> QRectF:
        """What is drawn of this block, in scene coordinates: its body, the ports on its
        edges and a group's stacked copies (a badge's corner, when it has one). What fitting
        the view needs; the bounding rect keeps extra room for a badge scaled up when zoomed
        out."""
        rect = self.body_rect().adjusted(-PORT_R, 0, PORT_R, 0)
        if self.node.is_group:
            rect.adjust(0, -8, 8, 0)
        if self.severity or self.inner_severity:
            rect.adjust(0, -8, 12, 0)
        return self.mapRectToScene(rect)

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
        inside = double_click_enters(self.node.is_group, self.mini_at(event.pos()))
        if inside is not None:
            scene = self.scene()
            scene.enter_group(self.node.id)
            if inside:  # inside, the block double-clicked is the one selected
                scene.select_nodes(list(inside))
            event.accept()
        else:
            super().mouseDoubleClickEvent(event)

    # ------------------------------------------------------------------ painting


