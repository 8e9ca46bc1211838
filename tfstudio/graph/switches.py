"""Quick switches: one-click architecture changes as pure functions returning a new graph,
and the one reading of each switch's current value.

The editor wraps each result in a ``ReplaceGraph`` command, so a switch is one undo step. Each
switch changes only what it names: attention kind (MHA / GQA / MQA), dense FFN vs mixture of
experts, the FFN's activation, the norm kind, and the positional scheme (norm placement lives
in ``placement.py``); ``layer_summary`` names a layer for the group node. Each meaning is
classified here once (``attention_kind_of``, ``activation_family``): the inspector, the layer
header and the experiments' variants all ask these functions.
"""
from __future__ import annotations

from . import block_types as bt
from .kinds import (ACTIVATION_FAMILIES, ACTIVATION_LABELS, ATTENTION_KINDS, FFN_KINDS, GATED,
                    NORM_KIND_LABELS, NORM_KINDS, PLACEMENT_NAMES, POSITIONAL_SCHEME_LABELS,
                    POSITIONAL_SCHEMES)
from .model import GROUP, Edge, Graph, Node
from .placement import identify_placement, residual_structure, rewrite_placement
from .schema import get_spec

_ATTENTION_TYPES = bt.ATTENTION_TYPES
_FFN_TYPES = bt.FFN_TYPES
# a level's meta key: {attention id: heads per K/V head} the user chose before a head count
# that cannot be grouped made GQA into MQA (``edit_rules.heads_edit`` restores it)
KV_GROUPS = "kv_groups"


def _blocks(graph: Graph, *types: str):
    """Every node of ``types`` at every depth of ``graph`` (a copy's nodes, to edit in place)."""
    return [node for _, node in graph.walk() if node.type in types]


