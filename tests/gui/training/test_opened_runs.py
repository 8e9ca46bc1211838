"""Past runs in the Train workspace, without Qt (gui/training/opened_runs.py, driven through a
panel whose worker answers when told): a run's curves read once, overlaid or hidden as last
asked, nothing shown of a run forgotten meanwhile, and a training run neither forgotten nor
reopened as a past one. With the real widgets: test_shown_state.py, test_smooth_views.py."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.gui.training import opened_runs
from tfstudio.gui.training.history import RunRecord
from tfstudio.gui.training.opened_runs import OpenedRuns
from tfstudio.gui.training.series import RunSeries

RECORD = RunRecord("/runs/a", "tiny-gpt", started="2026-12-06 04:28:00")


class Later:
    """A worker whose jobs run when ``finish`` is called."""

    def __init__(self):
        self.jobs = []

    def submit(self, fn, done, key="", error=None):
        self.jobs.append((fn, done))

    def finish(self):
        jobs, self.jobs = self.jobs, []
        for fn, done in jobs:
            done(fn())


class Curves:
    def __init__(self):
        self.entries, self.visible = [], {}

    def add_series(self, series):
        self.entries.append(SimpleNamespace(series=series))
        self.visible[series.name] = True

    def set_visible(self, series, shown):
        self.visible[series.name] = shown

    def remove_series(self, series):
        self.entries = [e for e in self.entries if e.series is not series]
        self.visible.pop(series.name)


class Records:
    def __init__(self):
        self.kept = [RECORD]

    def records(self):
        return list(self.kept)

    def forget(self, path):
        self.kept = [r for r in self.kept if r.path != path]


def panel(monkeypatch, run=None):
    read = []

    def load_series(record):
        read.append(record.path)
        return RunSeries(record.label, steps=[1, 2], loss=[3.0, 2.0])
    monkeypatch.setattr(opened_runs, "load_series", load_series)
    said = []
    return SimpleNamespace(background=Later(), series_by_path={}, shown_paths=set(),
                           curves=Curves(), history=Records(), run=run, read=read,
                           message=said.append, said=said,
                           runs=SimpleNamespace(set_records=lambda records, shown: None))


def test_a_ticked_runs_curves_are_read_once_and_shown_as_last_asked(monkeypatch):
    p = panel(monkeypatch)
    runs = OpenedRuns(p)
    runs.set_overlay(RECORD, True)
    runs.set_overlay(RECORD, False)          # unticked before its curves were read
    p.background.finish()
    assert p.read == ["/runs/a"] and p.curves.visible == {"tiny-gpt · 04:28:00": False}
    runs.set_overlay(RECORD, True)           # read before: at once, no second read
    assert p.read == ["/runs/a"] and p.curves.visible == {"tiny-gpt · 04:28:00": True}
    assert len(p.curves.entries) == 1 and p.shown_paths == {"/runs/a"}


def test_a_run_forgotten_while_its_curves_are_read_shows_nothing(monkeypatch):
    p = panel(monkeypatch)
    runs = OpenedRuns(p)
    runs.set_overlay(RECORD, True)
    runs.forget_run(RECORD)
    p.background.finish()
    assert p.curves.entries == [] and p.series_by_path == {} and p.history.records() == []


def test_the_run_training_is_not_forgotten(monkeypatch):
    training = SimpleNamespace(active=True, run_dir=Path("/runs/a"))
    p = panel(monkeypatch, run=training)
    OpenedRuns(p).forget_run(RECORD)
    assert p.said == ["This run is training; stop it before forgetting it"]
    assert p.history.records() == [RECORD]
