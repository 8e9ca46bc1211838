"""The canvas model: one level of the graph (the root or a group's inside) as scene items.

The scene turns gestures into commands on the session's document (add a block, draw a wire,
move, delete) and redraws from the document's events, never the other way round. A refused
wire is explained twice: in the status bar and in a note next to the port it was dropped on.
"""
from __future__ import annotations

from typing import Callable, Iterable

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from ..graph import Edge, Edit, GraphChange, GraphEvent, Node, RemoveNodes
from ..graph.edit_rules import move_edit
from ..graph.layout import Lane
from .ablation_marks import Marks, marks_at
from .canvas_units import to_graph, to_scene
from .canvas_grid import on_grid, snaps
from .delete_rules import deletion
from .editor_state import (deepest_path, event_reach, group_is_open, inspected_blocks,
                           toggled_group)
from .graph_report import GraphReport
from .move_rules import moved_blocks
from .node_item import NodeItem
from .problem_marks import worst_by_inner_block
from .scene_drop import BlockDropping
from .scene_wiring import WireDragging, _WireDrag
from .scene_wires import WirePlacement
from .session import EditorSession
from .summaries import port_shapes, wire_label
from .wire_item import WireItem

GRID = 20.0


class GraphScene(BlockDropping, WireDragging, WirePlacement, QGraphicsScene):
    path_changed = Signal(tuple)
    inspected_changed = Signal()  # the block the inspector shows changed (an inner block)
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
        # a block inside an open frame, clicked: (group id, its id); the group is selected
        self.inner_selected: tuple[str, str] | None = None
        self.selectionChanged.connect(self._drop_stale_inner)
        self._switched_off: tuple[str, ...] = ()  # Explain's ablation switches (set_ablated)
        self._drag: _WireDrag | None = None
        self._toast: _Toast | None = None
        self._toast_timer = QTimer(self, singleShot=True, interval=4000)  # dies with the scene
        self._toast_timer.timeout.connect(self._drop_toast)
        self.setSceneRect(-40000, -40000, 80000, 80000)  # room to pan anywhere
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

    # ------------------------------------------------------------------ building
    def rebuild(self) -> None:
        self.clear_inner()
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
        item = NodeItem(node, self.graph,
                        is_open=group_is_open(self.closed_groups, self._path, node.id))
        item.setPos(to_scene(node.pos))
        self.addItem(item)
        self.node_items[node.id] = item
        return item


    def toggle_group(self, node_id: str) -> None:
        """Open a group's frame to show its inside, or close it to a box (a view setting:
        the document does not change, and the layout keeps the room of the open frame)."""
        item = self.node_items.get(node_id)
        if item is None or not item.node.is_group:
            return
        self.closed_groups = toggled_group(self.closed_groups, self._path, node_id)
        item.set_open(group_is_open(self.closed_groups, self._path, node_id), self.graph)
        self._obstacles.pop(node_id, None)
        self.apply_report(self.session.report)
        self._place_all_wires()


    # ------------------------------------------------------------------ document events
    def _on_event(self, ev: GraphEvent) -> None:
        reach = event_reach(ev.path, self._path)
        if reach is None:
            return
        where, gid = reach
        if where == "here":
            self._apply_event(ev)
        elif where == "inside":
            # an edit inside one of our groups: its ports and summary may have changed
            if gid in self.node_items:
                self.node_items[gid].refresh(self.graph)
                self._obstacles.pop(gid, None)
                self._place_all_wires()  # an open frame may have grown into other wires
        else:
            # an ancestor changed: our graph may have been swapped out or removed
            path = deepest_path(self.session.document, self._path)
            if ev.kind is GraphChange.GRAPH_REPLACED or path != self._path:
                changed = path != self._path
                self._path = path
                self.rebuild()
                if changed:
                    self.path_changed.emit(path)

    def _apply_event(self, ev: GraphEvent) -> None:
        self.REDRAWS[GraphChange(ev.kind)](self, ev)

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

    # how an event at our own level redraws: one handler per kind of change
    REDRAWS: dict[GraphChange, Callable[["GraphScene", GraphEvent], None]] = {
        GraphChange.GRAPH_REPLACED: _on_graph_replaced,
        GraphChange.NODE_ADDED: _on_node_added,
        GraphChange.NODE_REMOVED: _on_node_removed,
        GraphChange.EDGE_ADDED: _on_edge_added,
        GraphChange.EDGE_REMOVED: _on_edge_removed,
        GraphChange.PARAM_CHANGED: _on_node_changed,
        GraphChange.TITLE_CHANGED: _on_node_changed,
        GraphChange.NODE_MOVED: _on_node_moved,
    }

    # ------------------------------------------------------------------ feedback
    def apply_report(self, report: GraphReport) -> None:
        """Draw diagnostics on nodes, shapes on wires, parameter counts in node footers."""
        here = report.diagnostics_at(self._path)
        for nid, item in self.node_items.items():
            mine = [d for d in here if d.node_id == nid]
            inner = report.diagnostics_below(self._path, nid) if item.node.is_group else []
            item.set_feedback(mine, inner, report.node_params(self._path, nid),
                              worst_by_inner_block(inner, self._path + (nid,)), report.errors)
        for edge, wire in self.wire_items.items():
            wire.set_label(wire_label(report.shapes, edge, self._path))
        for nid, item in self.node_items.items():
            shapes = port_shapes(report.shapes, self._path, nid, item.inputs, item.outputs)
            for name, port in item.inputs.items():
                port.set_shape(shapes[(True, name)])
            for name, port in item.outputs.items():
                port.set_shape(shapes[(False, name)])
        self._place_labels()


    def set_ablated(self, switched_off: Iterable[str]) -> None:
        """Draw the blocks that Explain switches off as ablated. ``switched_off`` are the
        model's names ("layers.0.attn", "layers.1.attn:head=0"; a group's copies are
        "group.N."); a block inside a group shows every copy's switches. Kept across
        rebuilds and moves between levels; empty restores every block."""
        self._switched_off = tuple(switched_off)
        marks = marks_at(self._switched_off, self._path)
        for nid, item in self.node_items.items():
            mine = marks.get(nid, Marks())
            if mine.own or mine.inner or item.switched_off or item.inner_switched_off:
                item.set_ablated(mine.own, mine.inner)

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
        self.message.emit(refusal or command.text)  # never an earlier state's sentence
        if refusal is None:
            return True
        if near is not None:
            self.show_note(refusal, near)
        return False


    def delete_selected(self) -> bool:
        if self.inner_selected is not None:  # the block clicked inside a frame, not the layer
            group, inner = self.inner_selected
            return self.run(RemoveNodes(self._path + (group,), [inner]))
        wires = [w.edge for w in self.selectedItems() if isinstance(w, WireItem) and w.edge is not None]
        command, line = deletion(self.graph, self._path, self.selected_node_ids(), wires)
        if line:
            self.message.emit(line)
        return command is not None and self.run(command)

    # ------------------------------------------------------------------ selection
    def selected_node_ids(self) -> list[str]:
        return [i.node.id for i in self.selectedItems() if isinstance(i, NodeItem)]

    def inspected(self) -> tuple[tuple[str, ...], list[str]]:
        """What the inspector shows: (the level's path, the selected ids there); a block
        clicked inside an open frame is shown at the group's inside (editor_state.inspected_blocks)."""
        return inspected_blocks(self._path, self.selected_node_ids(), self.inner_selected)

    def select_inner(self, group: str, inner: str) -> None:
        """Select block ``inner`` inside the open frame of ``group`` (one click on it): the
        group is the selected item (it moves as one), the inspector shows the inner block."""
        if self.selected_node_ids() != [group]:
            self.select_nodes([group])
        self.inner_selected = (group, inner)
        self.node_items[group].set_inner_selected(inner)
        self.inspected_changed.emit()

    def clear_inner(self) -> None:
        if self.inner_selected is None:
            return
        item = self.node_items.get(self.inner_selected[0])
        self.inner_selected = None
        if item is not None:
            item.set_inner_selected(None)
        self.inspected_changed.emit()

    def _drop_stale_inner(self) -> None:
        if (self.inner_selected is not None
                and self.selected_node_ids() != [self.inner_selected[0]]):
            self.clear_inner()

    def select_nodes(self, ids) -> None:
        ids = set(ids)
        self.clearSelection()
        for nid in ids:
            if nid in self.node_items:
                self.node_items[nid].setSelected(True)

    # ------------------------------------------------------------------ moving
    def snapped(self, point: QPointF, force: bool = False) -> QPointF:
        """``point`` on the grid while the user drags (positions from files are kept exact)."""
        if not snaps(self.snap_to_grid, self.mouseGrabberItem() is not None, force):
            return point
        return QPointF(*on_grid(point.x(), point.y(), GRID))

    def node_item_moved(self, item: NodeItem) -> None:
        self._obstacles.pop(item.node.id, None)
        self._place_wires_of(item.node.id)

    def commit_moves(self) -> bool:
        """Turn dragged item positions into one Move command (called on mouse release)."""
        graph = self.graph
        drawn = {nid: (item.pos().x(), item.pos().y()) for nid, item in self.node_items.items()}
        placed = {nid: (at.x(), at.y()) for nid in drawn if nid in graph
                  for at in (to_scene(graph.node(nid).pos),)}
        moved = {nid: to_graph(self.node_items[nid].pos()) for nid in moved_blocks(drawn, placed)}
        if not moved:
            return False
        ruled = move_edit(graph, self._path, moved,  # clear of the others: never on top
                          grid=GRID if self.snap_to_grid else None)
        for nid, pos in ruled.edit.positions.items():  # where it lands (snapped on the grid)
            self.node_items[nid].setPos(self.snapped(to_scene(pos), force=True))
        done = self.run(ruled.edit)
        if not done:  # refused: back where they were
            for nid in moved:
                self.node_items[nid].setPos(to_scene(self.graph.node(nid).pos))
        elif ruled.message:
            self.message.emit(ruled.message)
        self._place_all_wires()  # a moved block may now stand in another wire's way
        return done

    def mouseReleaseEvent(self, event):
        super().mouseReleaseEvent(event)
        if self._drag is None:
            self.commit_moves()



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
