"""Drawing wires by hand: a drag from a port (an input that has a wire hands that wire
over), ports that fit lit while dragging, a drop on a port connects (into an occupied input:
said, and one undo step), a drop in empty space hands a loose wire to the search; what fits
and which edit each drop makes are gui.wire_rules'. A mixin of
:class:`~tfstudio.gui.scene.GraphScene`."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF

from ..graph import Disconnect, Edge
from .node_item import NodeItem, PortItem
from .wire_item import WireItem
from .wire_rules import both_ends_line, fits, wiring

PORT_PICK_RADIUS = 16.0


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


class WireDragging:
    """A wire drawn by hand (``self`` is the scene)."""

    def connect_ports(self, src: str, src_port: str, dst: str, dst_port: str,
                      detached: Edge | None = None, near: QPointF | None = None) -> bool:
        """Wire ``src.src_port`` to ``dst.dst_port`` (what releasing a dragged wire does)."""
        edge = Edge(src, src_port, dst, dst_port)
        ruled = wiring(self.graph, self._path, edge, detached)
        if ruled is None:  # the picked-up wire put back where it was
            return True
        if near is None and dst in self.node_items:
            port = self.node_items[dst].inputs.get(dst_port)
            near = port.scenePos() if port else None
        done = self.run(ruled.edit, near)
        if done and (text := ruled.done_line(edge)):
            self.message.emit(text)
            if near is not None:
                self.show_note(text, near, error=False)
        return done

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
                p.highlight = "ok" if fits(origin, p) else "no"
                p.update()
        origin.highlight = None
        self.drag_wire(scene_pos if scene_pos is not None else port.scenePos())

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
            text = both_ends_line(target.is_input)
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
