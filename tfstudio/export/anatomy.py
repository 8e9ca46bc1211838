"""Reads a graph as a standard transformer stack: embedding, positions, N residual layers of
(attention, feed-forward), final norm, head. Pure Python over the graph (no torch).

Hugging Face architectures are such stacks, so a graph maps onto one only when its wiring is
one. The reader follows the main stream from the token input to the head, through every copy of
every (nested) group, and names each block instance by the key the compiled model's
``blocks()`` uses (``("layers", 3, "attn")``), so the weight mapping can find its module.
Anything off that shape (a branch that does not rejoin, cross-attention, a recurrent cell, an
Add of three streams, a sandwich norm) becomes a :class:`Problem` naming the node.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..graph import block_types as bt
from ..graph.kinds import MIXED, PLACEMENT_NAMES, POST, POST_IN_RESIDUAL, PRE, SANDWICH
from ..graph.model import GROUP, GROUP_INPUT, GROUP_OUTPUT, Graph, GraphError, Node
from ..graph.placement import agreed_placement, sublayer_placement
from ..graph.schema import ParamView
from .errors import ExportRefused, Problem

HEADS = bt.HEAD_TYPES
MIXERS = (bt.ATTENTION, bt.FEED_FORWARD, bt.MOE)
PASS_THROUGH = (bt.DROPOUT,)  # identity at inference; HF keeps its own dropout settings
STOCK_PLACEMENTS = (PRE, POST)  # the placements Hugging Face's architectures have
_FORMULAS = {POST_IN_RESIDUAL: ", y = x + Norm(F(x))", SANDWICH: ", y = x + Norm(F(Norm(x)))"}


@dataclass(frozen=True)
class At:
    """One block instance: its key in ``model.blocks()`` and its node."""

    key: tuple
    node: Node

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(k for k in self.key[:-1] if isinstance(k, str))

    @property
    def params(self) -> ParamView:
        return self.node.typed_params()

    def problem(self, message: str, fix: str = "") -> Problem:
        return Problem(self.node.id, self.groups, message, fix)


@dataclass
class Sublayer:
    """stream -> [pre_norm] -> mixer -> [out_norm] -> add(stream, branch)."""

    add: At
    mixer: At
    pre_norm: At | None = None
    out_norm: At | None = None


@dataclass
class Layer:
    """One transformer layer. ``norm1``/``norm2`` are the norms before attention / the FFN
    (pre-norm) or after their residual adds (post-norm)."""

    attn: At
    ffn: At
    norm1: At
    norm2: At


@dataclass
class Anatomy:
    kind: str                      # decoder | encoder
    placement: str                 # pre | post
    embed: At
    positions: At | None
    embed_norm: At | None
    layers: list[Layer]
    final_norm: At | None
    head: At
    problems: list[Problem] = field(default_factory=list)

    def norms(self) -> list[At]:
        found = [self.embed_norm, self.final_norm]
        for layer in self.layers:
            found += [layer.norm1, layer.norm2]
        return [n for n in found if n is not None]


def read_anatomy(graph: Graph, target: str = "a Hugging Face architecture") -> Anatomy:
    """The graph as a standard stack; raises :class:`ExportRefused` naming the nodes that are
    not part of one."""
    heads = [n for n in graph if n.type in HEADS]
    if len(heads) != 1:
        raise ExportRefused(target, [Problem(n.id, (), "one of several output heads; keep one")
                                     for n in heads] or
                            [Problem("", (), "the graph has no output head", "add an LM head")])
    head = heads[0]
    if head.type == bt.SEQ2SEQ_HEAD:
        raise ExportRefused(target, [Problem(head.id, (), (
            "encoder-decoder graphs have no stock counterpart here: T5 uses relative position "
            "buckets and BART learned positions with its own layer norms, and neither matches "
            "tfstudio's encoder-decoder blocks exactly"), "export with --format pytorch")])
    reader = _StreamReader(graph, (), head.id)
    try:
        items = reader.read()
    except GraphError as exc:  # a parameter holds an invalid value: validation says which
        raise ExportRefused(target, [Problem("", (), str(exc), "fix the graph's errors first")]) \
            from None
    anatomy = _assemble(items, reader.problems, "encoder" if head.type == bt.MLM_HEAD else "decoder")
    if anatomy.problems:
        raise ExportRefused(target, anatomy.problems)
    return anatomy


# ------------------------------------------------------------------------------ the stream
class _StreamReader:
    """Follows one scope's main stream (the model, or one group's inside) from its start to its
    end, yielding ("embed" | "pos" | "norm" | "head", At) and ("sublayer", Sublayer) items."""

    def __init__(self, graph: Graph, prefix: tuple, sink: str):
        self.graph, self.prefix, self.sink = graph, prefix, sink
        self.needed = graph.upstream(sink) | {sink}  # blocks not feeding the sink do nothing
        self.problems: list[Problem] = []

    def at(self, node: Node) -> At:
        return At(self.prefix + (node.id,), node)

    def fail(self, node: Node, message: str, fix: str = "") -> None:
        self.problems.append(self.at(node).problem(message, fix))

    def consumers(self, node_id: str, port: str) -> list[Node]:
        return [self.graph.nodes[e.dst] for e in self.graph.out_edges(node_id)
                if e.src_port == port and e.dst in self.needed]

    def start(self) -> tuple[str, str] | None:
        if not self.prefix:
            inputs = [n for n in self.graph.nodes_of_type(bt.TOKEN_INPUT) if n.id in self.needed]
            if len(inputs) != 1 or inputs[0].typed_params().role != "tokens":
                for n in inputs:
                    self.fail(n, "a stock architecture reads one token input (role 'tokens')")
                return None
            return inputs[0].id, "ids"
        starts = self.graph.nodes_of_type(GROUP_INPUT)
        if len(starts) != 1:
            return None
        ports = self.graph.output_ports(starts[0].id)
        for extra in ports[1:]:
            if self.consumers(starts[0].id, extra.name):
                self.fail(starts[0], f"the group's extra input '{extra.name}' (encoder memory) "
                                     "has no place in a decoder-only or encoder-only stack")
        return (starts[0].id, ports[0].name) if ports else None

    def read(self) -> list[tuple[str, object]]:
        items: list[tuple[str, object]] = []
        port = self.start()
        while port is not None:
            node_id, port_name = port
            nexts = self.consumers(node_id, port_name)
            if not nexts:
                self.problems.append(Problem(node_id, self.groups(), "the main stream stops "
                                             "here without reaching the head"))
                return items
            if len(nexts) == 1:
                port = self._step(nexts[0], items)
            elif len(nexts) == 2:
                port = self._residual(nexts, items)
            else:
                for n in nexts:
                    self.fail(n, f"one of {len(nexts)} blocks reading the same stream; a stock "
                                 "layer has one residual branch per add")
                return items
        return items

    def groups(self) -> tuple[str, ...]:
        return tuple(k for k in self.prefix if isinstance(k, str))

    def _out(self, node: Node) -> tuple[str, str] | None:
        ports = self.graph.output_ports(node.id)
        return (node.id, ports[0].name) if ports else None

    def _step(self, node: Node, items: list) -> tuple[str, str] | None:
        """One block in the stream's straight line; returns the port the stream leaves by."""
        if node.id == self.sink:
            if node.type != GROUP_OUTPUT:
                items.append(("head", self.at(node)))
            return None
        if node.type in PASS_THROUGH:
            return self._out(node)
        simple = {bt.TOKEN_EMBEDDING: "embed", bt.POSITIONAL_ENCODING: "pos", bt.NORM: "norm"}
        if node.type in simple:
            items.append((simple[node.type], self.at(node)))
            return self._out(node)
        if node.type == GROUP:
            return self._group(node, items)
        if node.type in MIXERS:
            self.fail(node, "this block's output replaces the stream instead of being added to "
                            "it (no residual connection)", "wire it through an Add with the skip")
        else:
            self.fail(node, f"blocks of type '{node.type}' have no counterpart in a stock "
                            "transformer", "export it with --format pytorch (a standalone "
                            "model.py) or --format onnx, which carry any graph")
        return None

    def _group(self, node: Node, items: list) -> tuple[str, str] | None:
        inner = node.subgraph
        outs = inner.nodes_of_type(GROUP_OUTPUT) if inner is not None else []
        if inner is None or len(outs) != 1:
            self.fail(node, "the group has no single Group outputs node")
            return None
        try:
            out_ports = self.graph.output_ports(node.id)
        except GraphError:
            out_ports = []
        if len(out_ports) != 1:
            self.fail(node, "a layer group must give exactly one output stream")
            return None
        for copy in range(int(node.typed_params().repeat)):
            reader = _StreamReader(inner, self.prefix + (node.id, copy), outs[0].id)
            items += reader.read()
            self.problems += reader.problems
        return node.id, out_ports[0].name

    def _residual(self, nexts: list[Node], items: list) -> tuple[str, str] | None:
        """The stream feeds an Add directly (the skip) and a branch that ends in that Add."""
        adds = [n for n in nexts if n.type == bt.ADD]
        if len(adds) != 1:
            for n in nexts:
                self.fail(n, "the stream splits here but not into a residual branch and its "
                             "skip connection")
            return None
        add = adds[0]
        branch_start = next(n for n in nexts if n is not add)
        chain, node = [], branch_start
        while node is not add:
            if node.type not in PASS_THROUGH:
                chain.append(node)
            out = self._out(node)
            following = self.consumers(*out) if out else []
            if len(following) != 1 or len(chain) > len(self.graph.nodes):
                self.fail(node, "the residual branch forks or ends before rejoining the stream")
                return None
            node = following[0]
        if int(add.typed_params().n_inputs) != 2:
            self.fail(add, "an Add of more than two streams has no stock counterpart")
            return None
        sub = self._sublayer(add, chain)
        if sub is not None:
            items.append(("sublayer", sub))
        return self._out(add)

    def _sublayer(self, add: Node, chain: list[Node]) -> Sublayer | None:
        norms_before, mixer, norms_after = [], None, []
        for n in chain:
            if n.type == bt.NORM:
                (norms_after if mixer is not None else norms_before).append(n)
            elif n.type in MIXERS and mixer is None:
                mixer = n
            else:
                self.fail(n, f"blocks of type '{n.type}' inside a residual branch have no "
                             "stock counterpart" if n.type not in MIXERS else
                             "two mixers in one residual branch; a stock layer has one per add")
                return None
        if mixer is None:
            self.fail(add, "this residual branch holds no attention or feed-forward block")
            return None
        if len(norms_before) > 1 or len(norms_after) > 1:
            self.fail((norms_before + norms_after)[1], "two norms in a row in one branch")
            return None
        at = self.at
        return Sublayer(at(add), at(mixer), at(norms_before[0]) if norms_before else None,
                        at(norms_after[0]) if norms_after else None)


