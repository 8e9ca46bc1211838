"""Copy, paste and duplicate: a selection travels as a graph file (JSON), so it keeps the wires
between the copied blocks (and a group keeps its whole inside); a paste is one undoable step."""
from __future__ import annotations

import copy
import re

from ..graph import (GROUP_INPUT, GROUP_OUTPUT, AddNode, Connect, Graph, GraphError,
                     GraphFileError, Macro, dumps, loads)
from ..graph.layout import room_for
from ..graph.model import Edge


def fragment(graph: Graph, node_ids) -> Graph:
    """The selected nodes and the wires among them (wires to unselected blocks are left out)."""
    ids = [n for n in graph.nodes if n in set(node_ids)
           and graph.nodes[n].type not in (GROUP_INPUT, GROUP_OUTPUT)]
    if not ids:
        raise GraphError("select one or more blocks to copy")
    out = Graph()
    for nid in ids:
        out.add_node(copy.deepcopy(graph.nodes[nid]))
    for e in graph.edges:
        if e.src in out.nodes and e.dst in out.nodes:
            out.add_edge(e)
    return out


def to_text(graph: Graph, node_ids) -> str:
    return dumps(fragment(graph, node_ids))


def looks_like_graph(text: str) -> bool:
    """Cheap check for enabling Paste: graph JSON starts with an object holding a version."""
    head = text.lstrip()[:200]
    return head.startswith("{") and "format_version" in head


def from_text(text: str) -> Graph:
    """Parse clipboard text; anything that is not a graph fragment gives a GraphFileError."""
    return loads(text, "clipboard")


def pasted_piece(text: str) -> tuple[Graph | None, str]:
    """What Paste makes of the clipboard's ``text``: the fragment to paste and "", or None
    and the line that says why there is nothing to paste."""
    try:
        return from_text(text), ""
    except GraphFileError as exc:
        return None, f"The clipboard holds no blocks to paste ({exc})"


def offset_to(piece: Graph, at: tuple[float, float]) -> tuple[float, float]:
    """The shift that puts ``piece``'s top-left block corner at ``at`` (graph units): a paste
    lands where the cursor is."""
    if not piece.nodes:
        return 0.0, 0.0
    return (at[0] - min(n.pos[0] for n in piece), at[1] - min(n.pos[1] for n in piece))


def paste_command(target: Graph, piece: Graph, path: tuple[str, ...],
                  offset: tuple[float, float]) -> tuple[Macro, list[str]]:
    """One command adding ``piece`` to ``target`` shifted by ``offset``, with fresh ids where
    they clash; returns it and the new ids (to select them). The piece goes at ``offset`` or,
    where it would cover blocks already there, just below them."""
    offset = room_for(target, piece, offset)
    taken = set(target.nodes)
    rename: dict[str, str] = {}
    for nid in piece.nodes:
        new = nid
        if new in taken:
            stem = re.sub(r"\d+$", "", nid) or "node"
            i = 2
            while f"{stem}{i}" in taken:
                i += 1
            new = f"{stem}{i}"
        taken.add(new)
        rename[nid] = new
    commands = []
    for nid, node in piece.nodes.items():
        clone = copy.deepcopy(node)
        clone.id = rename[nid]
        clone.pos = (node.pos[0] + offset[0], node.pos[1] + offset[1])
        commands.append(AddNode(path, clone))
    for e in piece.edges:
        commands.append(Connect(path, Edge(rename[e.src], e.src_port, rename[e.dst], e.dst_port),
                                replace=False))
    count = len(piece.nodes)
    return Macro(commands, text=f"Paste {count} block{'s' * (count != 1)}"), list(rename.values())
