"""Placing the wires of the level shown: each routed round the blocks in its way
(graph.layout.wire_route), its runs and legs kept off the wires placed before it, its shape
label off the others' labels. A mixin of :class:`~tfstudio.gui.scene.GraphScene`."""
from __future__ import annotations

from ..graph import Edge
from ..graph.layout import ABOVE, place_labels, route_lanes, wire_route
from ..graph.layout import HEADER_H
from .block_drawing import PORT_R
from .wire_item import WireItem


class WirePlacement:
    """Where each wire runs (``self`` is the scene)."""

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
        ends_at = (start.x(), start.y()), (end.x(), end.y())
        route = wire_route(*ends_at, others, ends=ends, lanes=lanes)
        self._lanes[e] = route_lanes(route, *ends_at)  # later wires keep their runs off
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

    def _place_labels(self) -> None:
        """Each wire's label where graph.layout.place_labels puts it (the function the
        property test checks through draw_level): off the other labels and off every block."""
        labelled = {w.edge: w for w in self.wire_items.values() if w.label}
        sizes = {}
        for edge, wire in labelled.items():
            box = wire.label_rect(0.5, ABOVE)
            sizes[edge] = (box.width(), box.height())
        blocks = []
        for item in self.node_items.values():
            r = item.mapRectToScene(item.body_rect())
            blocks.append((r.x(), r.y(), r.width(), r.height()))
        placed = place_labels({e: w.points() for e, w in labelled.items()}, sizes, blocks)
        for edge, (at, side, _) in placed.items():
            labelled[edge].set_label_at(at, side)
