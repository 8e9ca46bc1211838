"""Truthful states of the training workspace: what each view, button and panel says before a
run, on an invalid graph, after a custom probe, after reopening a run, and during a run."""
from __future__ import annotations

import pytest
import torch
from gui_runs import WAIT_MS, short_run

from tfstudio.graph.edits import SetParam
from tfstudio.gui.training.curve_hints import EMPTY_HINT
from tfstudio.gui.training.experts_lines import before_training
from tfstudio.presets import load_preset

torch.set_num_threads(1)


def break_the_graph(window, qtbot):
    """3 heads cannot divide d_model 64: an error the validator reports on layers/attn."""
    assert window.session.execute(SetParam(("layers",), "attn", "heads", 3))
    qtbot.waitUntil(lambda: window.session.report.errors > 0, timeout=5000)


# --------------------------------------------------------------------------- before any run
def test_before_any_run_the_panel_says_so_instead_of_showing_empty_numbers(make_panel):
    panel = make_panel()
    assert panel.progress.text() == "no run yet"  # not "0 / 1 steps"
    for name, hint in panel.curves.hints.items():  # not six bare axes
        assert hint.isVisible() and hint.toPlainText() == EMPTY_HINT, name


def test_before_any_run_the_positions_tab_shows_the_canvas_graph_untrained(make_panel, qtbot):
    panel = make_panel(load_preset("tiny-gpt"))
    panel.tabs.setCurrentWidget(panel.positions)
    qtbot.waitUntil(lambda: "untrained" in panel.positions.source.text(), timeout=30_000)
    assert list(panel.positions.data) == ["learned"]  # tiny-gpt's learned position table


def test_experts_tab_before_training_says_what_the_graph_holds(make_panel):
    """The tab shows the hint experts_lines.before_training computes (its counting and
    wording: test_experts_lines.py)."""
    graph = load_preset("tiny-mixtral")
    mixtral = make_panel(graph)
    assert mixtral.experts.empty.text() == before_training(graph)
    assert "mixture-of-experts block" in mixtral.experts.empty.text()


# --------------------------------------------------------------------------- invalid graph
def test_an_invalid_graph_disables_train_with_the_reason_and_a_link_to_the_problem(window,
                                                                                   qtbot):
    training = window.training
    panel = training.panel
    assert training.train_action.isEnabled() and panel.train_button.isEnabled()
    break_the_graph(window, qtbot)
    qtbot.waitUntil(lambda: not training.train_action.isEnabled(), timeout=5000)
    first = next(d for d in window.session.report.diagnostics if d.severity == "error")
    assert not panel.train_button.isEnabled()
    assert first.message in panel.blocked.text() and panel.blocked.isVisibleTo(panel)
    assert first.message in training.train_action.statusTip()
    assert panel.train() is None and panel.run is None and not panel.history.records()

    training.show_panel()
    panel.blocked.linkActivated.emit("problem")  # "Show the problem"
    assert training.workspace.mode == "build"
    assert window.scene.path == tuple(first.path) and \
        window.scene.selected_node_ids() == [first.node_id]

    window.session.document.undo()  # fixed: Train comes back
    qtbot.waitUntil(lambda: training.train_action.isEnabled(), timeout=5000)
    assert panel.train_button.isEnabled() and not panel.blocked.isVisibleTo(panel)


def test_the_cost_panel_marks_its_numbers_unavailable_on_an_invalid_graph(window, qtbot):
    costs = window.costs
    assert costs.total.text()[0].isdigit() and costs.fits_on_device in (True, False, None)
    break_the_graph(window, qtbot)
    qtbot.waitUntil(lambda: costs.total.text() == "unavailable", timeout=5000)
    assert costs.flops.text() == "unavailable" and costs.table.rowCount() == 0
    errors = window.session.report.errors
    assert costs.fits.text().startswith(f"Unavailable: the graph has {errors} error")
    assert "Fits" not in costs.fits.text() and costs.fits_on_device is None
    assert all(label.text() == "—" for label in costs.memory_rows.values())


