"""The training views' background worker: results come back on the GUI thread, a newer job
with the same key makes an older one's result stale, and a callback that raises is reported
without losing the other jobs' results."""
from __future__ import annotations

import sys

from tfstudio.gui.training.background import Background


def test_a_raising_callback_is_reported_and_the_other_results_still_arrive(qtbot, monkeypatch):
    background = Background()
    reported, results = [], []
    monkeypatch.setattr(sys, "excepthook", lambda kind, exc, tb: reported.append(exc))

    def broken(_result):
        raise RuntimeError("a slot that fails")

    background.submit(lambda: 1, broken, key="a")
    background.submit(lambda: 2, results.append, key="b")
    background.submit(lambda: 3, results.append, key="b")  # makes the 2 stale
    background.wait()
    assert results == [3]
    assert [str(e) for e in reported] == ["a slot that fails"]
    assert not background.busy
    background.shutdown()


def test_a_job_submitted_by_a_callback_is_kept(qtbot):
    background = Background()
    results = []
    background.submit(lambda: 1, lambda r: background.submit(lambda: r + 1, results.append,
                                                             key="second"), key="first")
    background.wait()
    qtbot.waitUntil(lambda: results == [2], timeout=5000)
    background.shutdown()
