"""Stopping is saving: SIGINT, SIGTERM and SIGHUP ask a run to stop.

The first signal calls ``stop`` (the trainer ends the step at its next micro-batch, writes a
checkpoint and its metrics line, then ends). A second one calls ``abandon`` when given (the
trainer gives up the forward or backward pass in progress at once, and still saves its last
whole step: a user who presses Ctrl+C again because nothing seems to happen loses nothing);
without ``abandon``, or at a third signal, the process ends at once. Every checkpoint is written
under a temporary name and renamed into place (checkpoint.py), so even then nothing already
saved is lost; the next start removes the half-written folder.

    with StopOnSignals(trainer.stop, abandon=trainer.abandon) as signals:
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

    def __init__(self, stop: Callable[[], None], say: Callable[[str], None] | None = None,
                 abandon: Callable[[], None] | None = None):
        self.stop = stop
        self.say = say
        self.abandon = abandon
        self.received: int | None = None
        self.abandoned = False
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
        if self.received is not None and self.abandon is not None and not self.abandoned:
            # a second signal: give up the step in progress, still saving the last whole one
            self.abandoned = True
            if self.say:
                self.say(f"{signal.Signals(signum).name} again: giving up the step in progress "
                         "and saving the last whole step (send it again to quit at once)")
            self.abandon()  # may raise in the training thread, which unwinds the step
            return
        if self.received is not None:
            # a last signal: leave now; the checkpoints already saved are whole on disk
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
