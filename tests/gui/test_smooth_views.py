"""The Train workspace's views stay cheap to draw while long runs are shown (issue 27, item 6):
a run added to the curves lays no plot out again and draws each axis once, a header that
wraps leaves the plots where they are, and what is hidden (curves behind another tab at a
run's end, the inspector in the Train workspace, Explain's walk of new weights) is drawn when
shown, with the data of then."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pyqtgraph as pg
import pytest
import torch
from gui_runs import WAIT_MS, short_run
from PySide6.QtWidgets import QApplication

from tfstudio.gui.training.curves_view import CurvesView
from tfstudio.gui.training.series import RunSeries
from tfstudio.presets import load_preset

torch.set_num_threads(1)


def logged_run(steps: int, name: str) -> RunSeries:
    """A finished run's curves: a falling loss, a validation every 50 steps, two layers."""
    rng = np.random.default_rng(0)
    at = np.arange(1, steps + 1)
    loss = 3.0 * np.exp(-at / (steps / 4)) + 0.3 + 0.1 * rng.random(steps)
    series = RunSeries(name, steps=at.tolist(), loss=loss.tolist(), lr=[3e-3] * steps,
                       grad_norm=(0.5 + 0.2 * rng.random(steps)).tolist(),
                       tokens_per_s=(20000 + 500 * rng.random(steps)).tolist(),
                       elapsed_s=(at * 0.02).tolist(), total_steps=steps,
                       val_steps=list(range(50, steps + 1, 50)), is_task=True)
    series.val_loss = [float(loss[s - 1]) for s in series.val_steps]
    series.accuracy = [s / steps for s in series.val_steps]
    series.layer_grad_norms = {f"layers.{i}": rng.random(steps).tolist() for i in range(2)}
    return series


def shown_curves(qtbot) -> CurvesView:
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(1040, 620)
    view.show()
    qtbot.waitExposed(view)
    settle(qtbot)
    return view


def settle(qtbot, turns: int = 8) -> None:
    for _ in range(turns):
        qtbot.wait(15)
        QApplication.processEvents()


def plot_rects(view: CurvesView) -> dict:
    return {name: plot.getViewBox().sceneBoundingRect()
            for name, plot in view.plot_items().items()}


def test_the_first_run_added_moves_no_plot(qtbot):
    """The legends keep a row of entries' room, the y-axes room for labels as wide as
    "21000" or "0.0064": the first run's entries and numbers fit without laying out again."""
    view = shown_curves(qtbot)
    before = plot_rects(view)
    view.add_series(logged_run(2000, "run 1"))
    settle(qtbot)
    assert plot_rects(view) == before


def test_each_axis_of_a_long_run_added_is_drawn_once(qtbot, monkeypatch):
    """A legend widened by a long name lays its column out before the plots fit their ranges,
    and the step axis ends at the run's last step, not a pen's width past it (a width in steps
    that changes with the range): each axis is drawn once, not again at the next paints."""
    view = shown_curves(qtbot)
    drawn = Counter()
    paint = pg.AxisItem.paint

    def counted(axis, *args):
        if axis.picture is None:
            drawn[id(axis)] += 1
        return paint(axis, *args)
    monkeypatch.setattr(pg.AxisItem, "paint", counted)
    view.add_series(logged_run(20000, "a logged run of 20,000 steps on task:reverse"))
    settle(qtbot, 12)
    assert len(drawn) == 12 and set(drawn.values()) == {1}
    low, high = view.loss_plot.getViewBox().viewRange()[0]
    assert low < 0 < 20000 < high < 20000 * 1.1  # all of the run, a little padding around it


def test_a_header_that_wraps_to_a_second_line_leaves_the_plots_where_they_are(qtbot):
    view = shown_curves(qtbot)
    view.set_summary("run 1 · loss 0.3")
    settle(qtbot)
    height, before = view.summary.height(), plot_rects(view)
    words, text = ["tiny-gpt", "·", "loss", "0.3123", "(step", "20,000)", "·"], "run 1"
    metrics = view.summary.fontMetrics()
    while metrics.horizontalAdvance(text) < 1.3 * view.summary.width():
        text += " " + words[len(text.split()) % len(words)]
    assert metrics.horizontalAdvance(text) < 1.6 * view.summary.width()  # two lines
    view.set_summary(text)
    settle(qtbot)
    assert view.summary.height() == height and plot_rects(view) == before


def test_the_step_bar_is_hidden_under_the_curves_from_the_start(make_panel, qtbot):
    """Hidden only when the first run updated it, it gave the curves its height then: every
    plot was laid out and drawn again."""
    panel = make_panel()
    qtbot.waitExposed(panel)
    assert panel.tabs.currentWidget() is panel.curves
    assert not panel.step_bar.isVisible()


