"""Jobs on a worker thread, without Qt (gui/training/jobs.py): a newer job with the same key
makes an older one's result stale, a cancelled one is dropped, a callback that raises is
reported without losing the other jobs' results, and a streaming job's reports come in order
before its result. Delivered on the GUI thread by a timer: test_background_jobs.py."""
from __future__ import annotations

import sys
import threading
import time

from tfstudio.gui.training.jobs import Jobs


def test_a_raising_callback_is_reported_and_the_other_results_still_arrive(monkeypatch):
    jobs = Jobs()
    reported, results = [], []
    monkeypatch.setattr(sys, "excepthook", lambda kind, exc, tb: reported.append(exc))

    def broken(_result):
        raise RuntimeError("a slot that fails")

    jobs.submit(lambda: 1, broken, key="a")
    jobs.submit(lambda: 2, results.append, key="b")
    jobs.submit(lambda: 3, results.append, key="b")  # makes the 2 stale
    jobs.wait()
    assert results == [3]
    assert [str(e) for e in reported] == ["a slot that fails"]
    assert not jobs.busy
    jobs.shutdown()


def test_a_failed_job_reaches_its_error_callback_and_a_cancelled_one_nothing():
    jobs = Jobs()
    errors, results = [], []
    jobs.submit(lambda: 1 / 0, results.append, key="a", error=errors.append)
    release = threading.Event()
    cancelled = jobs.submit(lambda: release.wait(5) and "late", results.append, key="b")
    jobs.cancel(cancelled)
    assert jobs.cancelled(cancelled)
    release.set()
    assert not jobs.wait()
    assert results == [] and [type(e) for e in errors] == [ZeroDivisionError]
    jobs.shutdown()
    assert jobs.submit(lambda: 2, results.append) == -1 and not jobs.busy   # closing


def test_a_streaming_jobs_reports_come_in_order_each_poll_and_the_last_before_its_result():
    jobs = Jobs()
    events: list[tuple[str, object]] = []
    go_on = threading.Event()

    def job(report):
        report("a")
        go_on.wait(5)
        report("b")
        report("c")
        return "done"

    jobs.submit(job, lambda result: events.append(("done", result)), key="generate",
                progress=lambda items: events.append(("progress", items)), streaming=True)
    while not events:            # the first report, while the job still runs
        jobs.poll()
        time.sleep(0.01)
    assert events == [("progress", ["a"])] and jobs.busy
    go_on.set()
    while jobs.poll():
        time.sleep(0.01)
    assert [item for kind, items in events[:-1] for item in items] == ["a", "b", "c"]
    assert events[-1] == ("done", "done")
    jobs.shutdown()
