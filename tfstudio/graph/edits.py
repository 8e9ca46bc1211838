"""Editing the graph: every change is an :class:`Edit` that can be undone, and emits events.

Views never mutate a :class:`Graph` directly. A gesture becomes an edit executed on a
:class:`Document`; the document applies it, pushes it on the undo stack and tells its listeners
what changed, and the views redraw from those events.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterable, Sequence

from .model import (GROUP, GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, GraphError, Node,
                    format_port_list, graph_at, group_boundary)
from . import layout
from .schema import get_spec, kind_accepts

Path = tuple[str, ...]


class ConnectionRefused(GraphError):
    """A wire the editor will not make; the message says why."""


class GraphChange(str, Enum):
    """What kind of change a :class:`GraphEvent` reports. A ``str`` enum, so a listener
    written against the old string kinds (``ev.kind == "node_added"``) still works."""

    NODE_ADDED = "node_added"
    NODE_REMOVED = "node_removed"
    EDGE_ADDED = "edge_added"
    EDGE_REMOVED = "edge_removed"
    PARAM_CHANGED = "param_changed"
    TITLE_CHANGED = "title_changed"
    NODE_MOVED = "node_moved"
    GRAPH_REPLACED = "graph_replaced"  # redraw everything under ``path``

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class GraphEvent:
    """What changed at ``path``: ``node_id`` for node changes, ``edge`` for wire changes,
    ``name`` the parameter a PARAM_CHANGED event is about."""

    kind: GraphChange
    path: Path
    node_id: str | None = None
    edge: Edge | None = None
    name: str | None = None


class Edit:
    """One undoable change. ``text`` names it in the Undo menu; ``changes_model`` says whether
    it can change the compiled model (moving or renaming a block cannot)."""

    text = "edit"
    changes_model = True

    def do(self, doc: "Document") -> None:
        raise NotImplementedError

    def undo(self, doc: "Document") -> None:
        raise NotImplementedError


class Document:
    """A root graph plus its undo history and change listeners."""

    def __init__(self, graph: Graph | None = None):
        self.root = graph if graph is not None else Graph()
        self._listeners: list[Callable[[GraphEvent], None]] = []
        self._stack: list[Edit] = []
        self._index = 0
        self._clean_index: int | None = 0

    # --------------------------------------------------------------- listeners
    def subscribe(self, listener: Callable[[GraphEvent], None]) -> None:
        self._listeners.append(listener)

    def emit(self, event: GraphEvent) -> None:
        """Tell every listener; one that fails is logged and does not stop the others (the
        edit has happened, so it must not look refused)."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a view's bug must not corrupt the history
                logging.getLogger(__name__).exception("graph listener failed on %s", event)

    # --------------------------------------------------------------- history
    def graph(self, path: Iterable[str] = ()) -> Graph:
        return graph_at(self.root, path)

    def execute(self, command: Edit) -> Edit:
        command.do(self)  # raises before touching the stack when the edit is refused
        del self._stack[self._index:]
        if self._clean_index is not None and self._clean_index > self._index:
            self._clean_index = None
        self._stack.append(command)
        self._index += 1
        return command

    def undo(self) -> bool:
        if not self.can_undo:
            return False
        self._index -= 1
        self._stack[self._index].undo(self)
        return True

    def redo(self) -> bool:
        if not self.can_redo:
            return False
        self._stack[self._index].do(self)
        self._index += 1
        return True

    @property
    def can_undo(self) -> bool:
        return self._index > 0

    @property
    def can_redo(self) -> bool:
        return self._index < len(self._stack)

    @property
    def last_edit(self) -> "Edit | None":
        """The edit one undo would take back (None at the start of the history)."""
        return self._stack[self._index - 1] if self.can_undo else None

    @property
    def undo_text(self) -> str:
        return self._stack[self._index - 1].text if self.can_undo else ""

    @property
    def redo_text(self) -> str:
        return self._stack[self._index].text if self.can_redo else ""

    @property
    def dirty(self) -> bool:
        return self._clean_index != self._index

    def mark_clean(self) -> None:
        self._clean_index = self._index

    def reset(self, graph: Graph) -> None:
        """Start over with another graph (open, new): history is cleared."""
        self.root = graph
        self._stack.clear()
        self._index = 0
        self._clean_index = 0
        self.emit(GraphEvent(GraphChange.GRAPH_REPLACED, ()))


