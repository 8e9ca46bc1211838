"""Stopping is saving: SIGINT, SIGTERM and SIGHUP ask a run to stop after its current step.

The first signal calls ``stop`` (the trainer finishes the step, writes a checkpoint and its
metrics line, then ends); a second one ends the process at once. Every checkpoint is written
under a temporary name and renamed into place (checkpoint.py), so even then nothing already
saved is lost; the next start removes the half-written folder.

    with StopOnSignals(trainer.stop) as signals:
        trainer.run()
    signals.received  # the first signal's number, or None
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Callable

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


def exit_code(signum: int) -> int:
    """The shell's code for a process ended by ``signum`` (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + signum


class StopOnSignals:
    """Route the stop signals to ``stop`` while the block runs (the main thread only: Python
    delivers signals there). ``say`` prints one line when the first signal arrives."""

    def __init__(self, stop: Callable[[], None], say: Callable[[str], None] | None = None):
        self.stop = stop
        self.say = say
        self.received: int | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "StopOnSignals":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame) -> None:
        if self.received is not None:
            # a second signal: leave now; the checkpoints already saved are whole on disk
            if self.say:
                self.say(f"{signal.Signals(signum).name} again: stopped at once; the last "
                         "checkpoint saved is kept; continue with --resume")
            sys.stderr.flush()
            os._exit(exit_code(signum))
        self.received = signum
        self.stop()
        if self.say:
            self.say(f"{signal.Signals(signum).name}: stopping after this step and saving a "
                     "checkpoint (send it again to quit at once)")