# ------------------------------------------------------------------------------ the stack
def _assemble(items: list, problems: list[Problem], kind: str) -> Anatomy | None:
    """Checks the items read in order make embed, [pos], [norm], layers, [norm], head."""
    problems = list(problems)
    queue = list(items)

    def take(tag: str):
        if queue and queue[0][0] == tag:
            return queue.pop(0)[1]
        return None

    embed = take("embed")
    positions = take("pos")
    embed_norm = take(bt.NORM)
    blocks: list[tuple[Sublayer, At | None]] = []  # each sublayer with the norm after its add
    while queue and queue[0][0] == "sublayer":
        sub = queue.pop(0)[1]
        blocks.append((sub, take(bt.NORM)))
    head = take("head")
    for _, thing in queue:  # whatever is left is out of place
        at = thing.mixer if isinstance(thing, Sublayer) else thing
        problems.append(at.problem(f"this {at.node.type.replace('_', ' ')} sits where a stock "
                                   "transformer has none"))
    if embed is None or head is None:
        if not problems:
            problems.append(Problem("", (), "the stream does not run token input -> token "
                                    "embedding -> layers -> head"))
        return Anatomy(kind, "", embed, positions, embed_norm, [], None, head, problems)

    placement, final_norm = _placement(blocks, problems)
    layers = _pair_layers(blocks, placement, problems)
    return Anatomy(kind, placement, embed, positions, embed_norm, layers, final_norm, head,
                   problems)


