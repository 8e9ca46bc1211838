"""Following the main stream of a graph: the chain of first inputs from a head back to its tokens.

Validation (is this decoder causal? which embedding does this head tie to?) and the compiler
both need to know which blocks a head's logits are computed *through*, as opposed to blocks
that only feed an encoder memory. These helpers answer that from the wiring alone.
"""
from __future__ import annotations

from .model import GROUP, GROUP_OUTPUT, Edge, Graph, GraphError
from .schema import MEMORY

EMBEDDING_TYPE = "token_embedding"


def main_input_edge(graph: Graph, node_id: str) -> Edge | None:
    """The wire into ``node_id``'s first input port (its main stream), if any."""
    try:
        ports = graph.input_ports(node_id)
    except GraphError:
        return None
    return graph.edge_into(node_id, ports[0].name) if ports else None


def main_embedding(graph: Graph, node_id: str) -> str | None:
    """The token embedding upstream of ``node_id`` in ``graph`` that a tied head shares its
    matrix with, or None when no embedding is upstream.

    Searches depth first, first inputs first (through groups, whose first input is their main
    stream), so an encoder-decoder's head finds the target embedding before the source one
    that only reaches it as memory. The compiler ties by the same rule."""
    stack, seen = [node_id], set()
    while stack:
        nid = stack.pop()
        if nid in seen or nid not in graph.nodes:
            continue
        seen.add(nid)
        if nid != node_id and graph.nodes[nid].type == EMBEDDING_TYPE:
            return nid
        try:
            ports = graph.input_ports(nid)
        except GraphError:
            continue
        sources = [e.src for p in ports if (e := graph.edge_into(nid, p.name)) is not None]
        stack.extend(reversed(sources))
    return None


def stream_ancestors(graph: Graph, node_id: str) -> set[str]:
    """Nodes upstream of ``node_id`` along wires that do not enter a memory input.

    For a decoder's head this is the decoder (its embedding, its layers) without the encoder
    that only reaches it as cross-attention memory."""
    found: set[str] = set()
    todo = [node_id]
    while todo:
        nid = todo.pop()
        try:
            kinds = {p.name: p.kind for p in graph.input_ports(nid)}
        except GraphError:
            kinds = {}
        for e in graph.in_edges(nid):
            if kinds.get(e.dst_port) == MEMORY or e.src in found or e.src not in graph.nodes:
                continue
            found.add(e.src)
            todo.append(e.src)
    return found


def stream_nodes_inside(graph: Graph, path: tuple[str, ...] = ()):
    """``(path, node)`` for every node that feeds a group's output along its stream, at every
    depth, for the groups in ``graph`` (called with a group's inside and its path)."""
    outputs = graph.nodes_of_type(GROUP_OUTPUT)
    ids: set[str] = set()
    for out in outputs:
        ids |= stream_ancestors(graph, out.id)
    for nid in graph.nodes:
        if nid in ids:
            node = graph.nodes[nid]
            yield path, node
            if node.type == GROUP and node.subgraph is not None:
                yield from stream_nodes_inside(node.subgraph, path + (nid,))


def stream_blocks(graph: Graph, node_id: str):
    """``(path, node)`` for every block ``node_id``'s main stream passes through, entering
    groups: the self-attention a head's logits depend on, but not an encoder's."""
    upstream = stream_ancestors(graph, node_id)
    for nid in graph.nodes:
        if nid in upstream:
            node = graph.nodes[nid]
            yield (), node
            if node.type == GROUP and node.subgraph is not None:
                yield from stream_nodes_inside(node.subgraph, (nid,))
