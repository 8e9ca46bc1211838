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

from .model import Edge, Graph, GraphError, Node, graph_at
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
    neighbours), or, above the edit, with a frame grown into a neighbour's gap. One undo
    step: the moves are undone with the edit."""

    edit: Edit
    path: Path                 # the level the edit changes
    here: bool = True          # tidy that level too (a rewrite), not only the ones above it
    text: str = ""
    _moves: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.text = self.text or self.edit.text
        self.changes_model = self.edit.changes_model

    def do(self, doc):
        # at each level above, only the open frame holding the edit changes: where it was drawn
        frames = {self.path[:k]: layout.block_rect(doc.graph(self.path[:k]), self.path[k])
                  for k in range(len(self.path))}
        self.edit.do(doc)
        self._moves = []
        levels = layout.levels_near(doc.root, self.path)
        if not self.here:  # blocks added by hand stay where they were put; the frames
            levels = [p for p in levels if len(p) < len(self.path)]  # around them make room
        for path in levels:
            graph = doc.graph(path)
            if (layout.needs_tidy_around(graph, self.path[len(path)], frames[path])
                    if path in frames else layout.needs_tidy(graph)):
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
    that graph where needed, and blocks added, moved or removed inside a group tidy the levels
    above it where the group's open frame, grown or shrunk, now overlaps its neighbours."""
    if isinstance(edit, ReplaceGraph):
        return KeepTidy(edit, edit.path)
    path = _nested_path(edit)
    return KeepTidy(edit, path, here=False) if path else edit


def _nested_path(edit: Edit) -> Path:
    """The group level where ``edit`` adds, moves or removes blocks or wires (each changes how
    the group's open frame lays its inside out, so its size); () at the top or for others."""
    if isinstance(edit, (AddNode, MoveNodes, RemoveNodes, Connect, Disconnect)):
        return tuple(edit.path)
    if isinstance(edit, Macro):
        return next((p for p in map(_nested_path, edit.commands) if p), ())
    return ()


def agreed_params(model: Graph, block_type: str) -> dict[str, Any]:
    """The parameters on which every block of ``block_type`` already in ``model`` (at any
    depth) agrees: what a new one should start with, so a Norm added to a LLaMA-style model is
    an RMSNorm like its others, not the catalogue's LayerNorm. Empty when it has none."""
    present = [node.resolved_params() for _, node in model.walk() if node.type == block_type]
    if not present:
        return {}
    return {name: value for name, value in present[0].items()
            if all(other.get(name) == value for other in present[1:])}


def new_node(graph: Graph, block_type: str, pos: tuple[float, float] = (0.0, 0.0),
             node_id: str | None = None, **params: Any) -> Node:
    """A node of ``block_type`` with a fresh id and coerced parameters (not yet added)."""
    spec = get_spec(block_type)
    clean = {k: spec.param(k).coerce(v) for k, v in params.items()}
    return Node(node_id or graph.new_id(block_type), block_type, clean, pos)