def _choose(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got '{value}'")
    return value


def gqa_kv_heads(heads: int) -> int:
    """K/V heads for grouped-query attention: heads // 2 when that divides heads, else the
    divisor of heads nearest to heads / 2 (preferring fewer K/V heads on a tie)."""
    if heads % 2 == 0:
        return heads // 2
    small = [k for k in range(1, int(heads ** 0.5) + 1) if heads % k == 0]
    divisors = set(small + [heads // k for k in small])
    return min(divisors, key=lambda k: (abs(k - heads / 2), k))


def attention_kind_of(heads: int, kv_heads: int) -> str:
    """"mha" (a K/V head per head), "mqa" (one K/V head shared by all) or "gqa" (groups)."""
    if kv_heads == heads:
        return "mha"
    return "mqa" if kv_heads == 1 else "gqa"


def kv_heads_for(heads: int, kv_heads: int, new_heads: int) -> int:
    """K/V heads when an attention of ``heads`` / ``kv_heads`` gets ``new_heads`` heads,
    keeping its kind: MHA stays MHA, MQA stays MQA, GQA keeps its group size (heads per K/V
    head) when it divides ``new_heads``, else takes :func:`gqa_kv_heads`."""
    kind = attention_kind_of(heads, kv_heads)
    if kind == "mha" or kv_heads > heads:  # more K/V heads than heads (set raw): a head each
        return new_heads
    if kind == "mqa":
        return 1
    group = heads // kv_heads
    if new_heads % group == 0 and 1 < new_heads // group < new_heads:
        return new_heads // group
    return gqa_kv_heads(new_heads)


def gqa_choices(heads: int) -> list[int]:
    """The K/V head counts that make ``heads`` grouped-query attention (divisors strictly
    between 1 and heads); empty for a prime or 1."""
    return [k for k in range(2, heads) if heads % k == 0]


def set_attention_kind(layer: Graph, kind: str) -> Graph:
    """Every attention block in ``layer`` (any depth) as "mha" (kv_heads = heads), "gqa"
    (kv_heads = heads // 2 or the nearest divisor) or "mqa" (kv_heads = 1)."""
    _choose(kind, ATTENTION_KINDS, "attention kind")
    out = layer.clone()
    for node in _blocks(out, *_ATTENTION_TYPES):
        heads = int(node.typed_params().heads)
        node.params["kv_heads"] = {"mha": heads, "mqa": 1, "gqa": gqa_kv_heads(heads)}[kind]
    out.meta.pop(KV_GROUPS, None)  # the user chose the kind: no earlier GQA to bring back
    for _, node in out.walk():
        if node.subgraph is not None:
            node.subgraph.meta.pop(KV_GROUPS, None)
    return out


def set_ffn_kind(layer: Graph, kind: str) -> Graph:
    """Every FFN in ``layer`` as a dense "ffn" or a "moe", keeping the node id, position, title,
    d_ff, activation and bias (a new MoE takes the block's default experts and top-k)."""
    _choose(kind, FFN_KINDS, "ffn kind")
    target = bt.FEED_FORWARD if kind == "ffn" else bt.MOE
    out = layer.clone()
    for node in _blocks(out, bt.FEED_FORWARD, bt.MOE):
        if node.type == target:
            continue
        spec = get_spec(target)
        kept = {k: v for k, v in node.params.items() if k in ("d_ff", "activation", "bias")}
        ffn = node.typed_params()
        kept.setdefault("activation", ffn.activation)  # defaults differ by block
        kept.setdefault("bias", ffn.bias)
        node.type = target
        node.params = {k: spec.param(k).coerce(v) for k, v in kept.items()}
    return out


def set_positional_scheme(root: Graph, scheme: str) -> Graph:
    """The whole model on one positional scheme.

    sinusoidal / learned: a positional-encoding block after every token embedding, attention
    without in-attention positions. rope / alibi: no positional-encoding blocks (each one is
    removed and its input wired straight to its readers), every self-attention using the
    scheme. none: neither (the model then sees a bag of tokens, except through causality).

    Sinusoidal also scales the token embeddings by sqrt(d), as the tiny-transformer preset
    does: its fixed vectors have norm sqrt(d / 2) (5.66 at d = 64) and would drown token
    vectors of std 0.02 (norm ~0.16), leaving the variant at unigram level for 150 steps and
    behind a bigram counter at 400. The other schemes keep the embeddings' scale as it was."""
    _choose(scheme, POSITIONAL_SCHEMES, "positional scheme")
    if scheme not in positional_schemes_for(root):
        raise ValueError(f"{scheme} acts inside self-attention, and this model has no "
                         "self-attention; choose sinusoidal, learned or none")
    out = root.clone()
    absolute = scheme in ("sinusoidal", "learned")
    for node in _blocks(out, bt.ATTENTION):
        node.params["position"] = scheme if scheme in ("rope", "alibi") else "none"
    _set_absolute(out, scheme if absolute else None, _max_len(root))
    return out


def positional_schemes_for(root: Graph) -> tuple[str, ...]:
    """The schemes that can encode this model's positions: RoPE and ALiBi act inside
    self-attention, so a model without it (an LSTM) has only the added ones and none."""
    if _blocks(root, bt.ATTENTION):
        return POSITIONAL_SCHEMES
    return tuple(s for s in POSITIONAL_SCHEMES if s not in ("rope", "alibi"))


def _max_len(root: Graph) -> int:
    """Rows for a new learned table: an existing table's, else the context length."""
    tables = [n for _, n in root.walk() if n.type == bt.POSITIONAL_ENCODING]
    if tables:
        return max(int(n.typed_params().max_len) for n in tables)
    context = root.meta.get("context_length")
    if isinstance(context, int) and not isinstance(context, bool) and context > 0:
        return context
    return int(get_spec(bt.POSITIONAL_ENCODING).param("max_len").default)


def _set_absolute(graph: Graph, scheme: str | None, max_len: int) -> None:
    for node in list(graph.nodes.values()):
        if node.subgraph is not None:
            _set_absolute(node.subgraph, scheme, max_len)
    for emb in graph.nodes_of_type(bt.TOKEN_EMBEDDING):
        if scheme == "sinusoidal":
            emb.params["scale"] = True  # see set_positional_scheme
        readers = graph.out_edges(emb.id)
        pos = [graph.nodes[e.dst] for e in readers
               if graph.nodes[e.dst].type == bt.POSITIONAL_ENCODING]
        if scheme is None:
            for p in pos:
                _splice_out(graph, p.id)
        elif pos:
            for p in pos:
                p.params["scheme"] = scheme
        else:
            _insert_after(graph, emb, scheme, max_len)


def _splice_out(graph: Graph, node_id: str) -> None:
    """Remove a one-in one-out block, wiring its input source to everything it fed."""
    feed = graph.edge_into(node_id, "x")
    _, edges = graph.remove_node(node_id)
    if feed is None:
        return
    for e in edges:
        if e.src == node_id:
            graph.add_edge(Edge(feed.src, feed.src_port, e.dst, e.dst_port))


def _insert_after(graph: Graph, emb: Node, scheme: str, max_len: int) -> None:
    readers = graph.out_edges(emb.id)
    base = emb.id[: -len("embed")] if emb.id.endswith("embed") else emb.id + "_"
    pid = base + "pos" if base + "pos" not in graph.nodes else graph.new_id(base + "pos")
    params = {"scheme": scheme, "max_len": max_len}
    graph.add_node(Node(pid, bt.POSITIONAL_ENCODING, params,
                        (emb.pos[0] + 115.0, emb.pos[1] + 60.0)))
    for e in readers:
        graph.remove_edge(e)
        graph.add_edge(Edge(pid, "y", e.dst, e.dst_port))
    graph.add_edge(Edge(emb.id, "y", pid, "x"))
    order = list(graph.nodes)  # keep the new block next to its embedding in the node order
    order.remove(pid)
    order.insert(order.index(emb.id) + 1, pid)
    graph.nodes = {nid: graph.nodes[nid] for nid in order}


def activation_family(activation: str) -> str:
    """The activation switch's word for ``activation`` (gelu_tanh is a GELU)."""
    return "gelu" if activation == "gelu_tanh" else activation


def set_activation(layer: Graph, family: str, equal_params: bool = True) -> Graph:
    """Every FFN and MoE in ``layer`` on activation ``family``. With ``equal_params`` a
    switch between a plain and a gated kind rescales d_ff so the block keeps (to rounding)
    its parameter count: a gated FFN has three d x d_ff matrices, a plain one two, so plain
    to gated takes d_ff x 2/3 and gated to plain d_ff x 3/2 (LLaMA's 8/3 d_model)."""
    _choose(family, ACTIVATION_FAMILIES, "activation")
    out = layer.clone()
    for node in _blocks(out, *_FFN_TYPES):
        old = str(node.typed_params().activation)
        if activation_family(old) == family:
            continue
        if equal_params and (old in GATED) != (family in GATED):
            d_ff = int(node.typed_params().d_ff)
            node.params["d_ff"] = max(1, round(d_ff * 2 / 3 if family in GATED else d_ff * 3 / 2))
        node.params["activation"] = family
    return out


def set_norm_kind(graph: Graph, kind: str) -> Graph:
    """Every norm in ``graph`` (any depth: a whole model's, final norm included) as
    "layernorm" or "rmsnorm"."""
    _choose(kind, NORM_KINDS, "norm kind")
    out = graph.clone()
    for node in _blocks(out, bt.NORM):
        node.params["kind"] = kind
    return out


# ----------------------------------------------------------------------- reading the switches
def _agreed(values) -> str | None:
    """The one value when all agree, "mixed" when not, None when there are none."""
    kinds = set(values)
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else "mixed"


def attention_kind(layer: Graph) -> str | None:
    """"mha", "gqa" or "mqa" when every attention block agrees, "mixed" when not, None when
    the layer has no attention."""
    return _agreed(attention_kind_of(int(n.typed_params().heads),
                                     int(n.typed_params().kv_heads))
                   for n in _blocks(layer, *_ATTENTION_TYPES))


def ffn_kind(layer: Graph) -> str | None:
    return _agreed("moe" if n.type == bt.MOE else "ffn" for n in _blocks(layer, *_FFN_TYPES))


def activation_kind(layer: Graph) -> str | None:
    return _agreed(activation_family(str(n.typed_params().activation))
                   for n in _blocks(layer, *_FFN_TYPES))


def norm_kind(graph: Graph) -> str | None:
    return _agreed(str(n.typed_params().kind) for n in _blocks(graph, bt.NORM))


def placement(layer: Graph) -> str | None:
    """The layer's norm placement ("mixed"/"none" select no button), None without residuals."""
    structure = residual_structure(layer)
    if structure is None or not structure.sublayers:
        return None
    return identify_placement(layer)


def positional_scheme(root: Graph) -> str:
    """How the whole model encodes positions: in attention (rope, alibi) or added (sinusoidal,
    learned); "none" when it does neither."""
    for node in _blocks(root, bt.ATTENTION):
        if node.typed_params().position != "none":
            return node.typed_params().position
    for node in _blocks(root, bt.POSITIONAL_ENCODING):
        if node.typed_params().scheme != "none":
            return node.typed_params().scheme
    return "none"


LAYER_SWITCHES = ("attention", "ffn", "activation", "placement")


def switch_layer(layer: Graph, key: str, choice: str, equal_params: bool = True) -> Graph:
    """The layer with switch ``key`` (one of LAYER_SWITCHES) set to ``choice``."""
    if key == "attention":
        return set_attention_kind(layer, choice)
    if key == "ffn":
        return set_ffn_kind(layer, choice)
    if key == "activation":
        return set_activation(layer, choice, equal_params)
    if key == "placement":
        return rewrite_placement(layer, choice)
    raise ValueError(f"unknown switch '{key}'; use {', '.join(LAYER_SWITCHES)}")


# ----------------------------------------------------------------------- naming a layer


def _attention_name(node: Node) -> str:
    p = node.typed_params()
    heads, kv = int(p.heads), int(p.kv_heads)
    kind = attention_kind_of(heads, kv)
    text = {"mha": f"MHA {heads}", "mqa": f"MQA {heads}/1", "gqa": f"GQA {heads}/{kv}"}[kind]
    if node.type == bt.CROSS_ATTENTION:
        return "cross " + text
    extras = [f"window {p.window}"] if p.window else []
    if p.position != "none":
        extras.append(POSITIONAL_SCHEME_LABELS.get(p.position, p.position))
    if not p.causal:
        extras.append("bidirectional")
    return text + (f" ({', '.join(extras)})" if extras else "")


def _mixer_name(node: Node) -> str | None:
    if node.type in _ATTENTION_TYPES:
        return _attention_name(node)
    if node.type not in (bt.FEED_FORWARD, bt.MOE, bt.RNN):
        return None
    p = node.typed_params()
    if node.type == bt.FEED_FORWARD:
        return f"{ACTIVATION_LABELS.get(p.activation, p.activation)} FFN"
    if node.type == bt.MOE:
        act = ACTIVATION_LABELS.get(p.activation, p.activation)
        return f"MoE {p.experts}x top-{p.top_k} {act}"
    return f"{str(p.cell).upper()} {p.hidden_size}"  # an RNN


def describe_model(root: Graph) -> str:
    """The model in one line, read from the graph (so it follows every edit): each layer
    group's repeat and summary, then positions and norm kind, e.g. "2 x decoder layer (GQA
    4/2 (RoPE) · SwiGLU FFN · pre-norm); RMSNorm"."""
    parts = []
    for node in root:
        if node.is_group:
            repeat = node.typed_params().repeat or 1
            parts.append(f"{repeat} x {node.label} ({layer_summary(node)})")
    scheme = positional_scheme(root)
    if scheme in ("sinusoidal", "learned"):
        parts.append(f"{scheme} positions")
    elif scheme == "none":
        parts.append("no positions")
    kind = norm_kind(root)
    if kind in NORM_KINDS:
        parts.append(NORM_KIND_LABELS[kind])
    return "; ".join(parts) or "no layers yet"


def layer_summary(group_node: Node) -> str:
    """A one-line name for a layer group, e.g. "GQA 8/2 · SwiGLU FFN · pre-norm"."""
    inside = group_node.subgraph
    if inside is None:
        return "empty group"
    names: list[str] = []
    for node in inside:
        if node.type == GROUP:
            name = layer_summary(node)
        else:
            name = _mixer_name(node)
        if name and name not in names:
            names.append(name)
    placement = identify_placement(inside)
    if placement != "none" or not names:
        names.append(PLACEMENT_NAMES[placement])
    return " · ".join(names)


__all__ = ["ATTENTION_KINDS", "FFN_KINDS", "POSITIONAL_SCHEMES", "ACTIVATION_FAMILIES", "GATED",
           "NORM_KINDS", "LAYER_SWITCHES", "gqa_kv_heads", "gqa_choices", "kv_heads_for",
           "attention_kind_of", "activation_family", "set_attention_kind", "set_ffn_kind",
           "set_activation", "set_norm_kind", "set_positional_scheme", "switch_layer",
           "attention_kind", "ffn_kind", "activation_kind", "norm_kind", "placement",
           "positional_scheme", "layer_summary", "describe_model"]