def _placement(blocks, problems) -> tuple[str, At | None]:
    """The stack's norm placement, each sublayer read by graph/placement.py's rule (its norm
    before the mixer, on the mixer's output, after its Add). The norm after the last Add of a
    pre-norm stack is its final norm (GPT-2's ln_f), not a post-norm. Only pre and post have
    stock architectures: anything else is refused on the first sublayer that has another."""
    if not blocks:
        return "", None
    placements = [_sublayer_placement(s, after) for s, after in blocks[:-1]]
    last, closing = blocks[-1]
    if agreed_placement([*placements, _sublayer_placement(last, None)]) == PRE:
        return PRE, closing
    placements.append(_sublayer_placement(last, closing))
    if agreed_placement(placements) == POST:
        return POST, None
    unstocked = [i for i, p in enumerate(placements) if p not in STOCK_PLACEMENTS]
    differing = [i for i, p in enumerate(placements) if p != placements[0]]
    at = (unstocked or differing or [0])[0]
    odd, seen = blocks[at][0], placements[at]
    if at == len(blocks) - 1 and seen == MIXED:  # its after-norm read as a final norm
        seen = _sublayer_placement(last, None)
    named = f" ({PLACEMENT_NAMES[seen]}{_FORMULAS.get(seen, '')})" \
        if seen not in STOCK_PLACEMENTS else ""
    problems.append(odd.mixer.problem(
        f"this layer's norm placement{named} is neither pre-norm (GPT-2, LLaMA) nor post-norm "
        "(BERT), and no stock architecture has it", "switch the layer to pre- or post-norm"))
    return "", None


def _sublayer_placement(sub: Sublayer, after: At | None) -> str:
    return sublayer_placement(sub.pre_norm is not None, sub.out_norm is not None,
                              after is not None)


def _pair_layers(blocks, placement: str, problems) -> list[Layer]:
    layers = []
    for i in range(0, len(blocks), 2):
        (first, after1), second = blocks[i], blocks[i + 1] if i + 1 < len(blocks) else None
        if first.mixer.node.type != bt.ATTENTION:
            problems.append(first.mixer.problem("a stock layer starts with self-attention"))
            continue
        if second is None or second[0].mixer.node.type not in (bt.FEED_FORWARD, bt.MOE):
            where = second[0].mixer if second else first.mixer
            problems.append(where.problem("a stock layer follows its attention with a "
                                          "feed-forward (or MoE) sublayer"))
            continue
        (sub2, after2) = second
        if placement == PRE:
            layers.append(Layer(first.mixer, sub2.mixer, first.pre_norm, sub2.pre_norm))
        elif placement == POST:
            layers.append(Layer(first.mixer, sub2.mixer, after1, after2))
    return layers
