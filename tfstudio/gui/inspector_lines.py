"""What the inspector's pages say, from the graph and the report (no Qt): the block's parameter
line, the K/V head choices of an attention, which layer switches a group shows, why a
positional scheme is off, and the model page's facts and origin. The lines are rich text (user
text escaped); gui/inspector.py puts them in labels and buttons."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ..graph import SetTitle, get_spec
from ..graph.switches import gqa_choices, positional_schemes_for
from . import layer_switches as switches
from .param_count import block_count, model_count_exact, unavailable
from .text import count_label, short_name


def esc(text) -> str:
    return html.escape(str(text), quote=False)


def breakable(text: str) -> str:
    """``text`` with a line break allowed after the commas, colons and equals signs of a
    long word, and every 16 letters of a longer run (a command line in a preset's
    description widened the panel past the screen at 1366x768, cutting its lines)."""
    def breaks(word: re.Match) -> str:
        marked = re.sub(r"([,:=])", "\\1\u200b", word.group(0))
        return re.sub(r"(\w{16})(?=\w)", "\\1\u200b", marked)  # an alphabet spelled out
    return re.sub(r"\S{28,}", breaks, text)


def graph_inputs(node) -> bool:
    """Whether the block takes inputs at all (a token input does not)."""
    return bool(get_spec(node.type).input_ports(node.resolved_params())) or node.is_group


def params_line(report, path: tuple[str, ...], node) -> str | None:
    """The block's parameter count as the latest report has it; with errors, why there is
    none (as the status bar and the block say); before its input is wired, when it will be.
    None when the report has no count for it."""
    params = report.node_params(path, node.id)
    if params is None:
        return None
    if report.errors:
        return f"Parameters: unavailable: {esc(unavailable(report.errors))}"
    shapes_known = bool(report.shapes.input_shapes(node.id, path))
    if params or shapes_known or not graph_inputs(node):
        return f"Parameters: <b>{esc(block_count(node, params))}</b> ({params:,})"
    return "Parameters: counted once its input is wired (its width comes from what feeds it)"


def together_line(report, path: tuple[str, ...], ids) -> str:
    """The selected blocks' parameters added up; with errors, why there is no count (as one
    block's line says: the counts of a graph that does not build are not its model's)."""
    if report.errors:
        return f"Parameters together: unavailable: {esc(unavailable(report.errors))}"
    total = sum(report.node_params(path, node_id) or 0 for node_id in ids)
    return f"Parameters together: <b>{count_label(total)}</b>"


def problem_lines(report, path: tuple[str, ...], node_id: str) -> list[str]:
    """The block's problems and those inside it (a group's), each with its fix; one deeper
    than the level shown says where inside."""
    mine = [d for d in report.diagnostics_at(path) if d.node_id == node_id]
    mine += report.diagnostics_below(path, node_id)
    lines = []
    for d in mine:
        colour = "#d93a34" if d.severity == "error" else "#c98210"
        where = "" if tuple(d.path) == tuple(path) else f" (inside, at {esc(d.where)})"
        lines.append(f"<span style='color:{colour}'><b>{d.severity.capitalize()}</b>"
                     f"{where}: {esc(d.message)}</span><br><b>Fix:</b> {esc(d.hint)}")
    return lines


def kv_choices_text(heads: int) -> str:
    """What K/V head counts make ``heads`` heads MHA, GQA or MQA (a heads change keeps the
    kind; this says which counts each kind allows)."""
    choices = gqa_choices(heads)
    gqa = (f"GQA: {', '.join(map(str, choices))}" if choices
           else f"GQA: none ({heads} heads cannot be split into groups)")
    return f"K/V heads for {heads} heads: MHA {heads} · {gqa} · MQA 1"


@dataclass(frozen=True)
class SwitchRow:
    key: str                  # a key of layer_switches.SWITCH_TITLES
    title: str
    choices: dict[str, str]   # value -> button label
    current: str              # the layer's value now
    tip: str


def layer_switch_rows(layer) -> list[SwitchRow]:
    """The switches a layer group's inside offers, each with its current value; a part the
    layer lacks (no attention, no residuals) has no row."""
    rows = [
        ("attention", "Attention", switches.ATTENTION_KINDS, switches.attention_kind(layer),
         "MHA: every head has its own K/V. GQA: groups of heads share K/V. MQA: all heads "
         "share one K/V (smallest KV cache)."),
        ("ffn", "Feed-forward", switches.FFN_KINDS, switches.ffn_kind(layer),
         "A dense FFN, or a mixture of experts with a router."),
        ("activation", "Activation", switches.ACTIVATIONS, switches.activation_kind(layer),
         "ReLU, GELU, SiLU: act(x W1) W2. GLU, GEGLU, SwiGLU: gated, (act(x W) * x V) W2, "
         "three matrices instead of two (SwiGLU: LLaMA, Qwen)."),
        ("placement", "Norm placement", switches.PLACEMENTS, switches.placement(layer),
         "Pre: x + F(Norm(x)) (GPT-2, LLaMA). Post: Norm(x + F(x)) (original Transformer, "
         "BERT). In res: x + Norm(F(x)), post-norm inside the residual. Both (sandwich): "
         "a norm before and after F, inside the residual."),
    ]
    return [SwitchRow(*row) for row in rows if row[3] is not None]


def position_refusals(root) -> dict[str, str]:
    """Each positional scheme this model cannot take, with the sentence that says why."""
    possible = positional_schemes_for(root)
    return {scheme: f"{label} acts inside self-attention, and this model has none"
            for scheme, label in switches.POSITION_SCHEMES.items() if scheme not in possible}


def origin_line(meta: dict, edited: bool) -> str | None:
    """Where the model came from: the description it was loaded with, marked as the words of
    the model before the edits once there are edits (they may no longer hold)."""
    origin = short_name(meta.get("from") or meta.get("name") or "the file")
    if edited and meta.get("description"):
        return (f"<i>As loaded, before your edits (from {esc(origin)}):</i> "
                + breakable(esc(str(meta["description"]))))
    if meta.get("from"):
        return f"<i>From {esc(short_name(meta['from']))}</i>"
    if meta.get("description"):
        return breakable(esc(str(meta["description"])))
    return None


def model_facts(root, report, path: tuple[str, ...]) -> list[str]:
    """The model page's facts: positions, the one count (with errors, why there is none),
    family, context length, and the group being edited inside."""
    meta = root.meta
    facts = [f"Positions now: <b>{esc(str(switches.positional_scheme(root)))}</b>"]
    if model_count_exact(report):
        facts.append(f"Parameters now: <b>{esc(model_count_exact(report))}</b>")
    if meta.get("family"):
        facts.append(f"Family: <b>{esc(str(meta['family']))}</b>")
    if meta.get("context_length"):
        facts.append(f"Context length: <b>{meta['context_length']}</b>")
    if path:
        facts.append("Editing inside: <b>" + esc(" › ".join(path)) + "</b>")
    return facts


def rename_edit(graph, path: tuple[str, ...], node_id: str, text: str) -> SetTitle | None:
    """The edit the inspector's name field makes for ``text`` (spaces around it dropped); None
    when that is the name already shown (no undo step for nothing)."""
    text = text.strip()
    return None if text == graph.node(node_id).label else SetTitle(path, node_id, text)


def page_for(ids, graph) -> str:
    """The inspector's page for the blocks inspected at a level: "block" for one the level
    holds, "blocks" for several, else "model" (nothing selected, or a block an edit just
    removed)."""
    if len(ids) == 1 and ids[0] in graph:
        return "block"
    if len(ids) > 1:
        return "blocks"
    return "model"
