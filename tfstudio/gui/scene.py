"""The canvas model: one level of the graph (the root or a group's inside) as scene items.

The scene turns gestures into commands on the session's document (add a block, draw a wire,
move, delete) and redraws from the document's events, never the other way round. A refused
wire is explained twice: in the status bar and in a note next to the port it was dropped on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from ..graph import (GROUP_INPUT, GROUP_OUTPUT, AddNode, Connect, Disconnect, Edge, Edit,
                     GraphChange, GraphError, GraphEvent, Macro, MoveNodes, Node,
                     RemoveNodes, new_node)
from ..graph.insert import connect_new_edit, splice_edit
from ..graph.layout import CANVAS_SCALE, LABEL_SPOTS, Lane, clear_spot, route_lanes, wire_route
from ..graph.schema import kind_accepts
from ..graph.templates import layer_graph
from .graph_report import GraphReport
from .node_item import HEADER_H, PORT_R, NodeItem, PortItem
from .session import EditorSession
from .text import shape_label
from .wire_item import WireItem

SPREAD = CANVAS_SCALE  # canvas units per graph unit (graph/layout.py says why)
GRID = 20.0
PORT_PICK_RADIUS = 16.0


def to_scene(pos: tuple[float, float]) -> QPointF:
    return QPointF(pos[0] * SPREAD, pos[1] * SPREAD)


def to_graph(point: QPointF) -> tuple[float, float]:
    return (round(point.x() / SPREAD, 2), round(point.y() / SPREAD, 2))


@dataclass(frozen=True)
class DropTarget:
    """Where a new block goes: the level ``path`` (a group's inside when ``group`` is the open
    frame it was aimed at), spliced into ``edge`` of that level when one is set."""

    path: tuple[str, ...]
    edge: Edge | None = None
    group: str | None = None


def _free_spot(graph, node: Node, edge: Edge | None) -> tuple[float, float]:
    """Where a block added inside a group sits when the group is entered: between the ends
    of the wire it was spliced into, else under the others; clear of every block."""
    if not graph.nodes:
        return (0.0, 0.0)
    if edge is not None and edge.src in graph and edge.dst in graph:
        a, b = graph.node(edge.src).pos, graph.node(edge.dst).pos
        start = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    else:
        start = (min(n.pos[0] for n in graph), max(n.pos[1] for n in graph))
    return clear_spot(graph, node, start)


def _by_inner_block(diagnostics, prefix: tuple[str, ...]) -> dict[str, str]:
    """The worst severity per block of a group's inside (``prefix``: the inside's path): a
    problem deeper down counts for the group block that holds it."""
    worst: dict[str, str] = {}
    for d in diagnostics:
        path = tuple(d.path or ())
        if path == prefix:
            key = d.node_id
        else:
            key = path[len(prefix)] if len(path) > len(prefix) else None
        if key and worst.get(key) != "error":
            worst[key] = "error" if d.severity == "error" else "warning"
    return worst


def _wire_words(edge: Edge) -> str:
    return f"from {edge.src} to {edge.dst}"


@dataclass(frozen=True)
class LooseWire:
    """A wire dragged from ``port`` (node id, port name) of the level ``path``, carrying
    ``kind``, and let go in empty space at ``scene_pos``: the search that opens there adds a
    block wired to it."""

    path: tuple[str, ...]
    port: tuple[str, str]
    kind: str
    from_output: bool
    scene_pos: QPointF


@dataclass
class _WireDrag:
    origin: PortItem          # the end that stays put
    temp: WireItem
    detached: Edge | None     # an existing wire picked up from its input, if any


class GraphScene(QGraphicsScene):
    path_changed = Signal(tuple)
    message = Signal(str)
    wire_released = Signal(object)  # a LooseWire: a new wire let go in empty space

    def __init__(self, session: EditorSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.snap_to_grid = True
        self.node_items: dict[str, NodeItem] = {}
        self.wire_items: dict[Edge, WireItem] = {}
        self.closed_groups: set[tuple[str, ...]] = set()  # paths of groups drawn as a box
        self._obstacles: dict[str, tuple[float, float, float, float]] = {}  # what wires avoid
        self._lanes: dict[Edge, list[Lane]] = {}  # routed wires' runs and legs
        self._path: tuple[str, ...] = ()
        self._switched_off: tuple[str, ...] = ()  # Explain's ablation switches (set_ablated)
        self._drag: _WireDrag | None = None
        self._toast: _Toast | None = None
        self._toast_timer = QTimer(self, singleShot=True, interval=4000)  # dies with the scene
        self._toast_timer.timeout.connect(self._drop_toast)
        self.setSceneRect(-40000, -40000, 80000, 80000)  # room to pan anywhere
        # how an event at our own level redraws: one handler per kind of change
        self._handlers: dict[GraphChange, Callable[[GraphEvent], None]] = {
            GraphChange.GRAPH_REPLACED: self._on_graph_replaced,
            GraphChange.NODE_ADDED: self._on_node_added,
            GraphChange.NODE_REMOVED: self._on_node_removed,
            GraphChange.EDGE_ADDED: self._on_edge_added,
            GraphChange.EDGE_REMOVED: self._on_edge_removed,
            GraphChange.PARAM_CHANGED: self._on_node_changed,
            GraphChange.TITLE_CHANGED: self._on_node_changed,
            GraphChange.NODE_MOVED: self._on_node_moved,
        }
        session.document.subscribe(self._on_event)
        session.report_ready.connect(self.apply_report)
        self.rebuild()

    # ------------------------------------------------------------------ navigation
    @property
    def path(self) -> tuple[str, ...]:
        return self._path

    @property
    def graph(self):
        return self.session.document.graph(self._path)

    def set_path(self, path) -> None:
        path = tuple(path)
        self.session.document.graph(path)  # raises GraphError for a path that does not exist
        self._path = path
        self.rebuild()
        self.path_changed.emit(path)

    def enter_group(self, node_id: str) -> None:
        self.set_path(self._path + (node_id,))

    def _deepest_valid_path(self) -> tuple[str, ...]:
        path = self._path
        while path:
            try:
                self.session.document.graph(path)
                return path
            except GraphError:
                path = path[:-1]
        return ()

    # ------------------------------------------------------------------ building
    def rebuild(self) -> None:
        selected = set(self.selected_node_ids())
        self._cancel_drag()
        self._toast = None  # clear() below deletes it
        self.clear()
        self.node_items.clear()
        self._obstacles.clear()
        self._lanes.clear()
        self.wire_items.clear()
        graph = self.graph
        for node in graph:
            self._add_node_item(node)
        for edge in graph.edges:
            self._add_wire_item(edge)
        self.apply_report(self.session.report)
        self.set_ablated(self._switched_off)
        for nid in selected & set(self.node_items):
            self.node_items[nid].setSelected(True)

    def _add_node_item(self, node: Node) -> NodeItem:
        item = NodeItem(node, self.graph, is_open=self._path + (node.id,) not in self.closed_groups)
        item.setPos(to_scene(node.pos))
        self.addItem(item)
        self.node_items[node.id] = item
        return item

    def _add_wire_item(self, edge: Edge) -> WireItem | None:
        src = self.node_items.get(edge.src)
        kind = "hidden"
        if src is not None and edge.src_port in src.outputs:
            kind = src.outputs[edge.src_port].kind
        wire = WireItem(kind, edge)
        self.addItem(wire)
        self.wire_items[edge] = wire
        self._place_wire(wire)
        return wire

    def _place_wire(self, wire: WireItem) -> None:
        e = wire.edge
        src, dst = self.node_items.get(e.src), self.node_items.get(e.dst)
        if src is None or dst is None:
            return
        out_port = src.outputs.get(e.src_port)
        in_port = dst.inputs.get(e.dst_port)
        wire.broken = out_port is None or in_port is None
        start = out_port.scenePos() if out_port else src.mapToScene(src.width, HEADER_H)
        end = in_port.scenePos() if in_port else dst.mapToScene(0, HEADER_H)
        others = [self._obstacle(nid) for nid in self.node_items if nid not in (e.src, e.dst)]
        ends = [self._obstacle(e.src), self._obstacle(e.dst)]
        lanes = [lane for edge, runs in self._lanes.items() if edge != e for lane in runs]
        route = wire_route((start.x(), start.y()), (end.x(), end.y()), others, ends=ends,
                           lanes=lanes)
        self._lanes[e] = route_lanes(route)  # later wires keep their runs (and labels) off
        wire.set_ends(start, end, route)
        if in_port is not None:
            in_port.connected = True
            in_port.update()

    def _obstacle(self, node_id: str) -> tuple[float, float, float, float]:
        """A block as wires must avoid it: its body and the ports on its edges (kept until
        the block moves or changes size, so re-placing many wires stays cheap)."""
        if node_id not in self._obstacles:
            item = self.node_items[node_id]
            r = item.mapRectToScene(item.body_rect()).adjusted(-PORT_R - 4, -4, PORT_R + 4, 4)
            self._obstacles[node_id] = (r.x(), r.y(), r.width(), r.height())
        return self._obstacles[node_id]

    def _place_all_wires(self) -> None:
        self._lanes.clear()  # placed afresh in one order, so the result does not drift
        for wire in self.wire_items.values():
            self._place_wire(wire)
        self._place_labels()

    def toggle_group(self, node_id: str) -> None:
        """Open a group's frame to show its inside, or close it to a box (a view setting:
        the document does not change, and the layout keeps the room of the open frame)."""
        item = self.node_items.get(node_id)
        if item is None or not item.node.is_group:
            return
        key = self._path + (node_id,)
        self.closed_groups.symmetric_difference_update({key})
        item.set_open(key not in self.closed_groups, self.graph)
        self._obstacles.pop(node_id, None)
        self.apply_report(self.session.report)
        self._place_all_wires()

    def _place_wires_of(self, node_id: str) -> None:
        for edge, wire in self.wire_items.items():
            if node_id in (edge.src, edge.dst):
                self._place_wire(wire)

    def _refresh_connected_flags(self, node_id: str) -> None:
        item = self.node_items.get(node_id)
        if item is None:
            return
        wired = {e.dst_port for e in self.wire_items if e.dst == node_id}
        for name, port in item.inputs.items():
            port.connected = name in wired
            port.update()

    # ------------------------------------------------------------------ document events
    def _on_event(self, ev: GraphEvent) -> None:
        depth = len(self._path)
        if ev.path == self._path:
            self._apply_event(ev)
        elif len(ev.path) > depth and ev.path[:depth] == self._path:
            # an edit inside one of our groups: its ports and summary may have changed
            gid = ev.path[depth]
            if gid in self.node_items:
                self.node_items[gid].refresh(self.graph)
                self._obstacles.pop(gid, None)
                self._place_all_wires()  # an open frame may have grown into other wires
        elif ev.path == self._path[:len(ev.path)]:
            # an ancestor changed: our graph may have been swapped out or removed
            if ev.kind is GraphChange.GRAPH_REPLACED or self._deepest_valid_path() != self._path:
                path = self._deepest_valid_path()
                changed = path != self._path
                self._path = path
                self.rebuild()
                if changed:
                    self.path_changed.emit(path)

    def _apply_event(self, ev: GraphEvent) -> None:
        self._handlers[GraphChange(ev.kind)](ev)

    def _on_graph_replaced(self, ev: GraphEvent) -> None:
        self.rebuild()

    def _on_node_added(self, ev: GraphEvent) -> None:
        self._add_node_item(self.graph.node(ev.node_id))

    def _on_node_removed(self, ev: GraphEvent) -> None:
        for edge in [e for e in self.wire_items if ev.node_id in (e.src, e.dst)]:
            self.removeItem(self.wire_items.pop(edge))
            self._lanes.pop(edge, None)
        item = self.node_items.pop(ev.node_id, None)
        self._obstacles.pop(ev.node_id, None)
        if item is not None:
            self.removeItem(item)

    def _on_edge_added(self, ev: GraphEvent) -> None:
        self._add_wire_item(ev.edge)
        self._refresh_connected_flags(ev.edge.dst)

    def _on_edge_removed(self, ev: GraphEvent) -> None:
        wire = self.wire_items.pop(ev.edge, None)
        self._lanes.pop(ev.edge, None)
        if wire is not None:
            self.removeItem(wire)
        self._refresh_connected_flags(ev.edge.dst)

    def _on_node_changed(self, ev: GraphEvent) -> None:
        item = self.node_items.get(ev.node_id)
        self._obstacles.pop(ev.node_id, None)
        if item is not None:
            item.refresh(self.graph)
            self._place_wires_of(ev.node_id)
            self._refresh_connected_flags(ev.node_id)

    def _on_node_moved(self, ev: GraphEvent) -> None:
        item = self.node_items.get(ev.node_id)
        if item is not None:
            target = to_scene(self.graph.node(ev.node_id).pos)
            if (item.pos() - target).manhattanLength() > 0.01:
                item.setPos(target)

    # ------------------------------------------------------------------ feedback
    def apply_report(self, report: GraphReport) -> None:
        """Draw diagnostics on nodes, shapes on wires, parameter counts in node footers."""
        here = report.diagnostics_at(self._path)
        for nid, item in self.node_items.items():
            mine = [d for d in here if d.node_id == nid]
            inner = report.diagnostics_below(self._path, nid) if item.node.is_group else []
            item.set_feedback(mine, inner, report.node_params(self._path, nid),
                              _by_inner_block(inner, self._path + (nid,)))
        for edge, wire in self.wire_items.items():
            shape = report.shapes.edge_shape(edge, self._path)
            wire.set_label(shape_label(shape) if shape else "")
        for nid, item in self.node_items.items():
            ins = report.shapes.input_shapes(nid, self._path)
            outs = report.shapes.output_shapes(nid, self._path)
            for name, port in item.inputs.items():
                port.set_shape(shape_label(ins[name]) if ins.get(name) else None)
            for name, port in item.outputs.items():
                port.set_shape(shape_label(outs[name]) if outs.get(name) else None)
        self._place_labels()

    def _place_labels(self) -> None:
        """Each wire's label at the middle of its wire, or further along or back where
        another label already is (graph.layout.LABEL_SPOTS, as draw_level places them)."""
        taken: list[QRectF] = []
        for wire in self.wire_items.values():
            if not wire.label:
                continue
            for at in LABEL_SPOTS:
                box = wire.label_rect(at)
                if not any(box.intersects(other) for other in taken):
                    break
            wire.set_label_at(at)
            taken.append(box)

    def set_ablated(self, switched_off: Iterable[str]) -> None:
        """Draw the blocks that Explain switches off as ablated. ``switched_off`` are the
        model's names ("layers.0.attn", "layers.1.attn:head=0"; a group's copies are
        "group.N."); a block inside a group shows every copy's switches. Kept across
        rebuilds and moves between levels; empty restores every block."""
        self._switched_off = tuple(switched_off)
        prefix = "".join(rf"{re.escape(group)}\.\d+\." for group in self._path)
        own = re.compile(prefix + r"([^.:]+)(?::.*)?$")
        inside = re.compile(prefix + r"([^.:]+)\.\d+\.([^.:]+)(?::.*)?$")
        for nid, item in self.node_items.items():
            mine = [n for n in self._switched_off if (m := own.match(n)) and m[1] == nid]
            inner: dict[str, list[str]] = {}
            for name in self._switched_off:
                if (m := inside.match(name)) and m[1] == nid:
                    inner.setdefault(m[2], []).append(name)
            if mine or inner or item.switched_off or item.inner_switched_off:
                item.set_ablated(mine, inner)

    def show_note(self, text: str, scene_pos: QPointF, error: bool = True) -> None:
        """A short note beside the cursor that fades by itself (a refused wire says why)."""
        if self._toast is not None and self._toast.scene() is self:
            self.removeItem(self._toast)
        self._toast = _Toast(text, error)
        self._toast.setPos(scene_pos + QPointF(14, 10))
        self.addItem(self._toast)
        self._toast_timer.start()

    def _drop_toast(self) -> None:
        if self._toast is not None and self._toast.scene() is self:
            self.removeItem(self._toast)
        self._toast = None

    @property
    def note_text(self) -> str:
        """The note on the canvas now, '' when none (what a refused wire said)."""
        return self._toast.text if self._toast is not None else ""

    # ------------------------------------------------------------------ commands
    def run(self, command: Edit, near: QPointF | None = None) -> bool:
        """Execute an edit; a refusal goes to the status bar and, with ``near``, onto the canvas."""
        refusal = self.session.try_execute(command)
        if refusal is None:
            return True
        self.message.emit(refusal)
        if near is not None:
            self.show_note(refusal, near)
        return False

    def drop_target(self, scene_pos: QPointF, block_type: str | None = None) -> DropTarget:
        """Where a block of ``block_type`` put at ``scene_pos`` lands: into the wire under it
        when its ports fit (a drop gives the type; other gestures give None and never
        splice), else inside the open group frame under it, else at this level."""
        frame = self.frame_at(scene_pos)
        if block_type is not None:
            wire = next((i for i in self.items(scene_pos) if isinstance(i, WireItem)
                         and i.edge is not None and i.edge in self.wire_items), None)
            if wire is not None and frame is None and self._splices(block_type, (), wire.edge):
                return DropTarget(self._path, wire.edge)
            if frame is not None:
                edge = frame.inner_edge_at(frame.mapFromScene(scene_pos))
                if edge is not None and self._splices(block_type, (frame.node.id,), edge):
                    return DropTarget(self._path + (frame.node.id,), edge, frame.node.id)
        if frame is not None:
            return DropTarget(self._path + (frame.node.id,), None, frame.node.id)
        return DropTarget(self._path)

    def frame_at(self, scene_pos: QPointF) -> NodeItem | None:
        """The open group frame under ``scene_pos`` (the topmost), if any."""
        for item in self.items(scene_pos):
            if (isinstance(item, NodeItem) and item.frame is not None
                    and item.body_rect().contains(item.mapFromScene(scene_pos))):
                return item
        return None

    def _splices(self, block_type: str, below: tuple[str, ...], edge: Edge) -> bool:
        graph = self.session.document.graph(self._path + below)
        probe = Node("probe_block", block_type)
        return splice_edit(graph, (), probe, edge) is not None

    def show_drop_target(self, scene_pos: QPointF | None, block_type: str | None = None) -> None:
        """Highlight where a block of ``block_type`` dragged to ``scene_pos`` would land
        (None clears the highlight)."""
        target = self.drop_target(scene_pos, block_type) if scene_pos is not None else None
        for nid, item in self.node_items.items():
            here = target is not None and target.group == nid
            item.set_drop_hint(here and target.edge is None, target.edge if here else None)
        for edge, wire in self.wire_items.items():
            wire.set_hot(target is not None and target.group is None and target.edge == edge)

    def add_block(self, block_type: str, scene_pos: QPointF, splice: bool = False) -> str | None:
        """Add a block centred under ``scene_pos`` (palette drop, search-to-add); its id.
        Over an open group's frame it goes inside the group (into the one inside that all
        its copies share); with ``splice`` (a drop) onto a wire whose ports fit, into that
        wire."""
        self.show_drop_target(None)
        target = self.drop_target(scene_pos, block_type if splice else None)
        graph = self.session.document.graph(target.path)
        corner = self.snapped(scene_pos - QPointF(90, HEADER_H / 2), force=True)
        node = new_node(graph, block_type, to_graph(corner))
        if target.group is not None:  # the frame lays its inside out itself; entered, the
            node.pos = _free_spot(graph, node, target.edge)  # block sits clear of the others
        else:
            node.pos = clear_spot(graph, node, node.pos)  # never on top of another block
        if block_type == "group":
            # a fresh group holds a standard layer, so there is something to enter and edit
            node.subgraph = layer_graph([("attention", {}), ("feed_forward", {})], "pre")
            node.params["repeat"] = 1
        command: Edit | None = None
        if target.edge is not None:
            command = splice_edit(graph, target.path, node, target.edge)
        spliced = command is not None
        if command is None:
            command = AddNode(target.path, node, text=f"Add {node.label}")
        if not self.run(command, scene_pos):
            return None
        if target.group is None:
            self.select_nodes([node.id])
        where = ""
        if target.group is not None:
            group = self.graph.node(target.group)
            copies = group.param("repeat") or 1
            where = f" inside {group.label}" + (f" (all {copies} copies share it)"
                                                if copies > 1 else "")
        self.message.emit(f"{'Inserted' if spliced else 'Added'} {node.label}"
                          f"{' into the wire ' + _wire_words(target.edge) if spliced else ''}"
                          f"{where}")
        return node.id

    def connect_ports(self, src: str, src_port: str, dst: str, dst_port: str,
                      detached: Edge | None = None, near: QPointF | None = None) -> bool:
        """Wire ``src.src_port`` to ``dst.dst_port`` (what releasing a dragged wire does)."""
        edge = Edge(src, src_port, dst, dst_port)
        if detached == edge:
            return True
        if near is None and dst in self.node_items:
            port = self.node_items[dst].inputs.get(dst_port)
            near = port.scenePos() if port else None
        replaced = None
        if detached is not None:
            command: Edit = Macro([Disconnect(self._path, detached), Connect(self._path, edge)],
                                     text="Reconnect")
        else:
            replaced = self.graph.edge_into(dst, dst_port) if dst in self.graph else None
            command = Connect(self._path, edge, text="Replace a wire" if replaced else "Connect")
        done = self.run(command, near)
        if done and replaced is not None:
            text = (f"Replaced the wire from {replaced.src} into {dst}'s input "
                    f"'{dst_port}' (Undo puts it back)")
            self.message.emit(text)
            if near is not None:
                self.show_note(text, near, error=False)
        return done

    def add_connected(self, block_type: str, loose: LooseWire) -> str | None:
        """Add a block where ``loose`` was let go, wired to its port (one undo step)."""
        if loose.path != self._path:
            return None
        corner = self.snapped(loose.scene_pos - QPointF(0 if loose.from_output else 190,
                                                        HEADER_H + 14), force=True)
        node = new_node(self.graph, block_type, to_graph(corner))
        command = connect_new_edit(self._path, node, loose.port, loose.kind, loose.from_output)
        if command is None:
            text = f"{node.label} has no port that fits a wire carrying {loose.kind}"
            self.message.emit(text)
            self.show_note(text, loose.scene_pos)
            return None
        if not self.run(command, loose.scene_pos):
            return None
        self.select_nodes([node.id])
        return node.id

    def delete_selected(self) -> bool:
        ids = self.selected_node_ids()
        boundary = [n for n in ids if self.graph.node(n).type in (GROUP_INPUT, GROUP_OUTPUT)]
        if boundary:
            self.message.emit("A group's inputs and outputs blocks cannot be deleted; ungroup the "
                              "group (Ctrl+Shift+G) to dissolve it instead")
            ids = [n for n in ids if n not in boundary]
        wires = [w.edge for w in self.selectedItems()
                 if isinstance(w, WireItem) and w.edge is not None
                 and w.edge.src not in ids and w.edge.dst not in ids]
        commands: list[Edit] = [Disconnect(self._path, e) for e in wires]
        if ids:
            commands.append(RemoveNodes(self._path, ids))
        if not commands:
            return False
        return self.run(commands[0] if len(commands) == 1 else Macro(commands, text="Delete"))

    # ------------------------------------------------------------------ selection
    def selected_node_ids(self) -> list[str]:
        return [i.node.id for i in self.selectedItems() if isinstance(i, NodeItem)]

    def select_nodes(self, ids) -> None:
        ids = set(ids)
        self.clearSelection()
        for nid in ids:
            if nid in self.node_items:
                self.node_items[nid].setSelected(True)

    # ------------------------------------------------------------------ moving
    def snapped(self, point: QPointF, force: bool = False) -> QPointF:
        """``point`` on the grid while the user drags (positions from files are kept exact)."""
        if not self.snap_to_grid or not (force or self.mouseGrabberItem() is not None):
            return point
        return QPointF(round(point.x() / GRID) * GRID, round(point.y() / GRID) * GRID)

    def node_item_moved(self, item: NodeItem) -> None:
        self._obstacles.pop(item.node.id, None)
        self._place_wires_of(item.node.id)

    def commit_moves(self) -> bool:
        """Turn dragged item positions into one Move command (called on mouse release)."""
        graph = self.graph
        moved = {}
        for nid, item in self.node_items.items():
            if nid in graph and (item.pos() - to_scene(graph.node(nid).pos)).manhattanLength() > 0.5:
                moved[nid] = to_graph(item.pos())
        if not moved:
            return False
        done = self.run(MoveNodes(self._path, moved))
        self._place_all_wires()  # a moved block may now stand in another wire's way
        return done

    def mouseReleaseEvent(self, event):
        super().mouseReleaseEvent(event)
        if self._drag is None:
            self.commit_moves()

    # ------------------------------------------------------------------ drawing wires
    def begin_wire(self, port: PortItem, scene_pos: QPointF | None = None) -> None:
        """Start dragging a wire from ``port``; an input that has a wire hands that wire over."""
        self._cancel_drag()
        detached = None
        origin = port
        if port.is_input:
            existing = self.graph.edge_into(port.node_id, port.name)
            src_item = self.node_items.get(existing.src) if existing else None
            if existing is not None and src_item is not None and existing.src_port in src_item.outputs:
                detached = existing
                origin = src_item.outputs[existing.src_port]
                self.wire_items[existing].setVisible(False)
        temp = WireItem(origin.kind)
        temp.setZValue(5)
        self.addItem(temp)
        self._drag = _WireDrag(origin, temp, detached)
        for item in self.node_items.values():
            for p in list(item.inputs.values()) + list(item.outputs.values()):
                p.highlight = "ok" if self._compatible(origin, p) else "no"
                p.update()
        origin.highlight = None
        self.drag_wire(scene_pos if scene_pos is not None else port.scenePos())

    def _compatible(self, origin: PortItem, other: PortItem) -> bool:
        if other.is_input == origin.is_input or other.node_id == origin.node_id:
            return False
        out, inp = (other, origin) if origin.is_input else (origin, other)
        return kind_accepts(inp.kind, out.kind)

    def drag_wire(self, scene_pos: QPointF) -> None:
        if self._drag is None:
            return
        target = self.port_at(scene_pos)
        end = target.scenePos() if target is not None else scene_pos
        origin = self._drag.origin
        if origin.is_input:
            self._drag.temp.set_ends(end, origin.scenePos())
        else:
            self._drag.temp.set_ends(origin.scenePos(), end)

    def finish_wire(self, scene_pos: QPointF) -> bool:
        """Drop the dragged wire at ``scene_pos``: connect, reconnect, or (in empty space) let
        a picked-up wire go."""
        if self._drag is None:
            return False
        drag = self._drag
        self._cancel_drag()
        target = self.port_at(scene_pos)
        if target is None or target is drag.origin:
            if drag.detached is not None:
                return self.run(Disconnect(self._path, drag.detached))
            if target is None and not any(isinstance(i, NodeItem) for i in self.items(scene_pos)):
                origin = drag.origin
                self.wire_released.emit(LooseWire(self._path, (origin.node_id, origin.name),
                                                  origin.kind, not origin.is_input, scene_pos))
            return False
        if target.is_input == drag.origin.is_input:
            both = "inputs" if target.is_input else "outputs"
            text = (f"Both ends are {both}: a wire runs from an output (right side of a block) "
                    "to an input (left side of another)")
            self.message.emit(text)
            self.show_note(text, target.scenePos())
            self._restore_detached(drag)
            return False
        out, inp = (target, drag.origin) if drag.origin.is_input else (drag.origin, target)
        ok = self.connect_ports(out.node_id, out.name, inp.node_id, inp.name,
                                detached=drag.detached, near=target.scenePos())
        if not ok:
            self._restore_detached(drag)
        return ok

    def _restore_detached(self, drag: _WireDrag) -> None:
        if drag.detached is not None and drag.detached in self.wire_items:
            self.wire_items[drag.detached].setVisible(True)

    def _cancel_drag(self) -> None:
        if self._drag is None:
            return
        if self._drag.temp.scene() is self:
            self.removeItem(self._drag.temp)
        self._restore_detached(self._drag)
        self._drag = None
        for item in self.node_items.values():
            for p in list(item.inputs.values()) + list(item.outputs.values()):
                p.highlight = None
                p.update()

    def port_at(self, scene_pos: QPointF) -> PortItem | None:
        r = PORT_PICK_RADIUS
        best, best_d = None, r * r
        for item in self.items(QRectF(scene_pos.x() - r, scene_pos.y() - r, 2 * r, 2 * r)):
            if isinstance(item, PortItem):
                d = item.scenePos() - scene_pos
                dist = d.x() ** 2 + d.y() ** 2
                if dist <= best_d:
                    best, best_d = item, dist
        return best

    @property
    def dragging_wire(self) -> bool:
        return self._drag is not None


class _Toast(QGraphicsItem):
    """A note drawn at constant screen size next to where something was refused."""

    FONT = QFont()
    FONT.setPixelSize(12)

    def __init__(self, text: str, error: bool):
        super().__init__()
        self.text = text
        self.error = error
        self.setFlag(QGraphicsItem.ItemIgnoresTransformations)
        self.setZValue(100)
        fm = QFontMetricsF(self.FONT)
        self._rect = fm.boundingRect(QRectF(0, 0, 320, 1000), Qt.TextWordWrap, text).adjusted(
            -8, -6, 8, 6)
        self._rect.moveTo(0, 0)

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        from . import theme
        t = theme.current()
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setPen(Qt.NoPen)
        painter.setBrush(QBrush(QColor(t.error if self.error else t.accent)))
        painter.drawRoundedRect(self._rect, 6, 6)
        painter.setPen(QPen(QColor("white")))
        painter.setFont(self.FONT)
        painter.drawText(self._rect.adjusted(8, 6, -8, -6), Qt.TextWordWrap, self.text)