@pytest.mark.slow
def test_curves_behind_another_tab_are_drawn_when_shown_after_a_run(make_panel, qtbot):
    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.positions)
    run = short_run(panel, qtbot, steps=8, every=4)
    entry = next(e for e in panel.curves.entries if e.series is run.series)
    assert entry.drawn[0] < len(run.series.steps)  # not drawn behind the tab at the end
    panel.tabs.setCurrentWidget(panel.curves)
    raw = entry.curves["loss_raw" if panel.curves.reader.weight > 0 else "loss"]
    x, y = raw.getData()
    assert list(x) == run.series.steps and list(y) == run.series.loss  # every step, the last too


def test_a_hidden_inspector_locks_at_once_and_is_rebuilt_when_shown(make_window, qtbot,
                                                                   monkeypatch):
    w = make_window(load_preset("tiny-gpt"))
    inspector = w.inspector
    w.scene.set_path(("layers",))
    w.scene.select_nodes(["attn"])
    qtbot.waitUntil(lambda: "heads" in inspector.editors, timeout=5000)
    w.inspector_dock.hide()  # as the Train workspace does
    rebuilt = []
    rebuild = inspector.rebuild
    monkeypatch.setattr(inspector, "rebuild", lambda: (rebuilt.append(1), rebuild()))
    inspector.set_locked("A run is training the graph")
    assert not inspector.editors["heads"].widget.isEnabled()  # read-only at once
    w.scene.select_nodes(["ffn"])
    settle(qtbot)
    assert rebuilt == []  # nothing rebuilt behind the Train workspace
    w.inspector_dock.show()
    qtbot.waitUntil(lambda: bool(rebuilt), timeout=5000)
    assert "d_ff" in inspector.editors and "heads" not in inspector.editors  # the ffn's page
    assert not any(e.widget.isEnabled() for e in inspector.editors.values())
    inspector.set_locked(None)
    qtbot.waitUntil(lambda: inspector.editors["d_ff"].widget.isEnabled(), timeout=5000)


def test_explain_walks_new_weights_only_once_it_is_shown(open_training_window, qtbot):
    """A run's weights load when it ends, usually behind another tab: Explain's walk of them
    (computed, 40-odd pictures and an embedding map drawn) waits until Explain is shown."""
    from tfstudio.compiler import compile_graph
    from tfstudio.data import build_tokenizer
    from tfstudio.train.pipeline import fit_graph_to_tokenizer

    w = open_training_window((1366, 768))
    w.training.show_panel()
    panel = w.training.panel
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    panel.tabs.setCurrentWidget(panel.curves)
    panel.shown.snapshot = {"text": "abc>cba"}  # the look the weights' walk starts from
    panel.weights_changed.emit(model, tokenizer)
    settle(qtbot)
    panel.background.wait()
    settle(qtbot)
    assert explain.model is model and explain.result is None  # nothing walked behind the tab
    panel.tabs.setCurrentWidget(explain)
    qtbot.waitUntil(lambda: explain.result is not None, timeout=WAIT_MS)
    assert explain.result["text"] == "abc>cba" and explain.pictures()


def write_logged_run(folder, steps: int) -> list[float]:
    """A run folder holding its setup and its ``metrics.jsonl`` of ``steps`` steps (no
    weights, no looks); returns the losses."""
    import json

    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.events import EvalMetrics, Finished, Started, StepMetrics

    folder.mkdir()
    config = TrainConfig(steps=steps, corpus="task:reverse", tokenizer="char")
    (folder / "config.json").write_text(json.dumps(config.to_dict()))
    losses = [3.0 / (1 + s / 1000) for s in range(1, steps + 1)]
    events = [Started(0, steps, 1000, "cpu", "fp32", "next token")]
    for step, loss in enumerate(losses, 1):
        events.append(StepMetrics(step, loss, 1e-3, 0.5, {"layers.0": 0.1}, 2e4, step * 0.01,
                                  step * 64))
        if step % 50 == 0:
            events.append(EvalMetrics(step, loss, 2.0))
    events.append(Finished(steps, "completed"))
    (folder / "metrics.jsonl").write_text("".join(json.dumps(e.to_dict()) + "\n"
                                                  for e in events))
    return losses


