"""The architecture as data: nodes with typed ports, wires between them, and group nodes.

A group node (type ``group``) holds a sub-graph and a repeat count. Inside the sub-graph a single
``group_input`` node exposes the group's inputs and a single ``group_output`` node collects its
outputs. When the group repeats, its first input is chained through the copies (copy i's output
feeds copy i+1's first input) and every further input (encoder memory) is given to every copy.
"""
from __future__ import annotations

import copy
import graphlib
import heapq
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .schema import ParamView, PortSpec, UnknownBlockError, get_spec

GROUP = "group"
GROUP_INPUT = "group_input"
GROUP_OUTPUT = "group_output"

_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_valid_id(text: str) -> bool:
    """A node id doubles as a Python name in generated code: letters, digits, '_' only."""
    return _ID_RE.fullmatch(text) is not None


class GraphError(ValueError):
    """A structural edit or a file that cannot be accepted; the message says why and what to do."""


# what each kind of wire carries, in the words a message to the user uses (never the kind's
# internal name: "hidden" reads as "not shown")
KIND_WORDS = {"ids": "token ids", "hidden": "the stream of token vectors (B×T×d)",
              "logits": "logits", "memory": "the encoder's output (memory)"}


def kind_words(kind: str) -> str:
    return KIND_WORDS.get(kind, kind)


def parse_port_list(text: str) -> list[tuple[str, str]]:
    """Parse ``"x:hidden, memory:memory"`` into ``[("x", "hidden"), ("memory", "memory")]``."""
    out = []
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, kind = item.partition(":")
        out.append((name.strip(), (kind or "hidden").strip()))
    return out


