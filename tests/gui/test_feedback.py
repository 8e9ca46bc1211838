"""Always-on feedback: diagnostics on the block and in the problems panel, shapes on wires,
the cost panel's numbers and the quick switches' rewrites."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tfstudio.gui.cost_lines import memory_view
from tfstudio.gui.text import bytes_label, count_label, flops_label, shape_label
from tfstudio.presets import load_preset


def test_heads_that_do_not_divide_d_model_show_on_the_block_and_in_the_problems(make_window,
                                                                                 qtbot):
    w = make_window(load_preset("tiny-gpt"))  # d_model 64, 4 heads
    w.scene.enter_group("layers")
    w.scene.select_nodes(["attn"])
    w.inspector.rebuild()
    w.inspector.editors["kv_heads"].widget.setValue(1)   # keep K/V heads valid (MQA)
    w.inspector.editors["heads"].widget.setValue(3)      # 64 / 3 is not whole
    w.session.refresh_report()                          # (the timer does this at once)

    item = w.scene.node_items["attn"]
    assert item.severity == "error"
    assert any("64 / 3" in d.message for d in item.diagnostics)
    assert "Fix:" in item.toolTip() and "divisor of 64" in item.toolTip()
    # the inspector lists it with its fix (it rebuilds as soon as the event loop runs)
    def inspector_shows_fix():
        labels = w.inspector.widget().findChildren(QLabel, "diagnostic")
        return any("divisor of 64" in lbl.text() for lbl in labels)
    qtbot.waitUntil(inspector_shows_fix, timeout=2000)
    # the group shows there is a problem inside it, seen from the top level
    w.go_up()
    assert w.scene.node_items["layers"].inner_severity == "error"
    assert w.scene.node_items["layers"].severity is None

    problems = w.problems.diagnostics()
    assert [(d.path, d.node_id) for d in problems] == [(("layers",), "attn")]
    assert "error" in w.problems.summary.text()
    # clicking it opens the group and selects the block
    w.problems.activate_row(0)
    assert w.scene.path == ("layers",)
    assert w.scene.selected_node_ids() == ["attn"]

    # fixing it clears the outline, the panel and the group's badge
    w.inspector.rebuild()
    w.inspector.editors["heads"].widget.setValue(8)
    w.session.refresh_report()
    assert w.scene.node_items["attn"].severity is None
    assert w.problems.diagnostics() == []


def test_cost_panel_matches_the_published_gpt2_small_count(make_window):
    w = make_window(load_preset("gpt2-small"))
    cost = w.session.report.cost
    # GPT-2 small: 124,439,808 parameters (tied head), as in the released checkpoint
    assert cost.total_params == 124_439_808
    assert w.costs.total.text().startswith("124.4M")
    # KV cache per token: 2 (K, V) x 12 layers x 768 x 2 bytes (bfloat16)
    assert cost.kv_cache_bytes_per_token == 2 * 12 * 768 * 2
    assert w.costs.kv.text().startswith(bytes_label(2 * 12 * 768 * 2))
    # the per-block table lists the embedding as 50257 x 768
    rows = {w.costs.table.item(r, 0).text(): w.costs.table.item(r, 1).toolTip()
            for r in range(w.costs.table.rowCount())}
    assert rows["embed"] == f"{50257 * 768:,}"
    # the memory box shows cost_lines.memory_view for its batch, length, dtype and device
    shown = memory_view(w.session.root, batch=w.costs.batch.value(),
                        seq_len=w.costs.seq_len.value(), dtype=w.costs.dtype.currentText(),
                        device=w.costs.device)
    assert w.costs.memory_rows["total"].text() == shown.rows["total"]
    assert w.costs.fits.text() == shown.verdict and w.costs.estimate == shown.estimate


def test_attention_and_ffn_switches(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.select_nodes(["layers"])
    w.inspector.rebuild()
    w.inspector.switch_buttons["attention"]["mqa"].click()
    attn = w.session.root.node("layers").subgraph.node("attn")
    assert attn.param("kv_heads") == 1 and attn.param("heads") == 4
    w.inspector.rebuild()
    w.inspector.switch_buttons["ffn"]["moe"].click()
    layer = w.session.root.node("layers").subgraph
    assert layer.node("ffn").type == "moe"
    assert "MoE" in w.scene.node_items["layers"]._summary


def test_text_formats():
    assert shape_label(("B", "T", 64)) == "B×T×64"
    assert shape_label(None) == "?"
    assert count_label(124_439_808) == "124.4M"
    assert count_label(174_604_259_328) == "174.6B"
    assert count_label(999) == "999"
    assert bytes_label(1536) == "1.5 KiB"
    assert bytes_label(3 * 2**30) == "3.0 GiB"
    assert flops_label(2.5e9) == "2.5 GFLOP"


def test_the_status_bar_follows_every_edit_and_undo(make_window, qtbot):
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QKeySequence
    from PySide6.QtTest import QTest

    from tfstudio.graph import MoveNodes
    from tfstudio.presets import load_preset

    w = make_window(load_preset("tiny-gpt"))
    status = w.statusBar().currentMessage
    w.open_search(QPointF(-2000, -2000))
    QTest.keyClicks(w.search.edit, "dropout")
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    assert status().startswith("Added Dropout")
    # Ctrl+Z (offscreen, the popup leaves no active window for a key to reach: its action)
    assert QKeySequence(QKeySequence.StandardKey.Undo) in w.actions.undo.shortcuts()
    w.actions.undo.trigger()
    assert status() == "Undid: Add Dropout"                      # not "Added Dropout" still
    w.actions.redo.trigger()
    assert status() == "Redid: Add Dropout"
    # a refused wire says why, until the next edit
    assert not w.scene.connect_ports("tokens", "ids", "head", "x")
    refusal = status()
    assert "takes hidden" in refusal
    w.scene.run(MoveNodes((), {"head": (0.0, 900.0)}))
    assert status() == "Move"
    assert not w.session.execute(MoveNodes((), {"nowhere": (0.0, 0.0)}))
    assert "nowhere" in status()


def test_counts_say_unavailable_everywhere_at_once_under_an_error(make_window):
    from tfstudio.graph import SetParam
    from tfstudio.presets import load_preset

    w = make_window(load_preset("tiny-gpt"))
    group = w.scene.node_items["layers"]
    assert "2 copies" in group.count_text()                     # a count while the graph is valid
    w.session.execute(SetParam(("layers",), "attn", "heads", 3))  # 64 is not a multiple of 3
    w.session.refresh_report()
    w.scene.select_nodes(["layers"])
    w.inspector.rebuild()
    texts = " ".join(label.text() for label in w.inspector.findChildren(QLabel))
    assert w.session.report.errors
    assert group.count_text() == "params unavailable"           # the open frame's header
    assert group.count_text(short=True) == "params unavailable"
    assert "Parameters: unavailable: the graph has 2 errors" in texts  # the inspector
    assert "params unavailable" in w.counts_label.text()         # the status bar
    w.session.undo()
    w.session.refresh_report()
    assert "2 copies" in group.count_text()


def test_the_problems_fix_button_applies_the_fix_as_one_undoable_edit(make_window):
    from tfstudio.graph.edit_rules import set_param_edit

    w = make_window(load_preset("tiny-gpt"))
    layer = ("layers",)
    w.session.execute(set_param_edit(w.session.document.graph(layer), layer, "attn", "heads",
                                     3).edit)                   # MHA 3/3: 64 / 3 is no width
    w.session.refresh_report()
    buttons = w.problems.fix_buttons()
    assert [b.text() for b in buttons] == ["Set heads to 4"]
    buttons[0].click()
    w.session.refresh_report()
    assert w.session.report.errors == 0
    assert w.problems.fix_buttons() == []
    attn = w.session.root.node("layers").subgraph.node("attn")
    assert (attn.param("heads"), attn.param("kv_heads")) == (4, 4)
    w.session.undo()
    assert w.session.root.node("layers").subgraph.node("attn").param("heads") == 3