@pytest.mark.slow
def test_a_long_runs_curves_are_read_off_the_gui_thread_and_shown_whole(make_panel, qtbot,
                                                                       tmp_path, monkeypatch):
    import threading
    from pathlib import Path

    from tfstudio.gui.training import opened_runs
    from tfstudio.gui.training.history import RunRecord

    losses = write_logged_run(tmp_path / "run", 20000)
    record = RunRecord(str(tmp_path / "run"), "tiny-gpt", "task:reverse", "char",
                       "2026-12-02 09:00:00", status="completed", steps=20000)
    readers = []
    read = opened_runs.load_series
    monkeypatch.setattr(opened_runs, "load_series",
                        lambda r: (readers.append(threading.current_thread()), read(r))[1])
    panel = make_panel()
    panel.open_run(record)
    qtbot.waitUntil(lambda: panel.viewed is not None and panel.viewed.path == Path(record.path),
                    timeout=WAIT_MS)
    assert readers and threading.main_thread() not in readers
    entry = next(e for e in panel.curves.entries if e.series is panel.series_by_path[record.path])
    assert entry.series.steps == list(range(1, 20001)) and entry.series.loss == losses
    raw = entry.curves["loss_raw" if panel.curves.reader.weight > 0 else "loss"]
    x, y = raw.getOriginalDataset()  # (drawn: a few points per pixel, peaks kept)
    assert list(x) == entry.series.steps and list(y) == losses  # the file's every step


def test_a_run_hidden_again_while_its_curves_are_read_stays_hidden(make_panel, qtbot, tmp_path):
    from tfstudio.gui.training.history import RunRecord

    write_logged_run(tmp_path / "run", 2000)
    record = RunRecord(str(tmp_path / "run"), "tiny-gpt", "task:reverse", "char",
                       "2026-12-02 09:00:00", status="completed", steps=2000)
    panel = make_panel()
    panel.set_overlay(record, True)
    panel.set_overlay(record, False)  # before the worker is done
    panel.background.wait()
    series = panel.series_by_path[record.path]
    assert not any(e.series is series and e.visible for e in panel.curves.entries)
    panel.set_overlay(record, True)  # read once: shown at once
    assert any(e.series is series and e.visible for e in panel.curves.entries)