def test_the_positions_tab_on_an_invalid_graph_gives_one_message(window, qtbot):
    break_the_graph(window, qtbot)
    panel = window.training.panel
    panel.tabs.setCurrentWidget(panel.positions)
    view = panel.positions
    qtbot.waitUntil(lambda: "can be built" in view.empty.text(), timeout=WAIT_MS)
    assert view.stack.currentWidget() is view.empty
    assert view.source.text() == "" and "no position information" not in view.empty.text()


# --------------------------------------------------------------------------- probes, runs
def test_gradient_colouring_after_a_custom_probe_uses_the_last_training_look(make_panel):
    class Item:
        def __init__(self):
            self.telemetry = None

        def set_telemetry(self, colour, label):
            self.telemetry = (colour, label)

    class Scene:
        path = ()

        def __init__(self):
            self.node_items = {"embed": Item(), "layers": Item()}

    scene = Scene()
    panel = make_panel(scene_source=lambda: scene)
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    panel.show_snapshot({"step": 40, "grad_norm": {"embed": 2.0, "layers.0": 1.0}})
    assert scene.node_items["embed"].telemetry[1] == "‖g‖ 2"
    # a look at the user's own text after training: no backward pass, no gradient norms
    panel.show_snapshot({"step": 40, "custom": True, "text": "hello",
                         "activation_rms": {"embed": 1.0}})
    assert scene.node_items["embed"].telemetry[1] == "‖g‖ 2"  # still coloured, truthfully
    assert "colours from step 40" in panel.telemetry_note.text()
    panel.shown.training_snapshot = None
    panel.refresh_telemetry()
    assert scene.node_items["embed"].telemetry == (None, "")
    assert panel.telemetry_note.text().startswith("No gradient norm in this look")


@pytest.mark.slow
def test_reopening_a_past_run_shows_its_own_progress_and_probe_text(make_panel, qtbot):
    panel = make_panel()
    first = short_run(panel, qtbot, steps=6, probe_text="abc>cba")
    second = short_run(panel, qtbot, steps=9, probe_text="hello>olleh")
    assert panel.progress.value() == 9
    record = next(r for r in panel.history.records() if r.path == str(first.run_dir))
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    assert panel.progress.value() == 6 and panel.progress.maximum() == 6
    assert panel.setup.probe_text.text() == "abc>cba"
    assert panel.attention.text.text() == "abc>cba"
    del second


@pytest.mark.slow
def test_a_text_corpus_says_why_there_is_no_accuracy_and_why_params_differ(make_panel, qtbot):
    panel = make_panel()
    messages = []
    panel._report_message = messages.append
    run = short_run(panel, qtbot, corpus="sample:small", steps=6, probe_text="")
    acc = panel.curves.hints["acc"]
    assert acc.isVisible() and "this corpus is text" in acc.toPlainText()
    assert not panel.curves.hints["loss"].isVisible()
    # the run's count against the canvas's: embedding and tied head rows of the vocabulary
    from tfstudio.graph.cost import estimate_cost
    graph = load_preset("tiny-gpt")
    canvas = estimate_cost(graph).total_params
    from tfstudio.data import load_tokenizer
    vocab = load_tokenizer(run.run_dir).vocab_size  # the tokenizer the run saved
    embed = graph.node("embed")
    assert run.series.params == canvas - (embed.param("vocab_size") - vocab) * \
        embed.param("d_model")
    started = next(m for m in messages if m.startswith("Training "))
    assert f"{run.series.params:,} parameters" in started
    assert f"the canvas counts {canvas:,}" in started and f"{vocab:,} tokens" in started


