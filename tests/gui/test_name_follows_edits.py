"""A graph's name and description follow its edits: the description is read from the graph,
the preset it came from is kept as "from tiny-gpt", and the parameter figure says when it is
partial (a graph with errors, whose Costs are unavailable)."""
from __future__ import annotations

from tfstudio.graph import Disconnect, Document, Edge, ReplaceGraph
from tfstudio.graph.compare import same_model
from tfstudio.graph.switches import (describe_model, set_activation, set_attention_kind,
                                     set_positional_scheme)
from tfstudio.gui.cost_lines import unavailable_reason
from tfstudio.gui.editor_state import counts_text
from tfstudio.gui.file_lines import saved_meta
from tfstudio.gui.graph_report import report_on_graph
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


def test_the_model_page_describes_the_graph_as_it_is_now():
    """The model page's description is graph.switches.describe_model of the graph as it is
    (inspector._model_page shows it; the page itself is test_the_model_page_names_...)."""
    doc = Document(load_preset("tiny-gpt"))
    assert "MHA 4" in describe_model(doc.root)
    _edit_to_gqa_rope_swiglu(doc)
    assert "GQA 4/2" in describe_model(doc.root)
    assert "MHA 4" not in describe_model(doc.root)


def test_the_parameter_count_says_why_it_is_unavailable_while_there_are_errors():
    """The status bar's count (editor_state.counts_text) and the Costs panel's reason
    (cost_lines.unavailable_reason) for the report of the graph as edited; the window shows
    them in test_feedback's test_counts_say_unavailable_everywhere_at_once_under_an_error."""
    doc = Document(load_preset("tiny-gpt"))
    assert "unavailable" not in counts_text(report_on_graph(doc.root))
    assert doc.execute(Disconnect(("layers",), Edge("norm_attn", "y", "attn", "x")))
    report = report_on_graph(doc.root)
    errors = report.errors
    assert errors >= 1
    assert (f"params unavailable: the graph has {errors} error{'s' * (errors != 1)} "
            "(see Problems)") in counts_text(report)
    assert unavailable_reason(report)               # and Costs says why it shows none
    doc.undo()
    assert "unavailable" not in counts_text(report_on_graph(doc.root))


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
