"""Work off the GUI thread: one worker thread for the looks inside, generation and the like
(results come back on the GUI thread), and cyclic garbage collected on the GUI thread only."""
from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

from .jobs import Jobs


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
    """Runs jobs one at a time on a worker thread (:class:`~.jobs.Jobs`: which results are
    stale, streaming, failing callbacks); a timer brings the results back on the GUI thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 25):
        super().__init__(parent)
        self.jobs = Jobs()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._poll)

    def submit(self, fn: Callable, done: Callable[[Any], None], *, key: str = "",
               error: Callable[[Exception], None] | None = None,
               progress: Callable[[Any], None] | None = None, streaming: bool = False) -> int:
        """:meth:`Jobs.submit`, its results delivered on the GUI thread."""
        job_id = self.jobs.submit(fn, done, key=key, error=error, progress=progress,
                                  streaming=streaming)
        if job_id != -1:
            self._timer.start()
        return job_id

    def cancel(self, job_id: int) -> None:
        self.jobs.cancel(job_id)

    def cancelled(self, job_id: int) -> bool:
        return self.jobs.cancelled(job_id)

    @property
    def busy(self) -> bool:
        return self.jobs.busy

    def wait(self, timeout: float = 10.0) -> None:
        """Finish every job and deliver its result (tests, closing)."""
        if not self.jobs.wait(timeout):
            self._timer.stop()

    def shutdown(self) -> None:
        self._timer.stop()
        self.jobs.shutdown()

    def _poll(self) -> None:
        if not self.jobs.poll():
            self._timer.stop()
