"""The training views' background worker: results come back on the GUI thread, a newer job
with the same key makes an older one's result stale, a callback that raises is reported
without losing the other jobs' results, and a streaming job's reports (generated tokens) arrive
while it runs, in order, the last before its result."""
from __future__ import annotations

import sys
import threading

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


def test_a_streaming_job_shows_each_report_in_order_while_it_runs_and_the_last_before_done(
        qtbot):
    background = Background()
    events: list[tuple[str, object]] = []
    first_shown = threading.Event()

    def job(report):  # as generation reports each token as it comes
        report("a")
        if not first_shown.wait(5):  # the GUI shows "a" while the job still runs
            return "a was never shown"
        report("b")
        report("c")
        return "done"

    def progress(items) -> None:
        events.append(("progress", list(items)))
        first_shown.set()

    background.submit(job, lambda result: events.append(("done", result)), key="generate",
                      progress=progress, streaming=True)
    qtbot.waitUntil(lambda: bool(events) and events[-1][0] == "done", timeout=5000)
    assert events[0] == ("progress", ["a"])
    assert [item for kind, items in events[:-1] for item in items] == ["a", "b", "c"]
    assert events[-1] == ("done", "done")
    background.shutdown()
