"""The one-line summary a node shows under its ports, its tooltip and its ports' (no Qt).

The summary names the few parameters that make a block what it is ("4 heads / 2 kv · causal ·
rope"), so a whole architecture reads off the canvas without opening the inspector. Each block
type writes its own (``BlockSpec.summary`` in its schema module).
"""
from __future__ import annotations

import html
from collections.abc import Iterable

from ..graph import Graph, Node, get_spec
from ..graph.model import kind_words
from ..graph.schema import PortSpec
from .text import count_label, shape_label


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


def port_tooltip(spec: PortSpec, is_input: bool, shape: str | None) -> str:
    """Rich-text tooltip of a port: its name, what it carries, its shape when known (else
    that it is known once wired), and how to wire it."""
    e = html.escape
    side = "input" if is_input else "output"
    lines = [f"<b>{e(spec.name)}</b> ({side}): {e(kind_words(spec.kind))}"]
    if spec.description:
        lines.append(e(spec.description))
    lines.append(f"shape: {e(shape)}" if shape else "shape: known once wired")
    lines.append("<i>Drag to " + ("an output" if is_input else "an input") + " to wire it"
                 + ("; drag its wire away to move it" if is_input else "") + ".</i>")
    return "<qt>" + "<br>".join(lines) + "</qt>"


def port_shapes(shapes, path: tuple[str, ...], node_id: str, inputs: Iterable[str],
                outputs: Iterable[str]) -> dict[tuple[bool, str], str | None]:
    """What the ports named ``inputs`` and ``outputs`` of block ``node_id`` (at level ``path``)
    say of their shape, keyed (is_input, port name): "B×T×64" where the shapes reach the port,
    else None (its tooltip then says the shape is known once wired)."""
    ins = shapes.input_shapes(node_id, path)
    outs = shapes.output_shapes(node_id, path)
    shown = {(True, name): ins.get(name) for name in inputs}
    shown.update({(False, name): outs.get(name) for name in outputs})
    return {key: shape_label(shape) if shape else None for key, shape in shown.items()}


def wire_label(shapes, edge, path: tuple[str, ...]) -> str:
    """The words on a wire: the shape it carries ("B×T×64"), or none when the shapes are not
    known there (the graph does not compile up to it)."""
    shape = shapes.edge_shape(edge, path)
    return shape_label(shape) if shape else ""
