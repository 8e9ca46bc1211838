"""Dropping a block where it is aimed (issue 28): onto a wire whose ports fit it is spliced
in, onto an open layer frame it goes inside the group (the one inside all its copies share),
else at the level shown; a wire let go in empty space adds a block wired to it. What is
under the pointer is found here; the rules (what a new block starts as, whether it splices,
where it sits inside a group, what the status bar says) are gui.drop_rules'. A mixin of
:class:`~tfstudio.gui.scene.GraphScene`."""
from __future__ import annotations

from PySide6.QtCore import QPointF

from ..graph import Edge
from ..graph.insert import connect_new_edit
from .canvas_units import to_graph
from .drop_rules import DropTarget, block_addition, new_block, splices
from ..graph.layout import HEADER_H
from .node_item import NodeItem
from .scene_wiring import LooseWire
from .wire_item import WireItem
from .wire_rules import no_port_line


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
        return splices(self.session.document.graph(self._path + below), block_type, edge)

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
        corner = self.snapped(scene_pos - QPointF(90, HEADER_H / 2), force=True)
        near = None
        if target.group is not None:  # the small block of the frame nearest the drop
            frame = self.node_items[target.group]
            near = frame.mini_nearest(frame.mapFromScene(scene_pos))
        added = block_addition(self.session.document.graph(), target, block_type,
                               to_graph(corner), near)
        if not self.run(added.edit, scene_pos):
            return None
        if target.group is None:  # the new block is what the inspector shows next
            self.select_nodes([added.node.id])
        elif target.group in self.node_items:
            self.select_inner(target.group, added.node.id)
        self.message.emit(added.line)
        return added.node.id

    def add_connected(self, block_type: str, loose: LooseWire) -> str | None:
        """Add a block where ``loose`` was let go, wired to its port (one undo step)."""
        if loose.path != self._path:
            return None
        corner = self.snapped(loose.scene_pos - QPointF(0 if loose.from_output else 190,
                                                        HEADER_H + 14), force=True)
        node = new_block(self.session.document.graph(), self.graph, block_type, to_graph(corner))
        command = connect_new_edit(self._path, node, loose.port, loose.kind, loose.from_output)
        if command is None:
            text = no_port_line(node.label, loose.kind)
            self.message.emit(text)
            self.show_note(text, loose.scene_pos)
            return None
        if not self.run(command, loose.scene_pos):
            return None
        self.select_nodes([node.id])
        return node.id
