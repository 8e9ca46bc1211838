"""Jobs run one at a time on a worker thread, without Qt: a newer job with the same key makes an
older one's result stale, a cancelled one is dropped, a streaming job's reports are passed on
in order before its result, and one failing callback never loses the other jobs' results.
Whoever owns the jobs calls :meth:`Jobs.poll` on its own thread (background.py: a Qt timer on
the GUI thread), where every callback runs."""
from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class Jobs:
    """``submit(fn, done, key=...)``: a newer job with the same key makes an older one's result
    stale (it is dropped), so typing in a prompt never shows an old answer. A job may report
    partial results through the ``report`` callable it is given (streaming generation); they
    reach ``progress`` at the next poll, as a list of what arrived since the last delivery."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfstudio-probe")
        self._jobs: list[tuple[Future, str, int, Callable, Callable | None, Callable | None,
                               queue.SimpleQueue]] = []
        self._generation: dict[str, int] = {}
        self._cancelled: set[int] = set()
        self._closed = False
        self._lock = threading.Lock()

    def submit(self, fn: Callable, done: Callable[[Any], None], *, key: str = "",
               error: Callable[[Exception], None] | None = None,
               progress: Callable[[Any], None] | None = None, streaming: bool = False) -> int:
        """Run ``fn()`` (``fn(report)`` when ``streaming``) on the worker; returns a job id
        (-1 after :meth:`shutdown`: the app is closing, nothing runs any more)."""
        if self._closed:
            return -1
        with self._lock:
            number = self._generation.get(key, 0) + 1
            self._generation[key] = number
        reports: queue.SimpleQueue = queue.SimpleQueue()
        job_id = id(reports)

        def run():
            if job_id in self._cancelled:
                return None
            return fn(reports.put) if streaming else fn()

        future = self._pool.submit(run)
        self._jobs.append((future, key, number, done, error, progress, reports))
        return job_id

    def cancel(self, job_id: int) -> None:
        """A cancelled streaming job sees ``cancelled(job_id)`` turn True and should return."""
        self._cancelled.add(job_id)

    def cancelled(self, job_id: int) -> bool:
        return job_id in self._cancelled

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def wait(self, timeout: float = 10.0) -> bool:
        """Finish every job and deliver its result (tests, closing); whether jobs remain (one
        a callback submitted)."""
        for future, *_ in list(self._jobs):
            future.exception(timeout)
        return self.poll()

    def shutdown(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    def poll(self) -> bool:
        """Deliver what the jobs reported and the results of those done; whether jobs
        remain."""
        jobs, self._jobs = self._jobs, []
        remaining = []
        for job in jobs:
            try:
                if not self._deliver(job):
                    remaining.append(job)
            except Exception:  # noqa: BLE001 - one failing callback never loses the other jobs
                sys.excepthook(*sys.exc_info())  # the app's hook shows it; the app carries on
        self._jobs = remaining + self._jobs  # jobs a callback submitted meanwhile come last
        return bool(self._jobs)

    def _deliver(self, job) -> bool:
        """Pass on what ``job`` reported and, once it is done, its result; False: not done."""
        future, key, number, done, error, progress, reports = job
        if progress is not None:
            items = []
            while True:
                try:
                    items.append(reports.get_nowait())
                except queue.Empty:
                    break
            if items:
                progress(items)
        if not future.done():
            return False
        if self._generation.get(key) != number or id(reports) in self._cancelled:
            return True  # stale: a newer job with the same key has been asked for
        exc = future.exception()
        if exc is None:
            done(future.result())
        elif error is not None:
            error(exc)
        else:
            raise exc
        return True
