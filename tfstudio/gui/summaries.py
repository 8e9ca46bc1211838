"""The one-line summary a node shows under its ports, and its tooltip text (no Qt).

The summary names the few parameters that make a block what it is ("4 heads / 2 kv · causal ·
rope"), so a whole architecture reads off the canvas without opening the inspector. Each block
type writes its own (``BlockSpec.summary`` in its schema module).
"""
from __future__ import annotations

import html

from ..graph import Graph, Node, get_spec
from .text import count_label


def node_summary(node: Node, graph: Graph | None = None) -> str:
    """The block type's own summary (``BlockSpec.summary``), e.g. '4 heads / 2 kv · causal'."""
    return get_spec(node.type).summarize(node)


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
