"""Wiring by hand, decided without Qt: which ports a wire dragged from a port may end on
(lit while dragging), the edit a drop on a port makes (a wire into an occupied input
replaces it; a wire picked up from its input moves; one undo step either way), and what the
canvas says about it. gui/scene_wiring.py follows the pointer and asks these."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..graph import Edge, Edit, Graph
from ..graph.edit_rules import connect_edit
from ..graph.schema import kind_accepts


class PortEnd(Protocol):
    """A port as wiring sees it (gui.node_item.PortItem is one; so is :class:`Port`)."""

    node_id: str
    name: str
    kind: str
    is_input: bool


@dataclass(frozen=True)
class Port:
    node_id: str
    name: str
    kind: str
    is_input: bool


def port(graph: Graph, node_id: str, name: str, is_input: bool) -> Port:
    """Port ``name`` of block ``node_id``, with the kind the graph gives it."""
    spec = (graph.input_port if is_input else graph.output_port)(node_id, name)
    return Port(node_id, name, spec.kind, is_input)


def fits(origin: PortEnd, other: PortEnd) -> bool:
    """Whether a wire dragged from ``origin`` may end on ``other``: the other side (output
    to input) of another block, an input that takes what the output gives."""
    if other.is_input == origin.is_input or other.node_id == origin.node_id:
        return False
    out, inp = (other, origin) if origin.is_input else (origin, other)
    return kind_accepts(inp.kind, out.kind)


@dataclass(frozen=True)
class Wiring:
    """The edit that makes ``edge``, the wire it replaces in an occupied input, and what the
    edit says it did besides (``moved``: a block moved to give the wire's label room)."""

    edit: Edit
    replaced: Edge | None = None
    moved: str = ""

    def done_line(self, edge: Edge) -> str:
        """What the canvas says once the wire is made ("" when it is only the wire)."""
        lines = [replaced_line(self.replaced, edge)] if self.replaced is not None else []
        return "; ".join([*lines, *([self.moved] if self.moved else [])])


def wiring(graph: Graph, path: tuple[str, ...], edge: Edge,
           detached: Edge | None = None) -> Wiring | None:
    """The one undo step that wires ``edge`` at the level ``path`` (``graph``): moving the
    wire ``detached`` (picked up from its input) when one is, else a new wire, replacing the
    one in the input; None when the picked-up wire is put back where it was. Where the wire's
    shape label would find no room between its blocks, the block it enters moves clear in the
    same step (``graph.edit_rules.connect_edit``)."""
    if detached == edge:
        return None
    if detached is not None:
        ruled = connect_edit(graph, path, edge, "Reconnect", detached)
        return Wiring(ruled.edit, moved=ruled.message)
    replaced = graph.edge_into(edge.dst, edge.dst_port) if edge.dst in graph else None
    ruled = connect_edit(graph, path, edge, "Replace a wire" if replaced else "Connect")
    return Wiring(ruled.edit, replaced, ruled.message)


def replaced_line(replaced: Edge, edge: Edge) -> str:
    return (f"Replaced the wire from {replaced.src} into {edge.dst}'s input "
            f"'{edge.dst_port}' (Undo puts it back)")


def both_ends_line(inputs: bool) -> str:
    """Why a wire dropped on a port of its own side is refused."""
    both = "inputs" if inputs else "outputs"
    return (f"Both ends are {both}: a wire runs from an output (right side of a block) "
            "to an input (left side of another)")


def loose_wire_prompt(kind: str, from_output: bool) -> str:
    """The search's prompt for a wire let go in empty space, carrying ``kind``."""
    return f"Add a block that {'takes' if from_output else 'gives'} {kind}: type to search"


def no_port_line(label: str, kind: str) -> str:
    return f"{label} has no port that fits a wire carrying {kind}"
