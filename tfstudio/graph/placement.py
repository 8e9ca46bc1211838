"""Norm placement: recognise it in any layer's wiring, and rewrite a layer from one to another.

A layer (a group's inside) is a chain of residual sublayers along its stream: the stream
enters an Add directly (the skip) and through a branch F (attention, FFN, ...). Where the Norm
blocks sit around that Add is the placement:

  pre       y = x + F(Norm(x))          GPT-2 onward, LLaMA
  post      y = Norm(x + F(x))          original Transformer, BERT, GPT-1
  post-in-residual
            y = x + Norm(F(x))          a norm on F's output inside the residual, none before F
                                        (the seed's "Post Norm in Residual")
  sandwich  y = x + Norm(F(Norm(x)))    norms on both sides of F, inside the residual

A rewrite keeps every block of F (ids, parameters, extra inputs such as cross-attention
memory) and the Add blocks, and moves, adds or drops only norms, which keep their kind.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from . import block_types as bt
from .kinds import LAYERNORM, MIXED, NO_NORM, PLACEMENTS, POST, POST_IN_RESIDUAL, PRE, SANDWICH
from .model import GROUP_INPUT, Edge, Graph, GraphError, Node
from .streams import main_input_edge

NORM, ADD = bt.NORM, bt.ADD

Port = tuple[str, str]  # (node id, port name)


@dataclass
class Sublayer:
    """One residual sublayer: stream -> [pre norm] -> F -> [out norm] -> Add -> [post norm]."""

    add: str
    skip_port: str              # the Add input the stream enters directly
    branch_port: str            # the Add input F's output enters
    chain: list[str]            # F's blocks, first to last, without the norms
    entry_port: str             # the input of chain[0] the branch enters
    exit_port: str              # the output of chain[-1] that leaves the branch
    pre_norm: str | None = None
    out_norm: str | None = None
    post_norm: str | None = None

    @property
    def norms(self) -> list[str]:
        return [n for n in (self.pre_norm, self.out_norm, self.post_norm) if n]

    @property
    def end(self) -> Port:
        """Where the stream continues after this sublayer."""
        return (self.post_norm, "y") if self.post_norm else (self.add, "y")

    @property
    def placement(self) -> str:
        return sublayer_placement(bool(self.pre_norm), bool(self.out_norm), bool(self.post_norm))


def sublayer_placement(pre_norm: bool, out_norm: bool, post_norm: bool) -> str:
    """The placement of one residual sublayer from where its norms sit: before F
    (``pre_norm``), on F's output inside the residual (``out_norm``), after the Add
    (``post_norm``). "mixed" for a norm after the Add and one around F; "none" for no norm.
    The one rule: layers here and the Hugging Face reader (``export/anatomy.py``) both ask it."""
    if post_norm:
        return POST if not (pre_norm or out_norm) else MIXED
    if out_norm:
        return SANDWICH if pre_norm else POST_IN_RESIDUAL
    return PRE if pre_norm else NO_NORM


def agreed_placement(placements) -> str:
    """The placement every sublayer has; "mixed" when they differ, "none" when there are none."""
    seen = set(placements)
    if not seen:
        return NO_NORM
    return seen.pop() if len(seen) == 1 else MIXED


@dataclass
class ResidualStructure:
    start: Port                 # where the stream enters the layer (the group input's first port)
    sublayers: list[Sublayer]


def residual_structure(layer: Graph) -> ResidualStructure | None:
    """The residual sublayers along the layer's stream, first to last; None without a group
    input to start from."""
    starts = layer.nodes_of_type(GROUP_INPUT)
    if not starts:
        return None
    try:
        ports = layer.output_ports(starts[0].id)
    except GraphError:
        return None
    if not ports:
        return None
    stream: Port = (starts[0].id, ports[0].name)
    subs: list[Sublayer] = []
    seen: set[str] = set()
    while True:
        sub = _next_sublayer(layer, stream)
        if sub is None or sub.add in seen:
            break
        seen.add(sub.add)
        subs.append(sub)
        stream = sub.end
    return ResidualStructure((starts[0].id, ports[0].name), subs)


def _consumers(layer: Graph, port: Port) -> list[Edge]:
    return [e for e in layer.edges if (e.src, e.src_port) == port]


def _next_sublayer(layer: Graph, stream: Port) -> Sublayer | None:
    for skip in _consumers(layer, stream):
        add = layer.nodes.get(skip.dst)
        if add is None or add.type != ADD:
            continue
        others = [e for e in layer.in_edges(add.id) if e != skip]
        if len(others) != 1:
            continue  # parallel branches (x + F(x) + G(x)) are not a placement pattern
        traced = _trace_branch(layer, others[0], stream)
        if traced is None:
            continue
        blocks, entry_port = traced
        sub = Sublayer(add.id, skip.dst_port, others[0].dst_port, [], entry_port,
                       others[0].src_port)
        if blocks and layer.nodes[blocks[0][0]].type == NORM:
            sub.pre_norm = blocks.pop(0)[0]
        if blocks and layer.nodes[blocks[-1][0]].type == NORM:
            sub.out_norm = blocks.pop()[0]
            if blocks:
                sub.exit_port = _port_into(layer, blocks[-1][0], sub.out_norm)
        if not blocks:
            continue  # a branch of norms alone has no F to place them around
        sub.chain = [nid for nid, _ in blocks]
        if sub.pre_norm:
            sub.entry_port = _port_of(layer, sub.pre_norm, sub.chain[0])
        after = _consumers(layer, (add.id, "y"))
        if len(after) == 1 and layer.nodes[after[0].dst].type == NORM:
            sub.post_norm = after[0].dst
        return sub
    return None


def _trace_branch(layer: Graph, edge: Edge, stream: Port):
    """Walk back from ``edge`` along first inputs to ``stream``: the branch's blocks in order
    as (id, output port) and the input port the stream enters; None if it does not get there."""
    blocks: list[tuple[str, str]] = []
    seen: set[str] = set()
    while (edge.src, edge.src_port) != stream:
        node = layer.nodes.get(edge.src)
        if node is None or node.type in (ADD, GROUP_INPUT) or node.id in seen:
            return None
        seen.add(node.id)
        blocks.append((node.id, edge.src_port))
        edge = main_input_edge(layer, node.id)
        if edge is None:
            return None
    return blocks[::-1], edge.dst_port


def _port_of(layer: Graph, src: str, dst: str) -> str:
    """The input port of ``dst`` that ``src`` feeds."""
    return next(e.dst_port for e in layer.edges if e.src == src and e.dst == dst)


def _port_into(layer: Graph, src: str, dst: str) -> str:
    """The output port of ``src`` that feeds ``dst``."""
    return next(e.src_port for e in layer.edges if e.src == src and e.dst == dst)


def identify_placement(layer: Graph) -> str:
    """"pre", "post", "post-in-residual" or "sandwich" when every residual sublayer agrees;
    "mixed" when they differ (or one has norms both around F and after the Add); "none" when
    the layer has no residual sublayers or no norms in them."""
    structure = residual_structure(layer)
    if structure is None:
        return NO_NORM
    return agreed_placement(sub.placement for sub in structure.sublayers)


def rewrite_placement(layer: Graph, placement: str, *, norm: dict | None = None) -> Graph:
    """A new layer graph with every residual sublayer in ``placement``.

    Mixer blocks, Adds and every wire not on the residual path are kept; norms are moved,
    added or dropped. A sublayer's norm keeps its id and parameters in its new place; a new
    norm copies the sublayer's (or the layer's) norm, else ``norm``, else a LayerNorm."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}; got '{placement}'")
    structure = residual_structure(layer)
    if structure is None or not structure.sublayers:
        raise ValueError("this layer has no residual sublayer (an Add summing the stream and "
                         "a branch F of it), so there is no norm placement to change")
    return _Rewriter(layer, structure, placement, norm).run()


