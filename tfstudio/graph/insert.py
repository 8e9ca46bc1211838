"""Putting a new block where the user aims: spliced into a wire, or wired to a port that a
dragged wire was let go from. Each gesture is one undoable edit (a Macro), refused whole when
the ports do not fit. No Qt: the canvas asks these functions which edit a gesture means."""
from __future__ import annotations

from typing import Iterable

from .edits import AddNode, Connect, Disconnect, Edit, Macro
from .model import Edge, Graph, GraphError, Node
from .schema import BlockSpec, PortSpec, kind_accepts

Path = tuple[str, ...]


def _ports(node: Node) -> tuple[list[PortSpec], list[PortSpec]]:
    """A new block's inputs and outputs (a group's come from its inside)."""
    alone = Graph()
    alone.nodes[node.id] = node  # not add_node: only its ports are asked, nothing is checked
    try:
        return alone.input_ports(node.id), alone.output_ports(node.id)
    except GraphError:
        return [], []


def first_taking(ports: Iterable[PortSpec], kind: str) -> PortSpec | None:
    """The first input among ``ports`` that accepts a wire carrying ``kind``."""
    return next((p for p in ports if kind_accepts(p.kind, kind)), None)


def first_giving(ports: Iterable[PortSpec], input_kind: str) -> PortSpec | None:
    """The first output among ``ports`` whose wire an input of ``input_kind`` accepts."""
    return next((p for p in ports if kind_accepts(input_kind, p.kind)), None)


def splice_edit(graph: Graph, path: Path, node: Node, edge: Edge) -> Edit | None:
    """Add ``node`` into the wire ``edge`` of ``graph`` (the graph at ``path``): the wire's
    source feeds the node's first fitting input, the node's first fitting output feeds the
    wire's input. None when the ports do not fit (the caller then adds the block alone)."""
    try:
        out_kind = graph.output_port(edge.src, edge.src_port).kind
        in_kind = graph.input_port(edge.dst, edge.dst_port).kind
    except GraphError:
        return None
    ins, outs = _ports(node)
    take, give = first_taking(ins, out_kind), first_giving(outs, in_kind)
    if take is None or give is None:
        return None
    return Macro([AddNode(path, node), Disconnect(path, edge),
                  Connect(path, Edge(edge.src, edge.src_port, node.id, take.name)),
                  Connect(path, Edge(node.id, give.name, edge.dst, edge.dst_port))],
                 text=f"Insert {node.label} into a wire")


def connect_new_edit(path: Path, node: Node, port: tuple[str, str], kind: str,
                     from_output: bool) -> Edit | None:
    """Add ``node`` wired to ``port`` (node id, port name) of the graph at ``path``, which
    carries ``kind``: from that output into the node's first fitting input
    (``from_output``), or from the node's first fitting output into that input. None when
    no port of the node fits."""
    ins, outs = _ports(node)
    if from_output:
        take = first_taking(ins, kind)
        if take is None:
            return None
        edge = Edge(port[0], port[1], node.id, take.name)
    else:
        give = first_giving(outs, kind)
        if give is None:
            return None
        edge = Edge(node.id, give.name, port[0], port[1])
    return Macro([AddNode(path, node), Connect(path, edge, replace=False)],
                 text=f"Add {node.label} and connect it")


def fits_port(spec: BlockSpec, kind: str, from_output: bool) -> bool:
    """Whether a block of ``spec`` (with its default parameters) can take a wire carrying
    ``kind`` (``from_output``) or give one that an input of ``kind`` takes: the filter of
    the search that a wire let go in empty space opens."""
    node = Node("probe", spec.type, {}, (0.0, 0.0))
    ins, outs = _ports(node)
    return (first_taking(ins, kind) if from_output else first_giving(outs, kind)) is not None
