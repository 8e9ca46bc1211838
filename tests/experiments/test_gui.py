"""The Compare view: the form (corpus and tokenizer pickers, steps, learning rate, seeds) reaches
the runs it trains; a task's table has answer accuracy and its report exports; every empty plot
says why; bad input is refused in one line; a lesson fills the form with its own settings."""
import json
import statistics
import time
from pathlib import Path

from PySide6.QtCore import Qt

from tfstudio import load_graph
from tfstudio.runs import RunFolder
from tfstudio.experiments.lessons import LESSONS
from tfstudio.gui.training.compare_results import LOSS, LOSS_HINT, OTHER_PLOTS
from tfstudio.gui.training.compare_view import FIXED, CompareView


def _records(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


def test_a_task_comparison_trains_the_picked_settings_and_shows_answer_accuracy(qtbot,
                                                                               tmp_path):
    view = CompareView(load_graph("tiny-gpt"), out_dir=tmp_path)
    qtbot.addWidget(view)
    view.corpus.setCurrentIndex(view.corpus.findData("task:reverse"))
    view.tokenizer.setCurrentText("byte")
    view.steps.setValue(3)
    view.lr.setValue(0.002)
    view.seeds.setText("1,2")
    assert not view.lengths.isEnabled()   # a task has no loss by position
    view.boxes[("attention", "mqa")].setChecked(True)   # one variant: two runs, kept short
    with qtbot.waitSignal(view.finished, timeout=120_000):
        assert view.run()
    config = json.loads((view.folder / "compare.json").read_text())["config"]
    assert (config["corpus"], config["tokenizer"], config["steps"], config["lr"]) == \
        ("task:reverse", "byte", 3, 0.002)
    table = view.results.table
    header = [table.horizontalHeaderItem(c).text().replace("\n", " ")
              for c in range(table.columnCount())]
    assert "answer accuracy" in header and "KV bytes/token (float32)" in header
    assert table.rowCount() == 1
    for row, slug in enumerate(("attention-mqa",)):
        accuracies = [[r["accuracy"] for r in _records(view.folder / "runs" / slug /
                                                       f"seed-{seed}")
                       if r["kind"] == "EvalMetrics"][-1] for seed in (1, 2)]
        expected = (f"{statistics.fmean(accuracies):.1%} ± "
                    f"{statistics.stdev(accuracies):.1%}")
        assert table.item(row, header.index("answer accuracy")).text() == expected
    page = view.export()
    assert page is not None and "answer accuracy" in page.read_text()
    # a comparison of your own has no claim: the view says so rather than invent a verdict
    assert "no claim to judge" in view.results.verdict_text()
    assert "Verdict" not in view.results.verdict_text().split("\n", 1)[1]


def test_every_empty_plot_says_why(qtbot, tmp_path):
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    results = view.results
    assert results.plot_choice.currentText() == LOSS
    assert results.hints["loss"].isVisible()
    assert results.hints["loss"].toPlainText() == LOSS_HINT
    for name, (_, hint) in OTHER_PLOTS.items():
        results.plot_choice.setCurrentText(name)
        assert results.hints["other"].isVisible() and results.hints["other"].toPlainText() == hint
    assert "verdict appears here" in results.verdict_text()


def test_compare_view_says_why_it_cannot_run(qtbot, tmp_path):
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    assert not view.run()
    assert "tick at least one value" in view.status.text()
    view.boxes[("attention", "mha")].setChecked(True)
    view.seeds.setText("1,1")
    assert not view.run()
    assert view.status.text().startswith("Cannot run: Seeds needs distinct seeds") and not view.busy()
    view.seeds.setText("1,x")
    assert not view.run() and "whole numbers" in view.status.text()


def test_picking_a_lesson_shows_its_settings_and_fixes_what_its_claim_was_measured_with(
        qtbot, tmp_path):
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    lesson = LESSONS["norm"]
    view.choose_lesson("norm")
    assert view.lesson.currentData() == "norm"
    assert view.steps.value() == lesson.training["steps"] and view.steps.isEnabled()
    assert view.lr.value() == lesson.training["lr"] and not view.lr.isEnabled()
    assert view.tokenizer.currentText() == lesson.training["tokenizer"]
    assert view.seeds.text() == ",".join(map(str, lesson.seeds))
    assert view.corpus.toolTip() == FIXED and not view.corpus.isEnabled()
    assert view.switches.isHidden() and lesson.claim[:40] in view.claim.text()
    view.choose_lesson(None)                  # back to a comparison of your own
    assert view.lr.isEnabled() and not view.switches.isHidden()
    assert view.corpus.toolTip() != FIXED


def test_a_corpus_that_is_not_there_is_named_in_one_line_and_nothing_is_shown(qtbot, tmp_path):
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    view.corpus.setEditText(str(tmp_path / "no-such-file.txt"))
    view.boxes[("attention", "mha")].setChecked(True)
    view.seeds.setText("1")
    if view.run():   # refused at once, or by the worker when it reads the corpus
        qtbot.waitUntil(lambda: not view.busy() and not view.timer.isActive(), timeout=60_000)
    text = view.status.text()
    assert "no-such-file.txt" in text and "\n" not in text
    assert text.startswith(("Cannot run: ", "Compare failed: "))
    assert view.results.shown is None and view.run_button.isEnabled()


def test_stop_ends_a_running_comparison_and_says_where_each_run_stopped(qtbot, tmp_path):
    view = CompareView(load_graph("tiny-gpt"), out_dir=tmp_path)
    qtbot.addWidget(view)
    view.corpus.setCurrentIndex(view.corpus.findData("task:reverse"))
    view.tokenizer.setCurrentText("byte")
    view.steps.setValue(100_000)   # hours of training: only Stop ends it within the test
    view.seeds.setText("1")
    for value in ("mha", "mqa"):
        view.boxes[("attention", value)].setChecked(True)
    assert not view.stop_button.isEnabled()
    assert view.run()
    assert view.stop_button.isEnabled() and not view.run_button.isEnabled()
    qtbot.waitUntil(lambda: view.results.steps_done() >= 1, timeout=60_000)
    joined = []
    view.runs_ready.connect(joined.extend)
    qtbot.mouseClick(view.stop_button, Qt.LeftButton)
    asked = time.perf_counter()
    qtbot.waitUntil(lambda: not view.busy(), timeout=10_000)
    assert time.perf_counter() - asked < 5.0
    qtbot.waitUntil(lambda: not view.timer.isActive(), timeout=5_000)   # "done" drained
    assert view.run_button.isEnabled() and not view.stop_button.isEnabled()
    first = view.folder / "runs" / "attention-mha" / "seed-1"
    records = _records(first)
    end = records[-1]
    assert (end["kind"], end["reason"]) == ("Finished", "stopped")
    logged = [r["step"] for r in records if r["kind"] == "StepMetrics"]
    assert logged[-1] == end["step"] and 1 <= end["step"] < 100_000   # its last step logged
    assert RunFolder(first).latest() is not None                       # and checkpointed
    assert not (view.folder / "runs" / "attention-mqa" / "seed-1" / "metrics.jsonl").exists()
    text = view.status.text()
    assert f"Stopped: attention=mha seed 1 at step {end['step']:,} of 100,000" in text
    assert "not started: attention=mqa seed 1" in text and "\n" not in text
    assert view.results.shown is None   # no verdict from runs cut short
    # the stopped run joins Runs, where its steps can be opened; the one not started does not
    assert joined == [(str(first), f"attention=mha seed 1 (stopped at step {end['step']})")]


def test_a_stopped_comparison_names_each_runs_end_from_its_folder(tmp_path):
    """The words flip with what the folders hold: a run that completed is not called stopped."""
    from tfstudio.gui.training.compare_job import RunEnd, stopped_text
    cut = RunEnd("norm=rmsnorm", 1, tmp_path, "stopped", 1234, 5000)
    done = RunEnd("norm=layernorm", 1, tmp_path, "completed", 5000, 5000)
    assert stopped_text([done, cut]) == ("Stopped: norm=rmsnorm seed 1 at step 1,234 of 5,000; "
                                         "finished: norm=layernorm seed 1. Every step logged "
                                         "and checkpoint written is kept.")
    cut.state = "completed"
    assert stopped_text([done, cut]).startswith("Stopped before the page was written; "
                                                "finished: norm=layernorm seed 1, norm=rmsnorm")
