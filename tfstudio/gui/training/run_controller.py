"""One training run in a child process, reported to the GUI through a queue drained by a timer.

The run trains in its own process (:mod:`tfstudio.train.child`), so the trainer and the event
loop never wait for each other's interpreter lock; a relay thread here moves what the child
sends onto a queue. A QTimer on the GUI thread drains that queue a few times a second: step
metrics go into the run's :class:`RunSeries`, and each probe snapshot is signalled in turn.
Views redraw once per drain, never once per event, so a fast model cannot flood the event loop.
The child trains a copy of the graph, so editing the graph on the canvas can never reach the
running model.
"""
from __future__ import annotations

import queue
import threading
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from ...graph import Graph
from ...runs.config import TrainConfig
from ...train.child import TrainingProcess
from ...train.events import Failed
from .run_events import after_command, ended_state, take_events
from .series import RunSeries
from .shown_state import ACTIVE

DRAIN_INTERVAL_MS = 100  # the progress shows twice a second, the plots at most 4 times
# cores the child's torch threads leave to the event loop (see TrainingProcess): on two cores,
# giving the child both measured no faster and with worse outliers (docs/BENCHMARKS.md)
LEAVE_CORES = 1


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
        self._child: TrainingProcess | None = None
        self._thread: threading.Thread | None = None   # relays the child's events
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.drain)

    # ------------------------------------------------------------------ control (GUI thread)
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this run has already been started; make a new TrainingRun")
        # commands sent before the child runs wait in its pipe
        self._child = TrainingProcess(self.graph, self.config, self.run_dir,
                                      tokenizer=self.tokenizer, leave_cores=LEAVE_CORES)
        self._thread = threading.Thread(target=self._relay, name="tfstudio-training-relay",
                                        daemon=True)
        self._set_state("running")
        self._thread.start()
        self.timer.start()

    def pause(self) -> None:
        self._command("pause")

    def resume(self) -> None:
        self._command("resume")

    def stop(self) -> None:
        self._command("stop")

    def _command(self, command: str) -> None:
        state = after_command(self.state, command)
        if state is not None:
            self._send(command)
            self._set_state(state)

    @property
    def process_id(self) -> int | None:
        """The training process's id (None until it has started)."""
        return self._child.pid if self._child is not None else None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    def set_probe_text(self, text: str) -> None:
        """The next probe (and every later one) looks at ``text``."""
        self.config.probe_text = text
        self._send("set", "probe_text", text)

    def set_probe_every(self, steps: int) -> None:
        self.config.probe_every = max(0, int(steps))
        self._send("set", "probe_every", self.config.probe_every)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the child has ended and its last event is relayed (for closing the app
        and for tests); the events are drained. True when it has ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        self.drain()
        return self._thread is None or not self._thread.is_alive()

    def kill(self) -> None:
        """End the child at once (closing the app when a stop did not end it in time)."""
        if self._child is not None:
            self._child.kill()

    def _send(self, command: str, *args) -> None:
        if self._child is not None:
            self._child.send(command, *args)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    # ------------------------------------------------------------------ relay thread
    def _relay(self) -> None:
        try:
            self._child.start()  # the first run of a session waits for torch to import
            for event in self._child.events():
                self._events.put(event)
        except Exception as exc:  # noqa: BLE001 - a child that cannot start reaches the user
            self._events.put(Failed(0, "error", f"{type(exc).__name__}: {exc}"))

    # ------------------------------------------------------------------ GUI thread
    def drain(self) -> None:
        """Move what the trainer reported into the series; signal progress once and each look
        inside in turn (the panel draws the newest within its budget)."""
        events = []
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                break
        drained = take_events(events, self.series)
        if drained.started is not None:
            self.started.emit(drained.started)
        if drained.progressed:
            self.progressed.emit()
        for probe in drained.probes:
            self.latest_probe = probe
            self.probed.emit(probe)
        if drained.end is not None:
            self.timer.stop()
            self.end_event = drained.end
            self._set_state(ended_state(drained.end))
            self.ended.emit(drained.end)
