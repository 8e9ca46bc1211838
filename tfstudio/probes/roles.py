"""Which token stream a block reads: "tokens", or "source" / "target" in an encoder-decoder.

An attention heatmap labels its rows with the tokens of the stream its queries come from and
its columns with those of its keys (cross-attention reads the encoder's "source" tokens). The
answer follows the wires back to a Token input node: through a block's first input, out of a
group through its inputs node, into a group through its outputs node. Pure graph code.
"""
from __future__ import annotations

from ..graph import Graph
from ..graph.model import GROUP_INPUT, GROUP_OUTPUT, graph_at

TOKEN_INPUT = "token_input"
_MAX_HOPS = 10_000  # a valid graph is acyclic; this only guards against a malformed one


def split_key(key: tuple) -> tuple[tuple[str, ...], str]:
    """A block key such as ("layers", 0, "attn") -> (group path ("layers",), node id "attn")."""
    return tuple(str(k) for k in key[:-1:2]), str(key[-1])


def traced_role(root: Graph, path: tuple[str, ...], node_id: str, port: str) -> str | None:
    """The role of the Token input feeding ``port`` of ``node_id`` at group ``path``."""
    path = tuple(path)
    for _ in range(_MAX_HOPS):
        graph = graph_at(root, path)
        edge = graph.edge_into(node_id, port)
        if edge is None:
            return None
        src = graph.node(edge.src)
        if src.type == TOKEN_INPUT:
            return str(src.param("role"))
        if src.type == GROUP_INPUT:  # leave the group: continue from the group node's own input
            if not path:
                return None
            path, node_id, port = path[:-1], path[-1], edge.src_port
        elif src.is_group:           # enter the group at the output this wire leaves from
            inner = src.subgraph
            outs = inner.nodes_of_type(GROUP_OUTPUT) if inner is not None else []
            if not outs:
                return None
            path, node_id, port = path + (src.id,), outs[0].id, edge.src_port
        else:                        # an ordinary block passes its first input's stream on
            inputs = graph.input_ports(src.id)
            if not inputs:
                return None
            node_id, port = src.id, inputs[0].name
    return None


def stream_roles(root: Graph, key: tuple, cross: bool, default: str) -> tuple[str, str]:
    """(query role, key role) of the attention block at ``key``; ``default`` when untraceable."""
    path, node_id = split_key(key)
    try:
        query = traced_role(root, path, node_id, "x") or default
        keys = (traced_role(root, path, node_id, "memory") or "source") if cross else query
    except (KeyError, ValueError):  # GraphError is a ValueError: a path the graph lacks
        return default, default
    return query, keys