def format_port_list(ports: Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{name}:{kind}" for name, kind in ports)


@dataclass
class Node:
    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    pos: tuple[float, float] = (0.0, 0.0)
    title: str = ""
    subgraph: "Graph | None" = None

    @property
    def is_group(self) -> bool:
        return self.type == GROUP

    @property
    def label(self) -> str:
        """What the editor shows on the node: the user's title, else the block's title."""
        if self.title:
            return self.title
        return get_spec(self.type).title

    def param(self, name: str) -> Any:
        """The parameter's value, falling back to the block's default."""
        if name in self.params:
            return self.params[name]
        return get_spec(self.type).param(name).default

    def typed_params(self) -> ParamView:
        """The resolved parameters read as attributes: ``node.typed_params().heads``."""
        return get_spec(self.type).view(self.params)

    def resolved_params(self) -> dict[str, Any]:
        merged = get_spec(self.type).defaults()
        merged.update(self.params)
        return merged


@dataclass(frozen=True, order=True)
class Edge:
    src: str
    src_port: str
    dst: str
    dst_port: str

    def __str__(self) -> str:
        return f"{self.src}.{self.src_port} -> {self.dst}.{self.dst_port}"


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------- nodes
    def __contains__(self, node_id: str) -> bool:
        return node_id in self.nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def node(self, node_id: str) -> Node:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise GraphError(f"no node '{node_id}' in this graph") from None

    def new_id(self, prefix: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", prefix) or "node"
        if base[0].isdigit():
            base = "n_" + base
        i = 1
        while f"{base}{i}" in self.nodes:
            i += 1
        return f"{base}{i}"

    def add_node(self, node: Node) -> Node:
        if not is_valid_id(node.id):
            raise GraphError(
                f"node id '{node.id}' is not valid: use letters, digits and '_' "
                "and start with a letter"
            )
        if node.id in self.nodes:
            raise GraphError(f"a node with id '{node.id}' already exists; pick another id")
        try:
            get_spec(node.type)
        except UnknownBlockError as exc:
            raise GraphError(str(exc)) from None  # names the known types
        self.nodes[node.id] = node
        return node

    def remove_node(self, node_id: str) -> tuple[Node, list[Edge]]:
        """Remove a node and every wire touching it; returns both so an undo can restore them."""
        node = self.node(node_id)
        touching = [e for e in self.edges if node_id in (e.src, e.dst)]
        self.edges = [e for e in self.edges if node_id not in (e.src, e.dst)]
        del self.nodes[node_id]
        return node, touching

    # ----------------------------------------------------------------- ports
    def input_ports(self, node_id: str) -> list[PortSpec]:
        node = self.node(node_id)
        if node.is_group:
            inner = group_boundary(node, GROUP_INPUT)
            return _boundary_ports(inner)
        return _ports_of(node, get_spec(node.type).input_ports)

    def output_ports(self, node_id: str) -> list[PortSpec]:
        node = self.node(node_id)
        if node.is_group:
            inner = group_boundary(node, GROUP_OUTPUT)
            return _boundary_ports(inner)
        return _ports_of(node, get_spec(node.type).output_ports)

    def input_port(self, node_id: str, name: str) -> PortSpec:
        for p in self.input_ports(node_id):
            if p.name == name:
                return p
        raise GraphError(f"node '{node_id}' has no input port '{name}'")

    def output_port(self, node_id: str, name: str) -> PortSpec:
        for p in self.output_ports(node_id):
            if p.name == name:
                return p
        raise GraphError(f"node '{node_id}' has no output port '{name}'")

    # ----------------------------------------------------------------- edges
    def in_edges(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.dst == node_id]

    def out_edges(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.src == node_id]

    def edge_into(self, node_id: str, port: str) -> Edge | None:
        for e in self.edges:
            if e.dst == node_id and e.dst_port == port:
                return e
        return None

    def add_edge(self, edge: Edge) -> Edge:
        """Add a wire without judging it (the editor's Connect command checks first)."""
        self.node(edge.src)
        self.node(edge.dst)
        if edge in self.edges:
            raise GraphError(f"the wire {edge} already exists")
        self.edges.append(edge)
        return edge

    def remove_edge(self, edge: Edge) -> None:
        try:
            self.edges.remove(edge)
        except ValueError:
            raise GraphError(f"there is no wire {edge}") from None

    # ----------------------------------------------------------------- structure
    def _predecessors(self) -> dict[str, set[str]]:
        preds: dict[str, set[str]] = {n: set() for n in self.nodes}
        for e in self.edges:
            if e.src in self.nodes and e.dst in self.nodes:
                preds[e.dst].add(e.src)
        return preds

    def find_cycle(self) -> list[str] | None:
        try:
            graphlib.TopologicalSorter(self._predecessors()).prepare()
        except graphlib.CycleError as err:
            return err.args[1][:-1]  # [a, b, ..., a]: each node wired into the next
        return None

    def topo_order(self) -> list[str]:
        """Node ids in an order where every wire points forward; ties keep insertion order."""
        rank = {n: i for i, n in enumerate(self.nodes)}
        sorter = graphlib.TopologicalSorter(self._predecessors())
        try:
            sorter.prepare()
        except graphlib.CycleError:
            cycle = self.find_cycle() or []
            raise GraphError(
                "the graph has a cycle (" + " -> ".join(cycle) + "); remove one of its wires"
            ) from None
        ready: list[tuple[int, str]] = []
        order: list[str] = []
        while sorter.is_active():
            for n in sorter.get_ready():
                heapq.heappush(ready, (rank[n], n))
            n = heapq.heappop(ready)[1]  # the earliest ready node, as networkx's lexicographic sort
            order.append(n)
            sorter.done(n)
        return order

    def _reachable(self, node_id: str, forward: bool) -> set[str]:
        step: dict[str, list[str]] = {}
        for e in self.edges:
            a, b = (e.src, e.dst) if forward else (e.dst, e.src)
            step.setdefault(a, []).append(b)
        seen: set[str] = set()
        todo = list(step.get(node_id, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += step.get(n, ())
        seen.discard(node_id)
        return seen

    def upstream(self, node_id: str) -> set[str]:
        """Every node with a path of wires into ``node_id``."""
        return self._reachable(node_id, forward=False)

    def downstream(self, node_id: str) -> set[str]:
        """Every node a path of wires from ``node_id`` reaches."""
        return self._reachable(node_id, forward=True)

    def nodes_of_type(self, *types: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.type in types]

    def walk(self, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Node]]:
        """Every node at every depth with the path of group ids that leads to it."""
        for node in self.nodes.values():
            yield prefix, node
            if node.subgraph is not None:
                yield from node.subgraph.walk(prefix + (node.id,))

    def clone(self) -> "Graph":
        return copy.deepcopy(self)


def _ports_of(node: Node, ports_fn) -> list[PortSpec]:
    """A block's ports, which may depend on its parameters (an Add's ``n_inputs``)."""
    if not get_spec(node.type).well_formed(node.params):
        raise GraphError(f"cannot list the ports of '{node.id}': a parameter holds an invalid "
                         "value; set its parameters again")
    return ports_fn(node.resolved_params())


def _boundary_ports(inner: Node | None) -> list[PortSpec]:
    """A group's ports: those its boundary node inside lists (none without one)."""
    return [PortSpec(n, k) for n, k in parse_port_list(inner.typed_params().ports)] if inner else []


def group_boundary(group: Node, boundary_type: str) -> Node | None:
    if group.subgraph is None:
        return None
    found = group.subgraph.nodes_of_type(boundary_type)
    return found[0] if found else None


def graph_at(root: Graph, path: Iterable[str]) -> Graph:
    """The sub-graph reached by entering the groups named in ``path`` one after another."""
    g = root
    for gid in path:
        node = g.node(gid)
        if node.subgraph is None:
            raise GraphError(f"node '{gid}' is not a group, so it cannot be entered")
        g = node.subgraph
    return g
