"""A graph's name and description follow its edits: the description is read from the graph,
the preset it came from is kept as "from tiny-gpt", and the parameter figure says when it is
partial (a graph with errors, whose Costs are unavailable)."""
from __future__ import annotations

from tfstudio.graph import Disconnect, Document, Edge, ReplaceGraph
from tfstudio.graph.compare import same_model
from tfstudio.graph.switches import set_activation, set_attention_kind, set_positional_scheme
from tfstudio.gui.file_lines import saved_meta
from tfstudio.presets import load_preset


def _edit_to_gqa_rope_swiglu(doc) -> None:
    """The edits, on an EditorSession or a plain Document."""
    layer = doc.root.node("layers").subgraph
    doc.execute(ReplaceGraph(("layers",), set_activation(set_attention_kind(layer, "gqa"),
                                                         "swiglu")))
    doc.execute(ReplaceGraph((), set_positional_scheme(doc.root, "rope")))


def test_an_edited_preset_saves_with_its_own_description_and_where_it_came_from():
    """file_lines.saved_meta, as the session saves with it (edited: the model differs from
    the one opened); saved again under another name, it still came from the preset."""
    doc = Document(load_preset("tiny-gpt"))
    original = doc.root.meta["description"]
    _edit_to_gqa_rope_swiglu(doc)
    edited = not same_model(doc.root, load_preset("tiny-gpt"))
    assert edited
    meta = saved_meta(doc.root, "my-model", edited)
    assert meta["name"] == "my-model" and meta["from"] == "tiny-gpt"
    assert "GQA 4/2 (RoPE)" in meta["description"] and "SwiGLU FFN" in meta["description"]
    assert "learned" not in meta["description"] and meta["description"] != original
    doc.root.meta.update(meta)
    assert saved_meta(doc.root, "another", True)["from"] == "tiny-gpt"


def test_an_unedited_graph_keeps_its_words():
    graph = load_preset("tiny-gpt")
    assert same_model(graph, load_preset("tiny-gpt"))
    meta = saved_meta(graph, "same", edited=False)
    assert meta == graph.meta and "from" not in meta


def test_the_model_page_describes_the_graph_as_it_is_now(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.clearSelection()
    w.inspector.rebuild()
    assert "MHA 4" in w.inspector.description.text()
    _edit_to_gqa_rope_swiglu(w.session)
    w.inspector.rebuild()
    assert "GQA 4/2" in w.inspector.description.text()
    assert "MHA 4" not in w.inspector.description.text()


def test_the_parameter_count_says_why_it_is_unavailable_while_there_are_errors(make_window):
    w = make_window(load_preset("tiny-gpt"))
    assert "unavailable" not in w.counts_label.text()
    w.session.execute(Disconnect(("layers",), Edge("norm_attn", "y", "attn", "x")))
    w.session.refresh_report()
    errors = w.session.report.errors
    assert errors >= 1
    assert (f"params unavailable: the graph has {errors} error{'s' * (errors != 1)} "
            "(see Problems)") in w.counts_label.text()
    assert w.costs.unavailable                      # and Costs says why it shows none
    w.session.undo()
    w.session.refresh_report()
    assert "unavailable" not in w.counts_label.text()


def test_the_model_page_names_the_preset_an_edited_graph_came_from(make_window, tmp_path):
    w = make_window(load_preset("tiny-gpt"))
    _edit_to_gqa_rope_swiglu(w.session)
    w.scene.clearSelection()
    w.inspector.rebuild()
    from PySide6.QtWidgets import QLabel
    text = " ".join(lab.text() for lab in w.inspector.widget().findChildren(QLabel))
    assert "before your edits (from tiny-gpt)" in text
    w.session.save(tmp_path / "mine.json")
    w.open_file(tmp_path / "mine.json")
    w.inspector.rebuild()
    text = " ".join(lab.text() for lab in w.inspector.widget().findChildren(QLabel))
    assert "From tiny-gpt" in text and "GQA 4/2" in text and "before your edits" not in text
