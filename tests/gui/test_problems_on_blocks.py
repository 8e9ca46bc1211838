"""Problems on the block that has them: a problem inside an open layer frame is drawn on the
small block that has it (not only as a badge on the frame's corner), and goes when it is
fixed; messages name what a port takes in the user's words, not the internal kind."""
from __future__ import annotations

from tfstudio.graph import Disconnect, Edge, validate
from tfstudio.presets import load_preset


def _minis(w, group: str) -> dict:
    return {m.node.id: m for m in w.scene.node_items[group]._minis}


def test_a_problem_inside_an_open_layer_is_drawn_on_its_block(make_window):
    w = make_window(load_preset("tiny-gpt"))
    assert all(m.severity is None for m in _minis(w, "layers").values())
    wire = Edge("norm_attn", "y", "attn", "x")
    assert w.session.execute(Disconnect(("layers",), wire))
    w.session.refresh_report()
    minis = _minis(w, "layers")
    assert minis["attn"].severity == "error"                   # the block that lost its input
    expected = {}
    for d in w.session.report.diagnostics_at(("layers",)):
        if expected.get(d.node_id) != "error":
            expected[d.node_id] = d.severity
    assert {n: m.severity for n, m in minis.items() if m.severity} == expected
    assert expected["norm_attn"] == "warning"                  # its output now unused
    w.session.undo()
    w.session.refresh_report()
    assert all(m.severity is None for m in _minis(w, "layers").values())


def test_an_unconnected_input_says_what_it_takes_without_internal_words():
    graph = load_preset("tiny-gpt")
    graph.remove_edge(Edge("final_norm", "y", "head", "x"))
    (d,) = [d for d in validate(graph) if d.code == "unconnected_input"]
    assert "(hidden)" not in d.message and "hidden" not in d.hint
    assert "stream of token vectors" in d.message