def test_the_progress_bar_shows_a_new_step_painted_with_the_next_frame(qtbot):
    """A progress bar repaints at once when set, and that repaint painted everything waiting
    in the window (the canvas, a view) inside the progress line's task."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QProgressBar

    from tfstudio.gui.training.redraw_pacer import set_quietly

    bar = QProgressBar()
    qtbot.addWidget(bar)
    bar.setRange(0, 300)
    bar.setFormat("%v / %m steps")
    bar.show()
    qtbot.waitExposed(bar)
    settle(qtbot)
    painted = []

    class Paints(QObject):
        def eventFilter(self, watched, event):
            if event.type() == QEvent.Paint:
                painted.append(bar.text())
            return False
    paints = Paints()
    bar.installEventFilter(paints)
    set_quietly(bar, 42)
    assert bar.value() == 42 and painted == []  # nothing painted inside the call...
    qtbot.waitUntil(lambda: bool(painted), timeout=2000)
    assert painted[-1] == "42 / 300 steps"  # ...the new step with the next frame


@pytest.mark.slow
def test_a_runs_newest_look_is_drawn_in_a_task_after_its_last(make_panel, qtbot, monkeypatch):
    """The run's last task (its end: progress, history, buttons) no longer also draws the
    look the redraw budget held back: that comes in the next task."""
    from tfstudio.gui.training import redraw_pace

    monkeypatch.setattr(redraw_pace, "PROBE_REDRAW_SHARE", 1e-6)  # looks wait past the end
    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.positions)
    at_end = []
    panel.run_ended.connect(lambda _event: at_end.append((panel.snapshot or {}).get("step")))
    run = short_run(panel, qtbot, steps=12, probe_every=2)
    last = run.latest_probe["step"]
    assert at_end and at_end[0] != last  # not drawn in the run's last task...
    assert panel.snapshot["step"] == last  # ...but right after it


@pytest.mark.slow
def test_a_look_inside_is_drawn_in_a_task_after_the_drain_that_brings_it(make_panel, qtbot):
    """The events a run reports are drained in one task; the look among them is drawn in the
    next (the first look of a run was drawn inside the drain, one long task)."""
    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.positions)
    drawn_in_drain = []

    def probed(look):  # in the drain, after the pacer took the look
        drawn_in_drain.append((panel.snapshot or {}).get("step") == look["step"])
    panel.run_started.connect(lambda run: run.probed.connect(probed))
    run = short_run(panel, qtbot, steps=8, probe_every=2)
    assert drawn_in_drain and not any(drawn_in_drain)
    assert panel.snapshot["step"] == run.latest_probe["step"]  # each drawn after all


def test_the_next_token_chart_keeps_its_axes_while_the_candidates_stay(qtbot, monkeypatch):
    """Each look inside set the chart's ticks and a top of 1.1 times its tallest bar, which
    redrew both axes at every look: the labels are set when the candidates change, the top
    moves through 0.1, 0.2, 0.5 and 1."""
    from tfstudio.gui.training.next_token_view import NextTokenView

    view = NextTokenView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitExposed(view)

    def look(probs):
        view.set_logits(np.log(np.asarray(probs)), lambda i: "abcdefghij"[i])
        settle(qtbot)
    look([0.30, 0.25, 0.15, 0.10, 0.08, 0.05, 0.04, 0.02, 0.006, 0.004])
    drawn = Counter()
    paint = pg.AxisItem.paint

    def counted(axis, *args):
        if axis.picture is None:
            drawn[axis.orientation] += 1
        return paint(axis, *args)
    monkeypatch.setattr(pg.AxisItem, "paint", counted)
    look([0.32, 0.24, 0.14, 0.10, 0.08, 0.05, 0.04, 0.02, 0.006, 0.004])  # the next look
    assert drawn == Counter() and view.chart.viewRange()[1] == [0.0, 0.5]
    np.testing.assert_allclose(view.kept_bars.opts["height"][:2], [0.32, 0.24], rtol=1e-5)
    look([0.70, 0.10, 0.06, 0.05, 0.03, 0.02, 0.02, 0.01, 0.006, 0.004])  # a surer model
    assert drawn == Counter({"left": 1}) and view.chart.viewRange()[1] == [0.0, 1.0]


@pytest.mark.slow
def test_a_live_look_recolours_the_canvas_in_the_task_after_its_view(open_training_window,
                                                                     qtbot, monkeypatch):
    """A look's view is drawn in one task, the canvas recoloured in the next: the two together
    were the longest task of a run on the views of the insides."""
    from tfstudio.gui.training.strip import StripLegend

    w = open_training_window((1366, 768))
    w.training.show_panel()
    panel = w.training.panel
    panel.tabs.setCurrentWidget(panel.attention)
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    pacer, calls, inside = panel.pacer, [], []
    draw, recolour = pacer.show_pending_probe, panel.refresh_telemetry

    def drawing():
        inside.append(1)
        try:
            draw()
        finally:
            inside.pop()

    def recolouring():
        calls.append(("recolour in the look's task" if inside else "recolour",
                      (panel.snapshot or {}).get("step")))
        recolour()
    monkeypatch.setattr(pacer, "show_pending_probe", drawing)
    monkeypatch.setattr(panel, "refresh_telemetry", recolouring)
    pacer.probe_timer.timeout.disconnect()
    pacer.probe_timer.timeout.connect(drawing)
    run = short_run(panel, qtbot, steps=8, probe_every=2)
    qtbot.waitUntil(lambda: calls and calls[-1][1] == run.latest_probe["step"], timeout=WAIT_MS)
    assert calls and all(what == "recolour" for what, _ in calls)
    legend = w.view.findChild(StripLegend)
    assert f"at step {run.latest_probe['step']:,}" in legend.lines[0]  # the newest look's colours


def test_a_views_plot_paints_count_in_the_looks_redraw_budget(make_panel, qtbot):
    """A plot paints with the next frame, after the look's task: what the shown view's plots
    spend painting is added to what a look costs (the curves' paints stay the curves')."""
    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.next_token)
    settle(qtbot)
    pacer = panel.pacer
    pacer.plots_painting_s()  # from now on
    panel.curves.plots.take_painting_s()
    panel.next_token.plots.viewport().repaint()
    assert pacer.plots_painting_s() > 0 and pacer.plots_painting_s() == 0  # taken once
    panel.tabs.setCurrentWidget(panel.curves)
    settle(qtbot)
    panel.curves.plots.viewport().repaint()
    assert pacer.plots_painting_s() == 0 and panel.curves.plots.take_painting_s() > 0


@pytest.mark.slow
def test_a_run_opened_while_another_is_read_is_the_one_shown(make_panel, qtbot, tmp_path):
    """Opening a long run, then (before its curves are read) one read before: the second
    stays shown when the first's curves arrive."""
    from pathlib import Path

    from tfstudio.gui.training.history import RunRecord

    records = []
    for name, steps in (("long", 20000), ("short", 200)):
        write_logged_run(tmp_path / name, steps)
        records.append(RunRecord(str(tmp_path / name), name, "task:reverse", "char",
                                 "2026-12-02 09:00:00", status="completed", steps=steps))
    long, short = records
    panel = make_panel()
    panel.open_run(short)
    panel.background.wait()
    assert panel.viewed.path == Path(short.path)
    panel.open_run(long)
    panel.open_run(short)  # read before: opens at once
    panel.background.wait()
    settle(qtbot)
    assert panel.viewed.path == Path(short.path)