# ------------------------------------------------------------------- basic commands
@dataclass
class AddNode(Edit):
    path: Path
    node: Node
    text: str = "Add block"

    def do(self, doc):
        doc.graph(self.path).add_node(copy.deepcopy(self.node))
        doc.emit(GraphEvent(GraphChange.NODE_ADDED, self.path, self.node.id))

    def undo(self, doc):
        doc.graph(self.path).remove_node(self.node.id)
        doc.emit(GraphEvent(GraphChange.NODE_REMOVED, self.path, self.node.id))


@dataclass
class RemoveNodes(Edit):
    path: Path
    node_ids: Sequence[str]
    text: str = "Delete"
    _removed: list = field(default_factory=list, repr=False)
    _order: tuple = field(default=((), ()), repr=False)

    def do(self, doc):
        g = doc.graph(self.path)
        ids = list(dict.fromkeys(self.node_ids))
        for nid in ids:
            g.node(nid)  # refuse before changing anything
        self._order = (list(g.nodes), list(g.edges))
        self._removed = []
        for nid in ids:
            node, edges = g.remove_node(nid)
            self._removed.append((node, edges))
            for e in edges:
                doc.emit(GraphEvent(GraphChange.EDGE_REMOVED, self.path, edge=e))
            doc.emit(GraphEvent(GraphChange.NODE_REMOVED, self.path, nid))

    def undo(self, doc):
        g = doc.graph(self.path)
        for node, _ in self._removed:
            g.add_node(node)
            doc.emit(GraphEvent(GraphChange.NODE_ADDED, self.path, node.id))
        for _, edges in self._removed:
            for e in edges:
                if e not in g.edges:
                    g.add_edge(e)
                    doc.emit(GraphEvent(GraphChange.EDGE_ADDED, self.path, edge=e))
        _restore_order(g, *self._order)


def _restore_order(graph: Graph, nodes: list[str], edges: list[Edge]) -> None:
    """Put nodes and wires back in their old order: the compiler breaks ties in topological
    order by it, so an undone edit must give back exactly the graph it found."""
    graph.nodes = {**{n: graph.nodes[n] for n in nodes if n in graph.nodes}, **graph.nodes}
    present = set(graph.edges)
    kept = [e for e in edges if e in present]
    graph.edges = kept + [e for e in graph.edges if e not in set(kept)]


def connection_problem(graph: Graph, edge: Edge, replace: bool = False) -> str | None:
    """Why ``edge`` may not be drawn, or None when it may. Used for the refusal message."""
    if edge.src == edge.dst:
        return "a block cannot feed itself"
    try:
        out_port = graph.output_port(edge.src, edge.src_port)
        in_port = graph.input_port(edge.dst, edge.dst_port)
    except GraphError as exc:
        return str(exc)
    if not kind_accepts(in_port.kind, out_port.kind):
        return (f"'{edge.src_port}' gives {out_port.kind} but '{edge.dst_port}' takes "
                f"{in_port.kind}; connect it to an input that takes {out_port.kind}")
    occupied = graph.edge_into(edge.dst, edge.dst_port)
    if occupied is not None and not replace:
        return (f"input '{edge.dst_port}' of '{edge.dst}' already has a wire from "
                f"'{occupied.src}'; disconnect it first")
    if edge.src in graph.downstream(edge.dst):
        return f"this wire would make a cycle ('{edge.dst}' already feeds '{edge.src}')"
    return None


