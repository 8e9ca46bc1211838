"""Where a dropped block lands and what the canvas says, decided without Qt (issue 28): a
new block starts like the model's blocks of its type (a layer group as a standard layer),
a block whose ports fit the wire it was dropped on is spliced in, one dropped inside a
group sits by where it was aimed, and the status bar names where it went.
gui/scene_drop.py finds what is under the pointer and asks these."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph import GROUP, AddNode, Edge, Edit, Graph, Node, graph_at, new_node
from ..graph import block_types as bt
from ..graph.edit_rules import splice_in_line_edit
from ..graph.edits import agreed_params
from ..graph.insert import splice_edit
from ..graph.kinds import PRE
from ..graph.layout import clear_spot
from ..graph.templates import layer_graph


@dataclass(frozen=True)
class DropTarget:
    """Where a new block goes: the level ``path`` (a group's inside when ``group`` is the open
    frame it was aimed at), spliced into ``edge`` of that level when one is set."""

    path: tuple[str, ...]
    edge: Edge | None = None
    group: str | None = None


def new_block(root: Graph, graph: Graph, block_type: str, pos: tuple[float, float]) -> Node:
    """A block of ``block_type`` for ``graph`` (a level of ``root``) at ``pos``, with what the
    model's blocks of its type share (a Norm added to LLaMA is an RMSNorm without bias; a
    layer group starts as the catalogue's, see :func:`fill_new_group`)."""
    agreed = {} if block_type == GROUP else agreed_params(root, block_type)
    return new_node(graph, block_type, pos, **agreed)


def fill_new_group(node: Node) -> None:
    """A fresh layer group holds a standard layer, once, so there is something to enter and
    edit (done once the group has its place: its closed size is what was placed)."""
    if node.type == GROUP:
        node.subgraph = layer_graph([(bt.ATTENTION, {}), (bt.FEED_FORWARD, {})], PRE)
        node.params["repeat"] = 1


def splices(graph: Graph, block_type: str, edge: Edge) -> bool:
    """Whether a block of ``block_type`` dropped on the wire ``edge`` of ``graph`` goes into
    it (its ports fit what the wire carries); else it is added beside it."""
    return splice_edit(graph, (), Node("probe_block", block_type), edge) is not None


def nearest_block(centres: list[tuple[str, tuple[float, float]]],
                  point: tuple[float, float]) -> str | None:
    """The id of the block whose centre (``centres``: id and centre, in drawing order) is
    nearest ``point``, the first of equals; None without blocks (an empty frame)."""
    def distance(entry) -> float:
        (x, y) = entry[1]
        return (x - point[0]) ** 2 + (y - point[1]) ** 2
    return min(centres, key=distance)[0] if centres else None


def spot_inside(graph: Graph, node: Node, edge: Edge | None,
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


def added_line(label: str, spliced: Edge | None = None, group: Node | None = None,
               moved: str = "") -> str:
    """The status bar after a drop: the block, the wire it went into, the group it went
    inside (which all its copies share), and what moved to make room."""
    line = f"Inserted {label} into the wire from {spliced.src} to {spliced.dst}" if spliced \
        else f"Added {label}"
    if group is not None:
        copies = group.typed_params().repeat or 1
        line += f" inside {group.label}" + (f" (all {copies} copies share it)"
                                            if copies > 1 else "")
    return line + (f"; {moved}" if moved else "")


@dataclass(frozen=True)
class Addition:
    """A block being added: the node, the one undoable edit that adds it (spliced into a
    wire, or an AddNode), and the status bar's line once it is done."""

    node: Node
    edit: Edit
    line: str


def block_addition(root: Graph, target: DropTarget, block_type: str,
                   corner: tuple[float, float], near: str | None = None) -> Addition:
    """Adding a block of ``block_type`` over ``target`` with its top-left at ``corner``
    (graph units): inside an open group it sits by the small block ``near`` the drop (or in
    the wire it goes into), else clear of every block; a wire whose ports fit takes it in
    line, else it is added beside; a new layer group holds a standard layer."""
    graph = graph_at(root, target.path)
    node = new_block(root, graph, block_type, corner)
    if target.group is not None:  # the frame lays its inside out itself; entered, the
        node.pos = spot_inside(graph, node, target.edge, near)  # block sits by where it went
    elif target.edge is None:
        node.pos = clear_spot(graph, node, node.pos)  # never on top of another block
    fill_new_group(node)
    edit: Edit | None = None
    moved = ""
    if target.edge is not None:  # on a wire, of this level or inside an open frame
        ruled = splice_in_line_edit(graph, target.path, node, target.edge)
        if ruled is not None:
            edit, moved = ruled.edit, ruled.message
        elif target.group is None:
            node.pos = clear_spot(graph, node, node.pos)
    spliced = target.edge if edit is not None else None
    if edit is None:
        edit = AddNode(target.path, node, text=f"Add {node.label}")
    group = (graph_at(root, target.path[:-1]).node(target.group) if target.group is not None
             else None)
    return Addition(node, edit, added_line(node.label, spliced, group, moved))
