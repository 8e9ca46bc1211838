"""The training views' background worker: results come back on the GUI thread, a job a
callback submits is kept, and a streaming job's reports (generated tokens) arrive while it runs,
in order, the last before its result. (Which results are stale and a raising callback, without
Qt: test_jobs.py.)"""
from __future__ import annotations

import threading

from tfstudio.gui.training.background import Background


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
