"""The training panel, driven as a user would: Train on tiny-gpt, watch curves and attention,
pause, resume, stop; sampling sliders against the softmax formula; a fault inside training; a
past run reopened after a restart; exports. Offscreen, tiny models, few steps."""
from __future__ import annotations

import csv
import math
import os
import signal
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from tfstudio.gui.training import TrainingPanel
from tfstudio.gui.training.heatmap import Heatmap
from tfstudio.gui.training.next_token_view import NextTokenView
from tfstudio.presets import load_preset

torch.set_num_threads(1)
WAIT_MS = 60_000


def quick_settings(panel: TrainingPanel, steps: int, probe_every: int = 5) -> None:
    s = panel.setup
    s.select_corpus("task:reverse")
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(steps)
    s.batch.setValue(8)
    s.seq_len.setValue(32)
    s.warmup.setValue(5)
    s.eval_every.setValue(10)
    s.probe_every.setValue(probe_every)




def steps_logged(panel) -> int:
    return len(panel.run.series.steps)


@pytest.mark.slow
def test_train_tiny_gpt_on_reverse_watch_pause_resume_stop(make_panel, qtbot):
    panel = make_panel()
    quick_settings(panel, steps=5000)
    qtbot.mouseClick(panel.train_button, Qt.LeftButton)
    run = panel.run
    assert run is not None and run.state == "running"
    assert not panel.train_button.isEnabled()

    # curve points arrive, and the attention heatmap refreshes during training
    loss_curve = panel.curves.entries[0].curves["loss"]
    qtbot.waitUntil(lambda: loss_curve.getData()[0] is not None and
                    len(loss_curve.getData()[0]) >= 3, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.snapshot is not None and panel.snapshot["step"] >= 5,
                    timeout=WAIT_MS)
    panel.tabs.setCurrentWidget(panel.attention)
    first_step = panel.snapshot["step"]
    qtbot.waitUntil(lambda: panel.snapshot["step"] > first_step, timeout=WAIT_MS)
    caption = panel.step_bar.caption.text()
    assert f"step {panel.snapshot['step']:,} of 5,000" in caption and "following training" in caption
    assert panel.step_bar.isVisible() and panel.step_bar.shown_step() == panel.snapshot["step"]

    # the average head of a causal model: every row sums to 1, nothing above the diagonal
    heatmap = panel.attention.heatmap
    matrix = heatmap.matrix
    tokens = panel.snapshot["tokens"]["tokens"]
    assert matrix.shape == (len(tokens), len(tokens))
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(matrix[np.triu_indices(len(tokens), k=1)] == 0)
    assert not heatmap.allowed[np.triu_indices(len(tokens), k=1)].any()  # drawn as masked
    assert heatmap.rows == heatmap.cols and len(heatmap.rows) == len(tokens)
    for head in range(4):  # every single head too
        panel.attention.head.setCurrentIndex(panel.attention.head.findData(head))
        np.testing.assert_allclose(heatmap.matrix.sum(axis=1), 1.0, atol=1e-5)
        assert np.all(np.triu(heatmap.matrix, 1) == 0)

    # pause: the steps stop; resume: they go on
    qtbot.mouseClick(panel.pause_button, Qt.LeftButton)
    assert run.state == "paused" and panel.pause_button.text() == "Resume"
    qtbot.wait(400)  # the step under way finishes
    frozen = steps_logged(panel)
    qtbot.wait(600)
    assert steps_logged(panel) == frozen
    # the line says so, and counts no time left while nothing moves
    qtbot.waitUntil(lambda: panel.progress_line.text().endswith("paused"), timeout=WAIT_MS)
    assert "ETA" not in panel.progress_line.text()
    qtbot.mouseClick(panel.pause_button, Qt.LeftButton)
    assert run.state == "running"
    qtbot.waitUntil(lambda: steps_logged(panel) > frozen + 2, timeout=WAIT_MS)

    # stop: the run ends between two steps and its weights are saved
    qtbot.mouseClick(panel.stop_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    assert run.end_event.kind == "Finished" and run.end_event.reason == "stopped"
    assert run.end_event.step < 5000
    assert (run.run_dir / "checkpoints" / "LATEST").exists()
    assert panel.train_button.isEnabled() and not panel.stop_button.isEnabled()
    # the weights load for the next-token view
    qtbot.waitUntil(lambda: panel.next_token.generate.isEnabled(), timeout=WAIT_MS)


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_sampling_sliders_follow_the_formulas(qtbot):
    view = NextTokenView()
    qtbot.addWidget(view)
    logits = np.random.default_rng(3).normal(0, 2, size=40).astype(np.float32)
    view.set_logits(logits, lambda i: f"t{i}")
    order = np.argsort(-logits)

    for temperature in (1.0, 0.5, 2.0):
        view.temperature.setValue(round(temperature * 100))  # as a slider drag ends
        expected = _softmax(logits.astype(np.float64) / temperature)
        bars = dict(view.drawn_bars())
        assert len(bars) == 20  # the top 20 candidates, none filtered
        for token_id in order[:20]:
            assert bars[f"t{token_id}"] == pytest.approx(expected[token_id], rel=1e-4)
        heights = view.kept_bars.opts["height"]
        np.testing.assert_allclose(heights, expected[order[:20]], rtol=1e-4)

    view.temperature.setValue(100)
    view.top_k.setValue(1)
    assert view.drawn_bars() == [(f"t{order[0]}", pytest.approx(1.0))]
    assert len(view.kept_bars.opts["height"]) == 1          # one bar left...
    assert len(view.filtered_bars.opts["height"]) == 19     # ...the rest marked as filtered

    view.top_k.setValue(0)
    view.top_p.setValue(50)
    probs = _softmax(logits.astype(np.float64))[order]
    keep = int(np.searchsorted(np.cumsum(probs), 0.5) + 1)  # smallest set reaching p
    drawn = view.drawn_bars()
    # the sliders' values and the summary say the same (their wording: test_next_token_lines)
    assert (view.t_label.text(), view.k_label.text(), view.p_label.text()) == \
        ("1.00", "off", "0.50")
    assert view.summary.text().startswith(f"{keep} of 40 tokens can be drawn · entropy ")
    assert [t for t, _ in drawn] == [f"t{i}" for i in order[:keep]]
    np.testing.assert_allclose([p for _, p in drawn], probs[:keep] / probs[:keep].sum(),
                               rtol=1e-4)


@pytest.mark.slow
def test_a_training_process_that_dies_is_shown_and_the_app_keeps_working(make_panel, qtbot):
    """The run trains in a child process: killed from outside (as the kernel's out-of-memory
    killer would), the panel says so, keeps the curves, and the next run trains."""
    errors = []
    panel = make_panel(report_error=lambda text, title: errors.append((title, text)))
    quick_settings(panel, steps=5000, probe_every=2)
    run = panel.train()
    qtbot.waitUntil(lambda: steps_logged(panel) >= 5, timeout=WAIT_MS)
    assert run.process_id not in (None, os.getpid())
    os.kill(run.process_id, signal.SIGKILL)
    qtbot.waitUntil(lambda: run.state == "failed", timeout=WAIT_MS)
    assert run.end_event.reason == "error"
    assert errors and errors[0][0] == "Training failed"
    assert "killed by signal 9" in errors[0][1] and "resume" in errors[0][1]
    logged = len(run.series.loss)
    assert logged >= 5 and all(math.isfinite(v) for v in run.series.loss)
    assert f"step {run.series.steps[-1]}" in panel.error.text()
    assert panel.curves.entries[0].curves["loss"].getData()[0].size == logged  # curves survive
    assert panel.train_button.isEnabled()

    # the app keeps working: the next run trains normally
    quick_settings(panel, steps=6, probe_every=3)
    second = panel.train()
    qtbot.waitUntil(lambda: second.state == "finished", timeout=WAIT_MS)
    assert second.end_event.reason == "completed"
    assert not panel.error.isVisibleTo(panel)
    assert len(panel.curves.entries) == 2  # both runs overlaid


@pytest.mark.slow
def test_the_progress_line_keeps_two_lines_and_wraps_between_its_parts(make_panel, qtbot):
    """Twice a second it changes: a fixed height keeps the column from being laid out again
    each time, and no part (``ETA 3 s``) is split across lines."""
    panel = make_panel()
    quick_settings(panel, steps=6, probe_every=3)
    run = panel.train()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    line = panel.progress_line
    assert line.isVisibleTo(panel)
    parts = line.text().split(" · ")
    assert parts[0] == "step\u00a06\u00a0of\u00a06" and parts[1].startswith("loss\u00a0")
    assert all(" " not in part for part in parts)
    assert not any(part.startswith("ETA") for part in parts)  # the run has ended
    two_lines = 2 * line.fontMetrics().lineSpacing()
    assert line.minimumHeight() == line.maximumHeight() == two_lines


@pytest.mark.slow
def test_a_setup_error_is_reported_not_raised(make_panel, qtbot):
    errors = []
    panel = make_panel(report_error=lambda text, title: errors.append(text))
    quick_settings(panel, steps=5)
    panel.setup.select_corpus("/no/such/corpus.txt")
    run = panel.train()
    qtbot.waitUntil(lambda: run.state == "failed", timeout=WAIT_MS)
    assert "no corpus" in errors[0] and "/no/such/corpus.txt" in errors[0]


@pytest.mark.slow
def test_editing_the_graph_during_a_run_never_reaches_it(make_panel, qtbot):
    from tfstudio.graph.edits import MoveNodes, SetParam

    graph = load_preset("tiny-gpt")
    panel = make_panel(graph)
    quick_settings(panel, steps=5000)
    run = panel.train()
    refusal = panel.edit_refusal(SetParam.__new__(SetParam))
    assert refusal is not None and "stop the run" in refusal
    assert panel.edit_refusal(MoveNodes.__new__(MoveNodes)) is None  # moving is harmless
    graph.node("embed").params["d_model"] = 32  # even a change behind the guard's back...
    assert run.graph.node("embed").params["d_model"] == 64  # ...never reaches the run's copy
    qtbot.waitUntil(lambda: steps_logged(panel) >= 3, timeout=WAIT_MS)
    panel.stop()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    assert panel.edit_refusal(SetParam.__new__(SetParam)) is None


@pytest.mark.slow
def test_a_past_run_reopens_after_a_restart(make_panel, qtbot, tmp_path):
    from tfstudio.probes import SnapshotStore, probe_inputs
    from tfstudio.runs.folder import RunFolder

    data = tmp_path / "appdata"
    first = make_panel(data_dir=data)
    quick_settings(first, steps=12, probe_every=6)
    run = first.train()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    losses = list(run.series.loss)
    first.shutdown()

    again = make_panel(data_dir=data)  # a restarted app
    (record,) = again.history.records()
    assert record.status == "completed" and record.steps == 12 and record.path == str(run.run_dir)
    assert again.runs.tree.topLevelItemCount() == 1
    again.tabs.setCurrentWidget(again.attention)
    again.open_run(record)
    again.background.wait()  # its curves are read off the GUI thread
    series = again.curves.entries[0].series
    assert series.loss == losses and series.steps == list(range(1, 13))
    assert again.step_bar.steps == [0, 6, 12]
    snap = again.snapshot
    stored = SnapshotStore(run.run_dir).load(12)
    np.testing.assert_array_equal(again.attention.heatmap.matrix,
                                  stored["attention"]["layers.0.attn"]["weights"].mean(0))
    again.step_bar.slider.setValue(0)  # replay the untrained model's look
    assert again.snapshot["step"] == 0 and snap["step"] == 12
    assert again.step_bar.caption.text() == f"{record.label} · step 0 of 12"

    # the weights: the next-token view answers from the saved model
    qtbot.waitUntil(lambda: again.next_token.generate.isEnabled(), timeout=WAIT_MS)
    again.next_token.prompt.setText("abcdefgh>")
    again.generation.prompt_edited("abcdefgh>")
    again.background.wait()
    QApplication.processEvents()
    folder = RunFolder(run.run_dir)
    model, tokenizer = folder.load_model(), folder.tokenizer()
    # the slider stands at step 0: the weights are the checkpoint kept nearest to it
    from tfstudio.runs.checkpoint import load_checkpoint
    nearest = min(int(p.name[5:]) for p in folder.checkpoints.glob("step-*"))
    assert again.host.step == nearest
    load_checkpoint(folder.checkpoints / f"step-{nearest:08d}", model)
    with torch.no_grad():
        logits = model.eval()(*probe_inputs(model, tokenizer, "abcdefgh>").args)[0, -1]
    np.testing.assert_allclose(again.next_token.logits, logits.numpy(), atol=1e-5)

    # generation streams text from the same weights (greedy: the argmax every time)
    again.next_token.set_settings(temperature=0.0)
    again.generate("abcdefgh>", 4)
    qtbot.waitUntil(lambda: again.next_token.generate.isEnabled(), timeout=WAIT_MS)
    text = again.next_token.generated_text()
    assert text.startswith("abcdefgh>") and len(text) > len("abcdefgh>")
    # past the trained length the model reads a sliding window of it, as `tfstudio generate` does
    assert again.host.window == folder.config().seq_len == 32


@pytest.mark.slow
def test_exports_of_curves_and_heatmaps(make_panel, qtbot, tmp_path):
    panel = make_panel()
    quick_settings(panel, steps=10, probe_every=5)
    run = panel.train()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    csv_path = tmp_path / "curves.csv"
    panel.curves.export_csv(str(csv_path))
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert [int(r["step"]) for r in rows] == run.series.steps
    assert [float(r["loss"]) for r in rows] == pytest.approx(run.series.loss)
    assert float(rows[9]["val_loss"]) == pytest.approx(run.series.val_loss[-1])
    assert "grad_norm[layers.0]" in rows[0]

    from tfstudio.gui.training.picture_export import export_widget
    panel.tabs.setCurrentWidget(panel.attention)
    for widget, name in ((panel.curves.plots, "curves"), (panel.attention.heatmap, "heatmap")):
        png = export_widget(widget, tmp_path / f"{name}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = export_widget(widget, tmp_path / f"{name}.svg")
        assert ET.parse(svg).getroot().tag.endswith("svg")
    with pytest.raises(ValueError, match="png or .svg"):
        export_widget(panel.curves.plots, tmp_path / "curves.bmp")


@pytest.mark.slow
def test_tokenizer_preview_shows_tokens_with_their_ids(make_panel, qtbot):
    from tfstudio.data import build_tokenizer, load_corpus

    panel = make_panel()
    panel.setup.select_corpus("task:reverse")
    panel.setup.tokenizer.setCurrentText("char")
    panel.setup.probe_text.setText("abc>cba")
    panel.setup.refresh_preview()
    qtbot.waitUntil(lambda: panel.setup.built_tokenizer() is not None, timeout=WAIT_MS)
    panel.setup.refresh_preview()
    expected = build_tokenizer("char", load_corpus("task:reverse")).encode("abc>cba")
    html = panel.setup.preview.text()
    assert html.count("<sub") == 7
    for token_id in expected:
        assert f">{token_id}</sub>" in html
    assert "&gt;" in html  # the separator token, escaped


def test_a_corpus_file_is_offered_by_name_with_its_path_and_every_precision_reaches_the_run(
        make_panel, tmp_path):
    setup = make_panel().setup
    path = str(tmp_path / "my stories.txt")
    setup.select_corpus(path)
    index = setup.corpus.currentIndex()
    assert setup.corpus.itemText(index) == "my stories.txt"
    assert setup.corpus.itemData(index, Qt.ToolTipRole) == path == setup.corpus_spec()
    for precision in ("fp16", "bf16", "fp32", "auto"):
        setup.precision.setCurrentText(precision)
        assert setup.config().precision == precision

@pytest.mark.slow
def test_the_setup_starts_a_masked_model_on_text_and_a_tiny_decoder_on_the_reverse_task(
        make_panel):
    from tfstudio.data import load_corpus
    for preset, corpus in (("tiny-bert", "sample:small"), ("tiny-gpt", "task:reverse")):
        setup = make_panel(load_preset(preset)).setup
        assert setup.corpus_spec() == corpus
        assert load_corpus(setup.config().corpus).text  # a corpus that loads


def test_hovering_a_query_row_highlights_it(qtbot):
    heatmap = Heatmap()
    qtbot.addWidget(heatmap)
    heatmap.resize(300, 300)
    heatmap.show()
    weights = np.tril(np.ones((4, 4)))
    weights /= weights.sum(1, keepdims=True)
    heatmap.set_data(weights, list("abcd"), list("abcd"), np.tril(np.ones((4, 4), bool)))
    area, cw, ch = heatmap._layout(heatmap.rect().toRectF())
    rows = []
    heatmap.hovered.connect(rows.append)
    at = QPointF(area.left() + cw * 0.5, area.top() + ch * 2.5)
    move = QMouseEvent(QMouseEvent.MouseMove, at, heatmap.mapToGlobal(at), Qt.NoButton,
                       Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(heatmap, move)
    assert heatmap.hover_row == 2 and rows == [2]
    assert heatmap.cell_at(at) == (2, 0)


def test_telemetry_colours_nodes_from_the_latest_look(make_panel, qtbot):
    """The panel colours the canvas's blocks with what telemetry.shown_values computes (its
    values, labels and scale: test_telemetry.py)."""
    snapshot = {"grad_norm": {"embed": 1.0, "layers.0": 3.0, "layers.1": 4.0, "head": 0.01},
                "activation_rms": {"embed": 1.0, "layers.0.attn": 0.5, "layers.1.attn": 0.5}}

    class Item:
        def __init__(self):
            self.telemetry = "unset"

        def set_telemetry(self, colour, label):
            self.telemetry = (colour, label)

    class Scene:
        path = ()

        def __init__(self):
            self.node_items = {"embed": Item(), "layers": Item(), "tokens": Item()}

    scene = Scene()
    panel = make_panel(scene_source=lambda: scene)
    panel.shown.snapshot = snapshot
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    assert scene.node_items["embed"].telemetry[1] == "‖g‖ 1"
    colour = scene.node_items["layers"].telemetry[0]      # the largest: the red end
    assert colour.red() > colour.blue() and scene.node_items["layers"].telemetry[1] == "‖g‖ 5"
    assert scene.node_items["tokens"].telemetry == (None, "")  # nothing measured: plain
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("off"))
    assert scene.node_items["layers"].telemetry == (None, "")


def test_positions_view_draws_each_scheme(qtbot):
    from tfstudio.compiler import compile_graph
    from tfstudio.gui.training.positions_math import waveform_dims
    from tfstudio.gui.training.positions_view import PositionsView
    from tfstudio.probes import position_data

    view = PositionsView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    for preset, scheme in (("tiny-gpt", "learned"), ("tiny-llama", "rope"),
                           ("tiny-alibi-gpt", "alibi"), ("tiny-transformer", "sinusoidal")):
        data = position_data(compile_graph(load_preset(preset)), 16)
        view.show_positions(data, preset)
        assert view.scheme.currentText() == scheme
        page = view.stack.currentWidget()
        if scheme in ("learned", "sinusoidal"):
            np.testing.assert_array_equal(page.table.matrix, data[scheme]["table"])
            assert len(page._curves) == len(waveform_dims(data[scheme]["table"].shape[1]))
        elif scheme == "alibi":
            assert len([m for m in page.grid.maps if m.isVisibleTo(page)]) == 4
            assert not page.grid.maps[0].allowed[0, 1]  # the causal mask, hatched
    view.show_positions({}, "tiny-lstm")
    assert view.stack.currentWidget() is view.empty
    assert "no position information" in view.empty.text()


@pytest.mark.slow
def test_a_run_started_in_the_app_keeps_a_checkpoint_every_fifth_of_it(make_panel, qtbot):
    """Explain's embedding map replays a run's checkpoints; a run trained in the app must
    leave some (a crash then loses at most a fifth of it, too)."""
    panel = make_panel(load_preset("tiny-gpt"))
    quick_settings(panel, steps=20, probe_every=10)
    run = panel.train()
    qtbot.waitUntil(lambda: run.state == "finished", timeout=WAIT_MS)
    kept = sorted(p.name for p in run.run_dir.joinpath("checkpoints").glob("step-*"))
    assert kept == [f"step-{s:08d}" for s in (4, 8, 12, 16, 20)]
