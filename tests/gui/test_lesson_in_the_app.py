"""A lesson picked in the app (the Lessons dock, "Train it in Compare") trains its variants over
its seeds in the Compare view and ends on its verdict, table and plots, computed by the lessons
framework from the run folders, the same page ``tfstudio lesson`` writes; made-up results in
those folders flip the verdict the app shows; "Open this variant" puts the variant's graph on
the canvas and its run in Runs."""
from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

import pytest

from tfstudio.experiments.lessons import LESSONS
from tfstudio.graph import load_graph_file
from tfstudio.graph.compare import same_model
from tfstudio.gui.lessons_panel import NAME_ROLE

# trains six tiny runs and reads their folder back three times: 15-21 s on the busy 2-core
# machine, most of it torch's first optimizer import and the report's pictures
pytestmark = pytest.mark.slow

SEEDS = (1, 2)
# the attention lesson at a tiny budget: 3 steps of 2 x 16 tokens; no decode timing (it has
# tests of its own and takes a minute)
TINY = dict(corpus="sample:small", steps=3, batch_size=2, seq_len=16, eval_every=3, eval_batches=1)


@pytest.fixture
def tiny_attention(monkeypatch):
    lesson = LESSONS["attention"]
    short = dataclasses.replace(lesson, training={**lesson.training, **TINY}, seeds=SEEDS,
                                measure=None)
    monkeypatch.setitem(LESSONS, "attention", short)
    return short


def _compare_of(window):
    panel = window.training.panel
    return next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                if panel.tabs.tabText(i) == "Compare")


def _val_losses(folder: Path, slug: str) -> list[float]:
    """Each seed's last validation loss, read from its metrics.jsonl."""
    out = []
    for seed in SEEDS:
        lines = (folder / "runs" / slug / f"seed-{seed}" / "metrics.jsonl").read_text()
        records = [json.loads(x) for x in lines.splitlines()]
        out.append([r["val_loss"] for r in records if r["kind"] == "EvalMetrics"][-1])
    return out


def _make_up(folder: Path, losses: dict[str, tuple[float, float]]) -> None:
    """Made-up results: every validation loss of each variant's seed 1 and 2 rewritten."""
    for slug, values in losses.items():
        for seed, value in zip(SEEDS, values):
            path = folder / "runs" / slug / f"seed-{seed}" / "metrics.jsonl"
            records = [json.loads(x) for x in path.read_text().splitlines()]
            for r in records:
                if r["kind"] == "EvalMetrics":
                    r["val_loss"] = value
            path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _shown_again(qtbot, compare, folder) -> str:
    with qtbot.waitSignal(compare.finished, timeout=60_000):
        assert compare.open_comparison(folder)
    return compare.results.verdict_text()


def test_a_lesson_picked_in_the_app_trains_to_its_verdict_and_flips_with_its_results(
        open_training_window, qtbot, tiny_attention):
    window = open_training_window()
    window.show_lessons()
    lessons = window.lessons
    row = next(r for r in range(lessons.list.count())
               if lessons.list.item(r).data(NAME_ROLE) == "attention")
    lessons.list.setCurrentRow(row)
    compare = _compare_of(window)
    with qtbot.waitSignal(compare.finished, timeout=120_000):
        lessons.train_button.click()
        assert compare.busy() and compare.progress.isVisible()
        assert compare.progress.maximum() == 3 * len(SEEDS) * TINY["steps"]
    folder = Path(compare.folder)

    # the verdict the app shows is the lesson's, from these runs' numbers
    text = compare.results.verdict_text()
    assert tiny_attention.title in text and "Verdict: " in text
    mha = _val_losses(folder, "attention-mha")
    expected = f"MHA {statistics.fmean(mha):.3f} ± {statistics.stdev(mha):.3f}"
    assert expected in text
    page = (folder / "report.md").read_text()   # and the page the command line writes
    verdict = next(line for line in text.splitlines() if line.startswith("Verdict: "))
    assert verdict in page
    # the report's table, KV bytes naming their dtype
    table = compare.results.table
    header = [table.horizontalHeaderItem(c).text().replace("\n", " ")
              for c in range(table.columnCount())]
    assert "KV bytes/token (float32)" in header
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert names == ["attention=mha", "attention=gqa", "attention=mqa"]
    assert table.item(0, header.index("final val loss")).text() == expected.removeprefix("MHA ")
    # every run joined Runs, named by variant and seed
    records = [r.architecture for r in window.training.panel.history.records()]
    assert sorted(records) == sorted(f"attention={k} seed {s}" for k in ("mha", "gqa", "mqa")
                                     for s in SEEDS)

    # made-up results where every part of the claim holds ...
    _make_up(folder, {"attention-mha": (1.00, 1.02), "attention-gqa": (1.01, 1.03),
                      "attention-mqa": (2.00, 2.02)})
    text = _shown_again(qtbot, compare, folder)
    assert "Verdict: holds here" in text
    assert "MQA pays for its smaller cache in quality" in text
    # ... and where MQA beats MHA: the verdict and its sentence turn
    _make_up(folder, {"attention-mqa": (0.50, 0.52)})
    text = _shown_again(qtbot, compare, folder)
    assert "Verdict: mixed" in text and "Verdict: holds here" not in text
    assert "MQA came out better than MHA" in text
    assert compare.results.table.item(2, header.index("final val loss")).text() == \
        "0.510 ± 0.014"

    # "Open this variant": its graph on the canvas, its run opened in Runs
    panel = window.training.panel
    compare.results.table.selectRow(2)
    compare.results.seed.setCurrentIndex(1)
    compare.results.open_button.click()
    panel.background.wait()  # its curves are read off the GUI thread
    run_dir = folder / "runs" / "attention-mqa" / "seed-2"
    assert panel.viewed.path == run_dir
    assert same_model(window.session.root,
                      load_graph_file(folder / "variants" / "attention-mqa.json"))
    assert panel.tabs.tabText(panel.tabs.currentIndex()) == "Runs"
    assert panel.runs.item_of(str(run_dir)) is not None
