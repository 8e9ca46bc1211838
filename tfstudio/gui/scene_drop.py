"""Dropping a block where it is aimed (issue 28): onto a wire whose ports fit it is spliced
in, onto an open layer frame it goes inside the group (the one inside all its copies share),
else at the level shown; a wire let go in empty space adds a block wired to it. A mixin of
:class:`~tfstudio.gui.scene.GraphScene`."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF

from ..graph import AddNode, Edge, Edit, Node, new_node
from ..graph import block_types as bt
from ..graph.edit_rules import splice_in_line_edit
from ..graph.edits import agreed_params
from ..graph.kinds import PRE
from ..graph.insert import connect_new_edit, splice_edit
from ..graph.layout import clear_spot
from ..graph.templates import layer_graph
from .canvas_units import to_graph
from .node_item import HEADER_H, NodeItem
from .scene_wiring import LooseWire
from .wire_item import WireItem


@dataclass(frozen=True)
class DropTarget:
    """Where a new block goes: the level ``path`` (a group's inside when ``group`` is the open
    frame it was aimed at), spliced into ``edge`` of that level when one is set."""

    path: tuple[str, ...]
    edge: Edge | None = None
    group: str | None = None


def _free_spot(graph, node: Node, edge: Edge | None,
               near: str | None = None) -> tuple[float, float]:
    """Where a block added inside a group sits when the group is entered: between the ends
    of the wire it was spliced into, else beside the block ``near`` it was dropped (the small
    block of the frame nearest the drop point), else under the others; clear of every block."""
    if not graph.nodes:
        return (0.0, 0.0)
    if edge is not None and edge.src in graph and edge.dst in graph:
        a, b = graph.node(edge.src).pos, graph.node(edge.dst).pos
        start = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    elif near is not None and near in graph:
        start = graph.node(near).pos
    else:
        start = (min(n.pos[0] for n in graph), max(n.pos[1] for n in graph))
    return clear_spot(graph, node, start)


def _wire_words(edge: Edge) -> str:
    return f"from {edge.src} to {edge.dst}"


class BlockDropping:
    """Where a dropped, searched or double-clicked block lands (``self`` is the scene)."""

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
        node = new_node(graph, block_type, to_graph(corner), **self._agreed(block_type))
        if target.group is not None:  # the frame lays its inside out itself; entered, the
            near = self.node_items[target.group].mini_nearest(  # block sits by where it went
                self.node_items[target.group].mapFromScene(scene_pos))
            node.pos = _free_spot(graph, node, target.edge, near)
        elif target.edge is None:
            node.pos = clear_spot(graph, node, node.pos)  # never on top of another block
        if block_type == "group":
            # a fresh group holds a standard layer, so there is something to enter and edit
            node.subgraph = layer_graph([(bt.ATTENTION, {}), (bt.FEED_FORWARD, {})], PRE)
            node.params["repeat"] = 1
        command: Edit | None = None
        moved = ""
        if target.edge is not None and target.group is None:  # on a wire of the level shown
            ruled = splice_in_line_edit(graph, target.path, node, target.edge)
            if ruled is None:
                node.pos = clear_spot(graph, node, node.pos)
            else:
                command, moved = ruled.edit, ruled.message
        elif target.edge is not None:
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
            copies = group.typed_params().repeat or 1
            where = f" inside {group.label}" + (f" (all {copies} copies share it)"
                                                if copies > 1 else "")
        self.message.emit(f"{'Inserted' if spliced else 'Added'} {node.label}"
                          f"{' into the wire ' + _wire_words(target.edge) if spliced else ''}"
                          f"{where}{'; ' + moved if moved else ''}")
        return node.id

    def _agreed(self, block_type: str) -> dict:
        """What the model's blocks of this type share (a group starts as a standard layer)."""
        return {} if block_type == "group" else agreed_params(self.session.document.graph(),
                                                               block_type)

    def add_connected(self, block_type: str, loose: LooseWire) -> str | None:
        """Add a block where ``loose`` was let go, wired to its port (one undo step)."""
        if loose.path != self._path:
            return None
        corner = self.snapped(loose.scene_pos - QPointF(0 if loose.from_output else 190,
                                                        HEADER_H + 14), force=True)
        node = new_node(self.graph, block_type, to_graph(corner), **self._agreed(block_type))
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
