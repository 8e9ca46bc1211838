"""The Compare view: ticked switch values train as variants on a worker thread, the curves and
the table fill in, and Export writes the same report as ``tfstudio compare``."""
import json

from tfstudio import load_graph
from tfstudio.gui.training.compare_view import CompareView


def test_compare_view_trains_the_ticked_variants_and_exports(qtbot, tmp_path):
    view = CompareView(load_graph("tiny-gpt"), out_dir=tmp_path)
    qtbot.addWidget(view)
    view.steps.setValue(10)
    view.boxes[("attention", "mha")].setChecked(True)
    view.boxes[("attention", "mqa")].setChecked(True)
    with qtbot.waitSignal(view.finished, timeout=240_000):
        assert view.run()
    assert view.table.rowCount() == 2
    names = [view.table.item(r, 0).text() for r in range(2)]
    assert names == ["attention=mha", "attention=mqa"]
    for name, row in zip(names, range(2)):
        run = tmp_path / "runs" / name.replace("=", "-") / "seed-1337"
        records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        final = [r["val_loss"] for r in records if r["kind"] == "EvalMetrics"][-1]
        assert view.table.item(row, 4).text() == f"{final:.3f}"
        steps, losses = view._curves[name].getData()
        assert list(steps) == list(range(1, 11))
    page = view.export()
    assert page is not None and "attention=mqa" in page.read_text()
    assert (tmp_path / "plots" / "loss_curves.png").exists()


def test_compare_view_says_why_it_cannot_run(qtbot, tmp_path):
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    assert not view.run()
    assert "tick at least one value" in view.status.text()


def test_a_lesson_is_one_click_and_exports_its_page(qtbot, tmp_path, monkeypatch):
    import dataclasses

    from tfstudio.experiments.lessons import LESSONS

    short = dataclasses.replace(LESSONS["attention"],
                                training={**LESSONS["attention"].training, "steps": 10,
                                          "eval_every": 5},
                                measure=None)  # decode timing has its own tests
    monkeypatch.setitem(LESSONS, "attention", short)  # the lesson itself, 10 steps long
    view = CompareView(out_dir=tmp_path)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.finished, timeout=240_000):
        view.lesson_buttons["attention"].click()
    assert view.table.rowCount() == 3
    page = view.export().read_text()
    assert short.title in page and "4:2:1" in page and "Verdict:" in page
