"""Quick switches: one-click architecture changes as pure functions returning a new graph.

The editor wraps each result in a ``ReplaceGraph`` command, so a switch is one undo step. Each
switch changes only what it names: attention kind (MHA / GQA / MQA), dense FFN vs mixture of
experts, and the positional scheme; ``layer_summary`` names a layer for the group node.
"""
from __future__ import annotations

from . import block_types as bt
from .model import GROUP, Edge, Graph, Node
from .placement import PLACEMENT_NAMES, identify_placement
from .schema import get_spec

ATTENTION_KINDS = ("mha", "gqa", "mqa")
FFN_KINDS = ("ffn", "moe")  # the switch's own words, not type names
POSITIONAL_SCHEMES = ("sinusoidal", "learned", "rope", "alibi", "none")
_ATTENTION_TYPES = (bt.ATTENTION, bt.CROSS_ATTENTION)


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


def attention_kind(heads: int, kv_heads: int) -> str:
    """"mha" (a K/V head per query head), "mqa" (one K/V head for all) or "gqa" (between)."""
    return "mha" if kv_heads == heads else "mqa" if kv_heads == 1 else "gqa"


def set_attention_kind(layer: Graph, kind: str) -> Graph:
    """Every attention block in ``layer`` (any depth) as "mha" (kv_heads = heads), "gqa"
    (kv_heads = heads // 2 or the nearest divisor) or "mqa" (kv_heads = 1)."""
    _choose(kind, ATTENTION_KINDS, "attention kind")
    out = layer.clone()
    for node in _blocks(out, *_ATTENTION_TYPES):
        heads = int(node.param("heads"))
        node.params["kv_heads"] = {"mha": heads, "mqa": 1, "gqa": gqa_kv_heads(heads)}[kind]
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
        kept.setdefault("activation", node.param("activation"))  # defaults differ by block
        kept.setdefault("bias", node.param("bias"))
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
    out = root.clone()
    absolute = scheme in ("sinusoidal", "learned")
    for node in _blocks(out, bt.ATTENTION):
        node.params["position"] = scheme if scheme in ("rope", "alibi") else "none"
    _set_absolute(out, scheme if absolute else None, _max_len(root))
    return out


def _max_len(root: Graph) -> int:
    """Rows for a new learned table: an existing table's, else the context length."""
    tables = [n for _, n in root.walk() if n.type == bt.POSITIONAL_ENCODING]
    if tables:
        return max(int(n.param("max_len")) for n in tables)
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


# ----------------------------------------------------------------------- naming a layer
_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU", "silu": "SiLU",
                     "glu": "GLU", "geglu": "GEGLU", "swiglu": "SwiGLU"}


def _attention_name(node: Node) -> str:
    heads, kv = int(node.param("heads")), int(node.param("kv_heads"))
    if kv == heads:
        text = f"MHA {heads}"
    elif kv == 1:
        text = f"MQA {heads}/1"
    else:
        text = f"GQA {heads}/{kv}"
    if node.type == bt.CROSS_ATTENTION:
        return "cross " + text
    extras = [f"window {node.param('window')}"] if node.param("window") else []
    if node.param("position") != "none":
        extras.append(node.param("position").replace("rope", "RoPE").replace("alibi", "ALiBi"))
    if not node.param("causal"):
        extras.append("bidirectional")
    return text + (f" ({', '.join(extras)})" if extras else "")


def _mixer_name(node: Node) -> str | None:
    if node.type in _ATTENTION_TYPES:
        return _attention_name(node)
    if node.type == bt.FEED_FORWARD:
        return f"{_ACTIVATION_NAMES.get(node.param('activation'), node.param('activation'))} FFN"
    if node.type == bt.MOE:
        act = _ACTIVATION_NAMES.get(node.param("activation"), node.param("activation"))
        return f"MoE {node.param('experts')}x top-{node.param('top_k')} {act}"
    if node.type == bt.RNN:
        return f"{str(node.param('cell')).upper()} {node.param('hidden_size')}"
    return None


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


__all__ = ["ATTENTION_KINDS", "FFN_KINDS", "POSITIONAL_SCHEMES", "attention_kind",
           "gqa_kv_heads", "set_attention_kind", "set_ffn_kind", "set_positional_scheme", "layer_summary"]