@dataclass
class Connect(Edit):
    """Draw a wire. With ``replace`` an existing wire into the same input is swapped out."""

    path: Path
    edge: Edge
    replace: bool = True
    text: str = "Connect"
    _replaced: Edge | None = None
    _index: int = 0

    def do(self, doc):
        g = doc.graph(self.path)
        problem = connection_problem(g, self.edge, self.replace)
        if problem:
            raise ConnectionRefused(problem)
        self._replaced = g.edge_into(self.edge.dst, self.edge.dst_port)
        if self._replaced is not None:
            self._index = g.edges.index(self._replaced)
            g.remove_edge(self._replaced)
            doc.emit(GraphEvent(GraphChange.EDGE_REMOVED, self.path, edge=self._replaced))
        g.add_edge(self.edge)
        doc.emit(GraphEvent(GraphChange.EDGE_ADDED, self.path, edge=self.edge))

    def undo(self, doc):
        g = doc.graph(self.path)
        g.remove_edge(self.edge)
        doc.emit(GraphEvent(GraphChange.EDGE_REMOVED, self.path, edge=self.edge))
        if self._replaced is not None:
            g.edges.insert(self._index, self._replaced)
            doc.emit(GraphEvent(GraphChange.EDGE_ADDED, self.path, edge=self._replaced))


@dataclass
class Disconnect(Edit):
    path: Path
    edge: Edge
    text: str = "Disconnect"
    _index: int = 0

    def do(self, doc):
        g = doc.graph(self.path)
        self._index = g.edges.index(self.edge) if self.edge in g.edges else 0
        g.remove_edge(self.edge)
        doc.emit(GraphEvent(GraphChange.EDGE_REMOVED, self.path, edge=self.edge))

    def undo(self, doc):
        g = doc.graph(self.path)
        g.node(self.edge.src)
        g.node(self.edge.dst)
        g.edges.insert(self._index, self.edge)
        doc.emit(GraphEvent(GraphChange.EDGE_ADDED, self.path, edge=self.edge))


@dataclass
class SetParam(Edit):
    path: Path
    node_id: str
    name: str
    value: Any
    text: str = "Change parameter"
    _old: Any = None
    _had: bool = False

    def do(self, doc):
        node = doc.graph(self.path).node(self.node_id)
        try:
            param = get_spec(node.type).param(self.name)
        except KeyError as exc:
            raise GraphError(exc.args[0]) from None
        value = param.coerce(self.value)
        self._had = self.name in node.params
        self._old = node.params.get(self.name)
        node.params[self.name] = value
        doc.emit(GraphEvent(GraphChange.PARAM_CHANGED, self.path, self.node_id, name=self.name))

    def undo(self, doc):
        node = doc.graph(self.path).node(self.node_id)
        if self._had:
            node.params[self.name] = self._old
        else:
            node.params.pop(self.name, None)
        doc.emit(GraphEvent(GraphChange.PARAM_CHANGED, self.path, self.node_id, name=self.name))


@dataclass
class SetTitle(Edit):
    path: Path
    node_id: str
    title: str
    text: str = "Rename block"
    changes_model = False  # titles are labels; the compiler names code after node ids
    _old: str = ""

    def do(self, doc):
        node = doc.graph(self.path).node(self.node_id)
        self._old, node.title = node.title, self.title
        doc.emit(GraphEvent(GraphChange.TITLE_CHANGED, self.path, self.node_id))

    def undo(self, doc):
        doc.graph(self.path).node(self.node_id).title = self._old
        doc.emit(GraphEvent(GraphChange.TITLE_CHANGED, self.path, self.node_id))


@dataclass
class MoveNodes(Edit):
    path: Path
    positions: dict[str, tuple[float, float]]
    text: str = "Move"
    changes_model = False
    _old: dict = field(default_factory=dict, repr=False)

    def do(self, doc):
        g = doc.graph(self.path)
        self._old = {nid: g.node(nid).pos for nid in self.positions}
        for nid, pos in self.positions.items():
            g.node(nid).pos = (float(pos[0]), float(pos[1]))
            doc.emit(GraphEvent(GraphChange.NODE_MOVED, self.path, nid))

    def undo(self, doc):
        g = doc.graph(self.path)
        for nid, pos in self._old.items():
            g.node(nid).pos = pos
            doc.emit(GraphEvent(GraphChange.NODE_MOVED, self.path, nid))


@dataclass
class Macro(Edit):
    """Several commands undone and redone as one step (a paste, a quick switch)."""

    commands: list[Edit]
    text: str = "Edit"
    _done: int = 0

    def do(self, doc):
        self._done = 0
        try:
            for c in self.commands:
                c.do(doc)
                self._done += 1
        except Exception:
            for c in reversed(self.commands[: self._done]):
                c.undo(doc)
            raise

    def undo(self, doc):
        for c in reversed(self.commands):
            c.undo(doc)


