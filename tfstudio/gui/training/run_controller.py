"""One training run on a worker thread, reported to the GUI through a queue drained by a timer.

The trainer calls its listeners on the training thread; the only thing a listener does here is
put the event on a queue. A QTimer on the GUI thread drains that queue a few dozen times a
second: step metrics go into the run's :class:`RunSeries`, and of the probe snapshots only the
newest is kept. Views redraw once per drain, never once per event, so a fast model cannot flood
the event loop. The trainer trains a deep copy of the graph, so editing the graph on the canvas
can never reach the running model.
"""
from __future__ import annotations

import queue
import threading
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from ...graph import Graph
from ...runs.config import TrainConfig
from ...train.events import (EvalMetrics, Failed, Finished, Probe, RouterMetrics, Started,
                             StepMetrics)
from .series import RunSeries

DRAIN_INTERVAL_MS = 100  # every wake-up takes the GIL from the trainer; the progress shows
                         # twice a second, the plots at most 4 times, the looks inside less


class TrainingRun(QObject):
    started = Signal(object)    # the Started event
    progressed = Signal()       # new points in ``series`` (at most once per drain)
    probed = Signal(object)     # the newest probe snapshot (a plain dict)
    ended = Signal(object)      # the Finished or Failed event
    state_changed = Signal(str)

    def __init__(self, graph: Graph, config: TrainConfig, run_dir: str | Path, *, name: str = "",
                 tokenizer=None, parent: QObject | None = None,
                 interval_ms: int = DRAIN_INTERVAL_MS):
        super().__init__(parent)
        self.graph = graph.clone()          # the run's own copy: later edits never reach it
        self.config = config
        self.run_dir = Path(run_dir)
        self.tokenizer = tokenizer
        self.series = RunSeries(name or str(graph.meta.get("name") or "graph"))
        self.latest_probe: dict | None = None
        self.end_event = None
        self.state = "idle"  # idle | running | paused | stopping | finished | failed
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._trainer = None
        self._pending: list[str] = []       # pause/stop asked before the trainer existed
        self._thread: threading.Thread | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.drain)

    # ------------------------------------------------------------------ control (GUI thread)
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this run has already been started; make a new TrainingRun")
        self._thread = threading.Thread(target=self._train, name="tfstudio-training",
                                        daemon=True)
        self._set_state("running")
        self._thread.start()
        self.timer.start()

    def pause(self) -> None:
        if self.state == "running":
            self._control("pause")
            self._set_state("paused")

    def resume(self) -> None:
        if self.state == "paused":
            self._control("resume")
            self._set_state("running")

    def stop(self) -> None:
        if self.state in ("running", "paused"):
            self._control("stop")
            self._set_state("stopping")

    @property
    def active(self) -> bool:
        return self.state in ("running", "paused", "stopping")

    def set_probe_text(self, text: str) -> None:
        """The next probe (and every later one) looks at ``text``."""
        self.config.probe_text = text  # the trainer reads its config at every probe

    def set_probe_every(self, steps: int) -> None:
        self.config.probe_every = max(0, int(steps))

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the training thread ends (for closing the app and for tests); the
        events it left are drained. True when it has ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        self.drain()
        return self._thread is None or not self._thread.is_alive()

    def _control(self, what: str) -> None:
        with self._lock:
            if self._trainer is None:
                self._pending.append(what)
            else:
                getattr(self._trainer, what)()

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    # ------------------------------------------------------------------ training thread
    def _train(self) -> None:
        try:
            from ...train.trainer import Trainer  # torch loads here, off the GUI thread

            trainer = Trainer(self.graph, self.config, run_dir=self.run_dir,
                              listeners=[self._events.put], tokenizer=self.tokenizer)
            with self._lock:
                self._trainer = trainer
                for what in self._pending:
                    getattr(trainer, what)()
            trainer.run()  # emits Finished or Failed itself; never raises for training faults
        except Exception as exc:  # noqa: BLE001 - set-up faults (a bad setting) reach the user too
            self._events.put(Failed(0, "error", f"{type(exc).__name__}: {exc}"))

    # ------------------------------------------------------------------ GUI thread
    def drain(self) -> None:
        """Move what the trainer reported into the series; signal progress once and each look
        inside in turn (the panel draws the newest within its budget)."""
        progressed, probes, started, end = False, [], None, None
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if isinstance(event, Probe):
                probes.append(event.data)  # each reaches the step slider; the views draw less
                continue
            self.series.add(event)
            if isinstance(event, Started):
                started = event
            elif isinstance(event, (Finished, Failed)):
                end = event
            elif isinstance(event, (StepMetrics, EvalMetrics, RouterMetrics)):
                progressed = True
        if started is not None:
            self.started.emit(started)
        if progressed:
            self.progressed.emit()
        for probe in probes:
            self.latest_probe = probe
            self.probed.emit(probe)
        if end is not None:
            self.timer.stop()
            self.end_event = end
            self._set_state("failed" if isinstance(end, Failed) else "finished")
            self.ended.emit(end)
