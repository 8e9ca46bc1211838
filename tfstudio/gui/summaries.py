"""The one-line summary a node shows under its ports, and its tooltip text (no Qt).

The summary names the few parameters that make a block what it is ("4 heads / 2 kv · causal ·
rope"), so a whole architecture reads off the canvas without opening the inspector.
"""
from __future__ import annotations

import html

from ..graph import Graph, GraphError, Node, get_spec
from ..graph.switches import layer_summary
from .text import count_label, param_value_label


def node_summary(node: Node, graph: Graph | None = None) -> str:
    p = node.resolved_params()
    t = node.type
    if t == "group":
        return group_summary(node)
    if t == "token_input":
        return f"role: {p['role']}"
    if t == "token_embedding":
        return f"{p['vocab_size']} tokens → {p['d_model']} wide" + (" · ×√d" if p["scale"] else "")
    if t == "positional_encoding":
        return p["scheme"] + (f" · {p['max_len']} positions" if p["scheme"] == "learned" else "")
    if t == "attention":
        parts = [f"{p['heads']} heads"
                 + (f" / {p['kv_heads']} kv" if p["kv_heads"] != p["heads"] else "")]
        parts.append("causal" if p["causal"] else "bidirectional")
        if p["position"] != "none":
            parts.append(p["position"])
        if p["window"]:
            parts.append(f"window {p['window']}")
        return " · ".join(parts)
    if t == "cross_attention":
        return f"{p['heads']} heads" + (f" / {p['kv_heads']} kv" if p["kv_heads"] != p["heads"]
                                        else "") + " · reads memory"
    if t == "feed_forward":
        return f"{p['activation']} · d_ff {p['d_ff']}"
    if t == "moe":
        return f"{p['experts']} experts · top-{p['top_k']} · {p['activation']}"
    if t == "norm":
        return p["kind"]
    if t == "add":
        return "residual sum"
    if t == "dropout":
        return f"p = {p['dropout']:g}"
    if t in ("lm_head", "mlm_head", "seq2seq_head"):
        return f"{p['vocab_size']} classes" + (" · tied" if p["tie"] else "")
    if t == "rnn":
        return f"{p['cell']} · {p['hidden_size']} wide" + (
            f" · {p['layers']} layers" if p["layers"] > 1 else "")
    if t in ("group_input", "group_output"):
        return ""
    spec = get_spec(t)
    return " · ".join(f"{q.title} {param_value_label(p[q.name])}" for q in spec.params[:2])


def group_summary(node: Node) -> str:
    """What a layer group holds: attention kind, FFN or MoE, norm placement."""
    try:
        return layer_summary(node)
    except (GraphError, KeyError, ValueError):  # a half-built group still shows its size
        inner = [n for n in (node.subgraph.nodes.values() if node.subgraph else ())
                 if n.type not in ("group_input", "group_output")]
        return f"{len(inner)} blocks"


def node_tooltip(node: Node, diagnostics=(), params: int | None = None) -> str:
    """Rich-text tooltip: what the block is, then each problem with its fix."""
    spec = get_spec(node.type)
    e = html.escape
    lines = [f"<b>{e(node.label)}</b> <span style='color:gray'>({e(spec.title)}, "
             f"id {e(node.id)})</span>", f"<p style='margin-top:4px'>{e(spec.description)}</p>"]
    if params:
        lines.append(f"<p>{e(count_label(params))} parameters</p>")
    for d in diagnostics:
        colour = "#d93a34" if d.severity == "error" else "#c98210"
        lines.append(f"<p style='color:{colour}'><b>{e(d.severity.capitalize())}:</b> "
                     f"{e(d.message)}</p>")
        if getattr(d, "hint", ""):
            lines.append(f"<p><b>Fix:</b> {e(d.hint)}</p>")
    return "<qt>" + "".join(lines) + "</qt>"