@dataclass
class ReplaceGraph(Edit):
    """Swap the whole graph at ``path`` (the root, or a group's inside) for another one.

    Used by rewrites that touch many wires at once, such as a norm-placement switch."""

    path: Path
    new_graph: Graph
    text: str = "Rewrite"
    _old: Graph | None = None

    def _swap(self, doc, graph: Graph) -> Graph:
        if not self.path:
            old, doc.root = doc.root, graph
        else:
            parent = doc.graph(self.path[:-1]).node(self.path[-1])
            if not parent.is_group:
                raise GraphError(f"'{parent.id}' is not a group; only a group's inside can be "
                                 "replaced")
            old, parent.subgraph = parent.subgraph, graph
        doc.emit(GraphEvent(GraphChange.GRAPH_REPLACED, self.path))
        return old

    def do(self, doc):
        self._old = self._swap(doc, copy.deepcopy(self.new_graph))

    def undo(self, doc):
        self._swap(doc, self._old)


@dataclass
class ShowRunGraph(ReplaceGraph):
    """Put the graph a past run trained on the canvas, in place of the user's: reopening a
    run shows what was trained, and one undo brings the user's graph back."""

    run: str = ""  # the run's label, for the Undo menu and the status bar

    def __post_init__(self):
        self.text = f"Show the graph of run {self.run}" if self.run else "Show a run's graph"


@dataclass
class KeepTidy(Edit):
    """An edit followed by a tidy layout of every level it left with overlapping blocks
    (a rewrite drops new norms onto the Adds, an open group's frame grows into its
    neighbours). One undo step: the moves are undone with the edit."""

    edit: Edit
    path: Path                 # the level the edit changes
    here: bool = True          # tidy that level too (a rewrite), not only the ones above it
    text: str = ""
    _moves: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.text = self.text or self.edit.text
        self.changes_model = self.edit.changes_model

    def do(self, doc):
        self.edit.do(doc)
        self._moves = []
        levels = layout.levels_near(doc.root, self.path)
        if not self.here:  # blocks added by hand stay where they were put; the frames
            levels = [p for p in levels if len(p) < len(self.path)]  # around them make room
        for path in levels:
            graph = doc.graph(path)
            if layout.needs_tidy(graph):
                move = MoveNodes(path, layout.tidy_positions(graph), text="Tidy")
                move.do(doc)
                self._moves.append(move)

    def undo(self, doc):
        for move in reversed(self._moves):
            move.undo(doc)
        self.edit.undo(doc)


def tidy_edit(doc: Document, path: Path) -> MoveNodes:
    """Lay the graph at ``path`` out in layers (the Tidy command)."""
    return MoveNodes(tuple(path), layout.tidy_positions(doc.graph(path)), text="Tidy layout")


def kept_tidy(edit: Edit) -> Edit:
    """``edit`` wrapped so that it leaves no blocks overlapping: a rewrite of a graph tidies
    that graph where needed, and blocks added or removed inside a group tidy the levels above
    it where the group's open frame, grown or shrunk, now overlaps its neighbours."""
    if isinstance(edit, ReplaceGraph):
        return KeepTidy(edit, edit.path)
    path = _nested_path(edit)
    return KeepTidy(edit, path, here=False) if path else edit


def _nested_path(edit: Edit) -> Path:
    """The group level where ``edit`` adds or removes blocks; () at the top or for others."""
    if isinstance(edit, (AddNode, RemoveNodes)):
        return tuple(edit.path)
    if isinstance(edit, Macro):
        return next((p for p in map(_nested_path, edit.commands) if p), ())
    return ()


# ------------------------------------------------------------------- group / ungroup
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
    for copy_index in range(int(group.param("repeat"))):
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


def new_node(graph: Graph, block_type: str, pos: tuple[float, float] = (0.0, 0.0),
             node_id: str | None = None, **params: Any) -> Node:
    """A node of ``block_type`` with a fresh id and coerced parameters (not yet added)."""
    spec = get_spec(block_type)
    clean = {k: spec.param(k).coerce(v) for k, v in params.items()}
    return Node(node_id or graph.new_id(block_type), block_type, clean, pos)

