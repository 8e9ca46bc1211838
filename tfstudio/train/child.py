"""A training run in a process of its own, its events sent back over a pipe.

The app trains here rather than on a thread of its own process: the trainer's Python between
kernels and the event loop's Python then never queue for one interpreter lock. (Measured once
on two cores: a thread holding the lock 6% of the time slowed a tiny-gpt run by 5-15%, one
holding it 12% by 20-40%.) Children fork from a server that imported all a run imports
(``fork_server.py``) once, so only the first run of a session waits for those imports (left
out, each run paid ~4.5 s of imports before its first step, on 2 cores). The child obeys
pause, resume, stop and settings sent down a second pipe, and stops (saving its weights) if
the parent goes away or on SIGINT, SIGTERM or SIGHUP. Its torch threads leave ``leave_cores``
cores to the parent's event loop.

    child = TrainingProcess(graph, config, run_dir, leave_cores=1)
    child.start()
    for event in child.events():   # blocks; ends after Finished or Failed
        ...
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ..graph import Graph
from ..runs.config import TrainConfig
from .events import Event, Failed, Finished, StepMetrics
from .signals import StopOnSignals

# commands the parent may send; "set" carries (TrainConfig field, value)
COMMANDS = ("pause", "resume", "stop", "set")
SETTABLE = ("probe_text", "probe_every")  # the trainer reads these again at every look inside
# what the fork server imports: every run's imports, frozen
PRELOAD = ("tfstudio.train.fork_server",)
BATCH_S = 0.05  # events travel in batches gathered this long: the app drains ten times a second


def _context():
    """Forkserver (spawn where there is none, on Windows): forking the app itself would copy
    its Qt and torch threads mid-flight."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


def training_threads(leave_cores: int, torch_default: int, cores: int | None) -> int:
    """Torch threads for a child that leaves ``leave_cores`` of the ``cores`` this process may
    use to its parent, never more than torch's own default, at least one."""
    return max(1, min(torch_default, (cores or 1) - leave_cores))


def usable_cores() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class TrainingProcess:
    """The parent's handle on one child run. ``send`` may be called from any thread."""

    def __init__(self, graph: Graph, config: TrainConfig, run_dir: str | Path, *,
                 tokenizer=None, leave_cores: int = 0):
        context = _context()
        self._events, events_out = context.Pipe(duplex=False)
        commands_in, self._commands = context.Pipe(duplex=False)
        tokenizer_data = tokenizer.to_dict() if tokenizer is not None else None
        self.process = context.Process(
            target=_child_main, name="tfstudio-training", daemon=True,
            args=(events_out, commands_in, graph, config, str(run_dir), tokenizer_data,
                  leave_cores))
        self._child_ends = (events_out, commands_in)
        self._send_lock = threading.Lock()

    def start(self) -> None:
        self.process.start()
        for end in self._child_ends:  # the child holds them now; a closed pipe then means EOF
            end.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def send(self, command: str, *args) -> None:
        if command not in COMMANDS:
            raise ValueError(f"unknown command {command!r}; one of {', '.join(COMMANDS)}")
        with self._send_lock:
            try:
                self._commands.send((command, args))
            except (BrokenPipeError, OSError):
                pass  # the child has ended; events() reports how

    def events(self) -> Iterator[Event]:
        """Each event the child emits, in order, until its pipe closes; a child that ended
        without a Finished or Failed (killed, crashed) is reported as one Failed."""
        step, ended = 0, False
        while True:
            try:
                batch = self._events.recv()
            except (EOFError, OSError):
                break
            for event in batch:
                if isinstance(event, StepMetrics):
                    step = event.step
                ended = ended or isinstance(event, (Finished, Failed))
                yield event
        self.process.join()
        if not ended:
            yield Failed(step, "error", died_message(self.process.exitcode))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()


def died_message(exitcode: int | None) -> str:
    how = (f"was killed by signal {-exitcode}" if exitcode is not None and exitcode < 0
           else f"exited with code {exitcode}")
    return (f"The training process {how} before the run ended (out of memory, or stopped from "
            "outside the app). The last checkpoint in the run folder is intact: resume the run "
            "from Runs, or lower the batch size if memory ran out.")


# --------------------------------------------------------------------------- in the child
def _child_main(events_out, commands_in, graph: Graph, config: TrainConfig, run_dir: str,
                tokenizer_data: dict | None, leave_cores: int) -> None:
    import torch

    from ..data import tokenizer_from_dict
    from .trainer import Trainer

    threads = training_threads(leave_cores, torch.get_num_threads(), usable_cores())
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
    # a look inside is ~100 KB, more than a pipe holds: the trainer only queues its events and
    # a thread writes them, so a parent busy painting never holds up a step
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    writer = threading.Thread(target=_write, args=(outbox, events_out), daemon=True)
    writer.start()
    send = outbox.put
    try:
        tokenizer = tokenizer_from_dict(tokenizer_data) if tokenizer_data else None
        trainer = Trainer(graph, config, run_dir=run_dir, listeners=[send], tokenizer=tokenizer)
    except Exception as exc:  # noqa: BLE001 - set-up faults (a bad setting) reach the user too
        send(Failed(0, "error", f"{type(exc).__name__}: {exc}"))
    else:
        threading.Thread(target=_obey, args=(commands_in, trainer), daemon=True).start()
        # Ctrl+C in the app's terminal reaches this process too; like the app's Stop, a signal
        # (SIGINT, SIGTERM, SIGHUP) ends the step and saves; a second one gives up the step at once
        # and saves the last whole one
        with StopOnSignals(trainer.stop, abandon=trainer.abandon):
            trainer.run()  # emits Finished or Failed itself; never raises for training faults
    outbox.put(None)
    writer.join()


def _write(outbox: queue.SimpleQueue, events_out) -> None:
    """Send the queued events to the parent in batches, at most every BATCH_S (each wake-up
    of the parent takes a core from the trainer on a small machine), until None; then close
    the pipe."""
    done = False
    while not done:
        batch = [outbox.get()]
        time.sleep(BATCH_S)
        while True:
            try:
                batch.append(outbox.get_nowait())
            except queue.Empty:
                break
        if None in batch:
            batch, done = batch[:batch.index(None)], True
        try:
            events_out.send(batch)
        except (BrokenPipeError, OSError):
            break  # the parent has gone; the run stops through _obey
    events_out.close()


def _obey(commands_in, trainer) -> None:
    """Apply the parent's commands until its pipe closes; a closed pipe (the app has gone)
    stops the run, which saves its weights."""
    while True:
        try:
            command, args = commands_in.recv()
        except (EOFError, OSError):
            trainer.stop()
            return
        if command == "set" and args[0] in SETTABLE:
            setattr(trainer.config, args[0], args[1])
        elif command in ("pause", "resume", "stop"):
            getattr(trainer, command)()
