"""Work off the GUI thread: one worker thread for the looks inside, generation and the like
(results come back on the GUI thread), and cyclic garbage collected on the GUI thread only."""
from __future__ import annotations

import gc
import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, QTimer

class GuiThreadGarbageCollector(QObject):
    """Collect cyclic garbage on the GUI thread only, while worker threads run Python.

    Python's cyclic collector runs in whichever thread happens to allocate. If that is a
    worker thread (the looks inside, the compare view's training) and the garbage holds Qt
    objects (a removed plot curve, a closed dialog), their C++ destructors run off the GUI
    thread, and can deadlock against a GUI thread that holds a Qt lock while waiting for the
    GIL. So automatic collection is switched off and a timer collects, generation by
    generation as the thresholds say, on the GUI thread (the remedy pyqtgraph documents for
    threaded applications). ``stop`` restores the collector."""

    _holders = 0                 # collectors alive: automatic collection stays off while > 0
    _was_enabled = True

    def __init__(self, parent: QObject | None = None, interval_ms: int = 500):
        super().__init__(parent)
        cls = GuiThreadGarbageCollector
        if cls._holders == 0:
            cls._was_enabled = gc.isenabled()
            gc.disable()
        cls._holders += 1
        self._stopped = False
        self._thresholds = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect)
        self._timer.start()

    def collect(self) -> None:
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self._thresholds[generation]:
                break
            gc.collect(generation)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._timer.stop()
        gc.collect()
        cls = GuiThreadGarbageCollector
        cls._holders -= 1
        if cls._holders == 0 and cls._was_enabled:
            gc.enable()


class Background(QObject):
    """Runs jobs one at a time on a worker thread; results come back on the GUI thread.

    ``submit(fn, done, key=...)``: a newer job with the same key makes an older one's result
    stale (it is dropped), so typing in a prompt never shows an old answer. A job may report
    partial results through the ``report`` callable it is given (streaming generation); they
    reach ``progress`` on the GUI thread, as a list of what arrived since the last delivery."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 25):
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfstudio-probe")
        self._jobs: list[tuple[Future, str, int, Callable, Callable | None, Callable | None,
                               queue.SimpleQueue]] = []
        self._generation: dict[str, int] = {}
        self._cancelled: set[int] = set()
        self._closed = False
        self._lock = threading.Lock()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._poll)

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
        self._timer.start()
        return job_id

    def cancel(self, job_id: int) -> None:
        """A cancelled streaming job sees ``cancelled(job_id)`` turn True and should return."""
        self._cancelled.add(job_id)

    def cancelled(self, job_id: int) -> bool:
        return job_id in self._cancelled

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def wait(self, timeout: float = 10.0) -> None:
        """Finish every job and deliver its result (tests, closing)."""
        for future, *_ in list(self._jobs):
            future.exception(timeout)
        self._poll()

    def shutdown(self) -> None:
        self._closed = True
        self._timer.stop()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _poll(self) -> None:
        jobs, self._jobs = self._jobs, []
        remaining = []
        for job in jobs:
            try:
                if not self._deliver(job):
                    remaining.append(job)
            except Exception:  # noqa: BLE001 - one failing callback never loses the other jobs
                sys.excepthook(*sys.exc_info())  # the app's hook shows it; the app carries on
        self._jobs = remaining + self._jobs  # jobs a callback submitted meanwhile come last
        if not self._jobs:
            self._timer.stop()

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
