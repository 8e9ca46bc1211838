"""Grouping: a selection of blocks into a group node (its boundary wires becoming the group's
ports), and a group back into its blocks, one copy per repeat, wired as the group was; both as
undoable edits."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Sequence

from .edits import Document, Edit, Path, ReplaceGraph
from .model import (GROUP, GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, GraphError, Node,
                    format_port_list, group_boundary)

PortKey = tuple[str, str]  # (node id, port name)


@dataclass
class _Boundary:
    """How a selection meets the rest of its graph: the wires that cross into and out of it
    and the group port each distinct outside source (inside producer) gets."""

    incoming: list[Edge]
    outgoing: list[Edge]
    in_names: dict[PortKey, tuple[str, str]]   # outside source -> (group input, kind)
    out_names: dict[PortKey, tuple[str, str]]  # inside producer -> (group output, kind)


def group_nodes(graph: Graph, node_ids: Sequence[str], group_id: str | None = None,
                repeat: int = 1, title: str = "") -> Graph:
    """Return a copy of ``graph`` with ``node_ids`` moved into a new group node.

    Wires entering the selection become the group's inputs (one per distinct source, the
    main stream first), wires leaving it become its outputs."""
    ids = _groupable(graph, node_ids)
    out = graph.clone()
    boundary = _boundary(out, ids)
    gid = group_id or out.new_id("layer")
    sub = _group_inside(out, ids, boundary)
    for nid in ids:
        del out.nodes[nid]
    inside = set(ids)
    out.edges = [e for e in out.edges if e.src not in inside and e.dst not in inside]
    xs = [n.pos[0] for n in sub if n.id in inside]
    ys = [n.pos[1] for n in sub if n.id in inside]
    out.add_node(Node(gid, GROUP, {"repeat": int(repeat)},
                      (sum(xs) / len(xs), sum(ys) / len(ys)), title, sub))
    _wire_group_outside(out, gid, boundary)
    return out


def _groupable(graph: Graph, node_ids: Sequence[str]) -> list[str]:
    """The selection in node order, refusing an empty one or a group's own boundary blocks."""
    ids = [n for n in graph.nodes if n in set(node_ids)]
    if not ids:
        raise GraphError("select at least one block to group")
    for nid in ids:
        if graph.node(nid).type in (GROUP_INPUT, GROUP_OUTPUT):
            raise GraphError("the group's own input and output blocks cannot be grouped")
    return ids


def _boundary(graph: Graph, ids: list[str]) -> _Boundary:
    inside = set(ids)
    incoming = [e for e in graph.edges if e.dst in inside and e.src not in inside]
    outgoing = [e for e in graph.edges if e.src in inside and e.dst not in inside]
    # one group input per distinct outside source, named after the first port it feeds
    in_names: dict[PortKey, tuple[str, str]] = {}
    for e in sorted(incoming, key=lambda e: (get_kind_rank(graph, e), ids.index(e.dst))):
        key = (e.src, e.src_port)
        if key not in in_names:
            kind = graph.input_port(e.dst, e.dst_port).kind
            in_names[key] = (_unique_name(e.dst_port if in_names else "x",
                                          [n for n, _ in in_names.values()]), kind)
    out_names: dict[PortKey, tuple[str, str]] = {}
    for e in outgoing:
        key = (e.src, e.src_port)
        if key not in out_names:
            kind = graph.output_port(e.src, e.src_port).kind
            out_names[key] = (_unique_name("y", [n for n, _ in out_names.values()]), kind)
    return _Boundary(incoming, outgoing, in_names, out_names)


def _group_inside(graph: Graph, ids: list[str], boundary: _Boundary) -> Graph:
    """The group's sub-graph: the selected nodes, the wires among them, and input and output
    blocks standing for the wires that crossed the selection's edge."""
    inside = set(ids)
    sub = Graph()
    for nid in ids:
        sub.add_node(graph.nodes[nid])
    xs = [graph.nodes[n].pos[0] for n in ids]
    ys = [graph.nodes[n].pos[1] for n in ids]
    in_id = "inputs" if "inputs" not in sub.nodes else sub.new_id("inputs")
    sub.add_node(Node(in_id, GROUP_INPUT, {"ports": format_port_list(boundary.in_names.values())},
                      (min(xs) - 220, min(ys))))
    out_id = "outputs" if "outputs" not in sub.nodes else sub.new_id("outputs")
    sub.add_node(Node(out_id, GROUP_OUTPUT,
                      {"ports": format_port_list(boundary.out_names.values())},
                      (max(xs) + 220, min(ys))))
    for e in graph.edges:
        if e.src in inside and e.dst in inside:
            sub.add_edge(e)
    for e in boundary.incoming:
        sub.add_edge(Edge(in_id, boundary.in_names[(e.src, e.src_port)][0], e.dst, e.dst_port))
    for key, (name, _) in boundary.out_names.items():
        sub.add_edge(Edge(key[0], key[1], out_id, name))
    return sub


def _wire_group_outside(graph: Graph, gid: str, boundary: _Boundary) -> None:
    """Reconnect the outside to the new group's ports (one wire per distinct source)."""
    for e in boundary.incoming:
        edge = Edge(e.src, e.src_port, gid, boundary.in_names[(e.src, e.src_port)][0])
        if edge not in graph.edges:
            graph.add_edge(edge)
    for e in boundary.outgoing:
        graph.add_edge(Edge(gid, boundary.out_names[(e.src, e.src_port)][0], e.dst, e.dst_port))