class _Rewriter:
    def __init__(self, layer: Graph, structure: ResidualStructure, placement: str,
                 norm: dict | None):
        self.layer, self.structure, self.placement = layer, structure, placement
        self.out = layer.clone()
        any_norm = next((layer.nodes[n] for s in structure.sublayers for n in s.norms), None)
        self.default_norm = dict(any_norm.params) if any_norm else dict(norm or
                                                                        {"kind": LAYERNORM})
        self.rank = {nid: float(i) for i, nid in enumerate(layer.nodes)}

    def run(self) -> Graph:
        subs = self.structure.sublayers
        removed = {n for s in subs for n in s.norms}
        rebuilt = {(s.chain[0], s.entry_port) for s in subs}
        rebuilt |= {(s.add, s.skip_port) for s in subs} | {(s.add, s.branch_port) for s in subs}
        # anything else that read a sublayer's output keeps reading it from its new end
        onward = [[e for e in _consumers(self.layer, s.end)
                   if e.dst not in removed and (e.dst, e.dst_port) not in rebuilt] for s in subs]
        for nid in removed:
            for e in self.layer.out_edges(nid):
                if e.dst not in removed and (e.dst, e.dst_port) not in rebuilt and not any(
                        e in group for group in onward):
                    raise ValueError(f"norm '{nid}' also feeds '{e.dst}', so moving it would "
                                     "change what that block reads; rewire it first")
        for nid in removed:
            self.out.remove_node(nid)
        dropped = {e for group in onward for e in group}
        self.out.edges = [e for e in self.out.edges
                          if (e.dst, e.dst_port) not in rebuilt and e not in dropped]
        stream = self.structure.start
        for sub, readers in zip(subs, onward):
            stream = self.sublayer(sub, stream)
            for e in readers:
                self.out.add_edge(Edge(*stream, e.dst, e.dst_port))
        order = sorted(self.out.nodes, key=lambda n: self.rank.get(n, 0.0))
        self.out.nodes = {nid: self.out.nodes[nid] for nid in order}
        return self.out

    def sublayer(self, sub: Sublayer, stream: Port) -> Port:
        primary = sub.pre_norm or sub.post_norm or sub.out_norm
        params = dict(self.layer.nodes[primary].params) if primary else dict(self.default_norm)
        main_id = primary or f"norm_{sub.chain[0]}"
        first, last = sub.chain[0], sub.chain[-1]
        branch_in: Port = stream
        if self.placement in (PRE, SANDWICH):
            nid = self.add_norm(main_id, params, anchor=first, offset=-0.5, dx=-95.0,
                                same_role=main_id == sub.pre_norm)
            self.wire(stream, (nid, "x"))
            branch_in = (nid, "y")
        self.wire(branch_in, (first, sub.entry_port))
        branch_out: Port = (last, sub.exit_port)
        if self.placement in (SANDWICH, POST_IN_RESIDUAL):
            if self.placement == POST_IN_RESIDUAL:
                out_id, out_params = main_id, params  # the one norm moves onto F's output
            else:  # sandwich: a second norm, or the one already on F's output
                kept = sub.out_norm if sub.out_norm and sub.out_norm != main_id else None
                out_id = kept or f"{main_id}_out"
                out_params = dict(self.layer.nodes[kept].params) if kept else params
            nid = self.add_norm(out_id, out_params, anchor=last, offset=0.25, dx=95.0,
                                same_role=out_id == sub.out_norm)
            self.wire(branch_out, (nid, "x"))
            branch_out = (nid, "y")
        self.wire(stream, (sub.add, sub.skip_port))
        self.wire(branch_out, (sub.add, sub.branch_port))
        stream = (sub.add, "y")
        if self.placement == POST:
            nid = self.add_norm(main_id, params, anchor=sub.add, offset=0.5, dx=95.0,
                                same_role=main_id == sub.post_norm)
            self.wire(stream, (nid, "x"))
            stream = (nid, "y")
        return stream

    def add_norm(self, wanted: str, params: dict, anchor: str, offset: float, dx: float,
                 same_role: bool) -> str:
        """Place a norm next to ``anchor`` (in the node order too); a norm that stays where it
        was keeps its position on the canvas."""
        nid = wanted if wanted not in self.out.nodes else self.out.new_id(wanted + "_")
        old = self.layer.nodes.get(nid)
        old = old if old is not None and old.type == NORM else None
        base = self.layer.nodes[anchor].pos
        pos = old.pos if old is not None and same_role else (base[0] + dx, base[1] + 60.0)
        self.out.add_node(Node(nid, NORM, copy.deepcopy(params), pos, old.title if old else ""))
        self.rank[nid] = self.rank[anchor] + offset
        return nid

    def wire(self, src: Port, dst: Port) -> None:
        edge = Edge(src[0], src[1], dst[0], dst[1])
        if edge not in self.out.edges:
            self.out.add_edge(edge)