@pytest.mark.slow
def test_the_inspector_is_read_only_while_a_run_trains(window, qtbot):
    panel = window.training.panel
    s = panel.setup
    s.select_corpus("task:reverse")
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(100_000)
    s.batch.setValue(4)
    s.seq_len.setValue(32)
    window.scene.set_path(("layers",))
    window.scene.select_nodes(["attn"])
    qtbot.waitUntil(lambda: "heads" in window.inspector.editors, timeout=5000)
    assert window.inspector.editors["heads"].widget.isEnabled()
    window.training.train()
    qtbot.waitUntil(lambda: window.inspector.locked_reason is not None, timeout=5000)
    qtbot.waitUntil(lambda: "heads" in window.inspector.editors, timeout=5000)
    assert not window.inspector.editors["heads"].widget.isEnabled()
    panel.stop()
    qtbot.waitUntil(lambda: not panel.run.active, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.inspector.locked_reason is None, timeout=5000)
    qtbot.waitUntil(lambda: "heads" in window.inspector.editors, timeout=5000)
    assert window.inspector.editors["heads"].widget.isEnabled()


def test_the_model_description_says_it_is_the_presets_after_a_switch(window, qtbot):
    from PySide6.QtWidgets import QLabel

    def page_text():
        return " ".join(l.text() for l in window.inspector.widget().findChildren(QLabel))

    assert "learned" in page_text() and "As loaded" not in page_text()
    assert window.inspector.switch_positions("rope")
    qtbot.waitUntil(lambda: "Positions now: <b>rope</b>" in page_text(), timeout=5000)
    assert "As loaded, before your edits" in page_text()


def test_the_tokenizer_preview_shows_the_probe_text_and_names_unknown_characters(make_panel,
                                                                                 qtbot):
    from tfstudio.data import load_corpus
    from tfstudio.probes import default_probe_text

    panel = make_panel()
    s = panel.setup
    s.select_corpus("task:reverse")
    s.tokenizer.setCurrentText("char")
    s.probe_text.setText("")
    s.refresh_preview()
    qtbot.waitUntil(lambda: "ids" in s.preview_info.text(), timeout=WAIT_MS)
    default = default_probe_text(load_corpus("task:reverse"))  # what the trainer reads
    assert f"for {len(default)} characters" in s.preview_info.text()
    assert "default probe text" in s.preview_info.text()
    assert "quick brown fox" not in s.preview.text()
    s.probe_text.setText("abc XYZX")  # capitals and a space: not in the task's alphabet
    s.refresh_preview()
    qtbot.waitUntil(lambda: "not in its vocabulary" in s.preview_info.text(), timeout=WAIT_MS)
    tokenizer = s.built_tokenizer()
    unknown = [ch for ch in "abc XYZX" if ch not in tokenizer.alphabet]
    # five unknown characters, each named once
    assert f"{len(unknown)} characters not in its vocabulary ( XYZ)" in s.preview_info.text()
    assert "first 64" not in s.preview_info.text()
    s.probe_text.setText("abc" * 30)  # 90 characters: the looks inside read 64 of them
    s.refresh_preview()
    qtbot.waitUntil(lambda: "for 90 characters" in s.preview_info.text(), timeout=WAIT_MS)
    assert "the looks inside read its first 64" in s.preview_info.text()


def test_the_tokenizer_picker_offers_every_kind_the_trainer_builds(make_panel, qtbot):
    """Each kind tfstudio can build (byte, char, word, bpe, tiktoken) is one pick away, and the
    word tokenizer previews the probe text a word to a token."""
    from tfstudio.data.tokenizer import KINDS

    panel = make_panel()
    s = panel.setup
    offered = [s.tokenizer.itemData(i) for i in range(s.tokenizer.count())]
    assert {spec.split(":")[0] for spec in offered} == set(KINDS)
    s.select_corpus("sample:small")
    s.tokenizer.setCurrentIndex(offered.index("word:2000"))
    s.probe_text.setText("the cat sat")
    s.refresh_preview()
    qtbot.waitUntil(lambda: "for 11 characters" in s.preview_info.text(), timeout=WAIT_MS)
    assert s.built_tokenizer().name.startswith("word:")
    assert "3 tokens for 11 characters" in s.preview_info.text()