def get_kind_rank(graph: Graph, e: Edge) -> int:
    """Main-stream (hidden) inputs come before memory inputs, so 'x' is the chained one."""
    kind = graph.input_port(e.dst, e.dst_port).kind
    return 0 if kind == "hidden" else 1


def _unique_name(base: str, taken: list[str]) -> str:
    if base not in taken:
        return base
    i = 2
    while f"{base}{i}" in taken:
        i += 1
    return f"{base}{i}"


@dataclass
class _Unrolling:
    """A group being replaced by copies of its inside, in the graph ``out``."""

    out: Graph
    group: Node
    gin: Node | None
    gout: Node | None
    feeds: dict[str, PortKey]          # group input port -> the outside source it read
    first_in: str | None               # the chained input (copy i's output feeds copy i+1's)
    first_out: str | None
    produced: dict[str, PortKey] = field(default_factory=dict)  # group output -> last copy's


def ungroup_node(graph: Graph, group_id: str) -> Graph:
    """Return a copy of ``graph`` with the group replaced by its contents, repeated as often as
    the group repeats (copy i feeding copy i+1), wired as the group was."""
    out = graph.clone()
    group = out.node(group_id)
    if not group.is_group or group.subgraph is None:
        raise GraphError(f"'{group_id}' is not a group")
    in_ports = [p.name for p in out.input_ports(group_id)]
    out_ports = [p.name for p in out.output_ports(group_id)]
    job = _Unrolling(out, group, group_boundary(group, GROUP_INPUT),
                     group_boundary(group, GROUP_OUTPUT),
                     {e.dst_port: (e.src, e.src_port) for e in out.in_edges(group_id)},
                     in_ports[0] if in_ports else None, out_ports[0] if out_ports else None)
    consumers = out.out_edges(group_id)
    before = list(out.nodes)[: list(out.nodes).index(group_id)]
    del out.nodes[group_id]
    out.edges = [e for e in out.edges if group_id not in (e.src, e.dst)]
    for copy_index in range(int(group.typed_params().repeat)):
        _unroll_copy(job, copy_index)
    for e in consumers:
        if e.src_port in job.produced:
            src = job.produced[e.src_port]
            out.add_edge(Edge(src[0], src[1], e.dst, e.dst_port))
    # the copies take the group's place in the node order (which breaks topological ties)
    old_ids = set(graph.nodes) - {group_id}
    order = before + [n for n in out.nodes if n not in old_ids] + [
        n for n in out.nodes if n in old_ids and n not in before]
    out.nodes = {n: out.nodes[n] for n in order}
    return out


def _unroll_copy(job: _Unrolling, copy_index: int) -> None:
    """Add copy ``copy_index`` of the group's inside and wire it; records what it produces."""
    rename = _add_copy_nodes(job, copy_index)
    sources = dict(job.feeds)
    if copy_index > 0 and job.first_in and job.first_out in job.produced:
        sources[job.first_in] = job.produced[job.first_out]  # copy i's first output feeds i+1
    gin_id = job.gin.id if job.gin is not None else None
    gout_id = job.gout.id if job.gout is not None else None
    produced: dict[str, PortKey] = {}
    for e in job.group.subgraph.edges:
        if e.src == gin_id and e.dst != gout_id:
            if e.src_port in sources and e.dst in rename:
                job.out.add_edge(Edge(*sources[e.src_port], rename[e.dst], e.dst_port))
        elif e.dst == gout_id:
            if e.src in rename:
                produced[e.dst_port] = (rename[e.src], e.src_port)
            elif e.src == gin_id and e.src_port in sources:  # an input passed straight through
                produced[e.dst_port] = sources[e.src_port]
        elif e.src in rename and e.dst in rename:
            job.out.add_edge(Edge(rename[e.src], e.src_port, rename[e.dst], e.dst_port))
    job.produced.update(produced)


def _add_copy_nodes(job: _Unrolling, copy_index: int) -> dict[str, str]:
    """Add one copy of the inner blocks, shifted right per copy; old id -> new id."""
    rename: dict[str, str] = {}
    gx, gy = job.group.pos
    for n in job.group.subgraph.nodes.values():
        if n.type in (GROUP_INPUT, GROUP_OUTPUT):
            continue
        keep = copy_index == 0 and n.id not in job.out.nodes
        new_id = n.id if keep else job.out.new_id(
            f"{n.id}_" if not n.id[-1].isdigit() else f"{n.id}_r")
        rename[n.id] = new_id
        clone = copy.deepcopy(n)
        clone.id = new_id
        clone.pos = (n.pos[0] + copy_index * 600.0 + gx, n.pos[1] + gy)
        job.out.add_node(clone)
    return rename


def group_edit(doc: Document, path: Path, node_ids: Sequence[str], repeat: int = 1,
                  title: str = "") -> Edit:
    return ReplaceGraph(path, group_nodes(doc.graph(path), node_ids, repeat=repeat, title=title),
                        text="Group")


def ungroup_edit(doc: Document, path: Path, group_id: str) -> Edit:
    return ReplaceGraph(path, ungroup_node(doc.graph(path), group_id), text="Ungroup")
