"""The quick switches' edits (gui/layer_switches.py: setting_edit), without a window: the button
the inspector shows checked (inspector_lines.layer_switch_rows, graph.switches) and the one
undoable rewrite a click makes. The inspector's buttons themselves are clicked in
test_feedback and tests/graph/test_switches."""
from __future__ import annotations

from tfstudio.graph import Document, Edge, kept_tidy
from tfstudio.gui.inspector_lines import layer_switch_rows
from tfstudio.gui.layer_switches import positional_scheme, setting_edit
from tfstudio.gui.summaries import node_summary
from tfstudio.presets import load_preset


def _checked(layer) -> dict[str, str]:
    """The choice each of a layer's switches shows checked."""
    return {row.key: row.current for row in layer_switch_rows(layer)}


def _switch(doc: Document, key: str, value: str, layer=None) -> None:
    """What the inspector's button does: setting_edit, run as the session runs an edit."""
    doc.execute(kept_tidy(setting_edit(doc.root, key, value, layer)))


def test_switching_a_layer_from_post_norm_to_pre_norm_rewires_it():
    doc = Document(load_preset("tiny-bert"))  # post-norm: y = Norm(x + F(x))
    layer = doc.root.node("layers").subgraph
    assert Edge("inputs", "x", "attn", "x") in layer.edges
    assert Edge("add_attn", "y", "norm_attn", "x") in layer.edges
    assert _checked(layer)["placement"] == "post"       # "post" checked, "pre" not
    _switch(doc, "placement", "pre", ((), "layers"))

    layer = doc.root.node("layers").subgraph
    # pre-norm: y = x + F(Norm(x)): the norm now sits before attention, the Add ends the branch
    attn_in = layer.edge_into("attn", "x")
    assert layer.node(attn_in.src).type == "norm"
    assert layer.edge_into(attn_in.src, "x").src == "inputs"
    assert {e.src for e in layer.in_edges("add_attn")} == {"inputs", "attn"}
    assert doc.undo_text.startswith("Switch norm placement")
    assert "pre-norm" in node_summary(doc.root.node("layers"))
    assert _checked(layer)["placement"] == "pre"
    doc.undo()
    assert Edge("add_attn", "y", "norm_attn", "x") in doc.root.node("layers").subgraph.edges


def test_positional_scheme_switch_from_the_model_page():
    doc = Document(load_preset("tiny-gpt"))  # learned positions
    assert positional_scheme(doc.root) == "learned"     # the button shown checked
    _switch(doc, "position", "rope")
    root = doc.root
    assert not root.nodes_of_type("positional_encoding")
    assert root.node("layers").subgraph.node("attn").param("position") == "rope"
    assert Edge("embed", "y", "layers", "x") in root.edges
