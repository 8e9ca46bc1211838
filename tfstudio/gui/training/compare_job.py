"""A comparison for the Compare view, on a worker thread: trained through the same
``experiments.compare.run_comparison`` as ``tfstudio compare`` and ``tfstudio lesson`` (so the
app and the command line write the same page and compute the same verdict), or a finished
comparison folder read back (``write_page``, as ``tfstudio compare --report``).

The worker only puts events on a queue, which the view drains on the GUI thread:
``("say", line)``, ``("step", (variant, seed, step, loss))``, ``("draw", DrawRequest)``,
``("shown", Shown)``, ``("stopped", [RunEnd])``, ``("failed", message)`` and ``("done", None)``.
``stop()`` ends a training comparison: the run training stops between two steps (its last step
logged and its checkpoint written) and the others are not started. The report's pictures are
drawn with Qt widgets, which live on the GUI thread only, so ``draw`` is a request the view
answers (``DrawRequest.answer``) while the worker waits. No Qt is imported here.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

DRAW_WAIT_S = 600  # a window that never answers (closed mid-run) does not hold the worker


@dataclass
class Shown:
    """What the view shows of a finished comparison, every part computed by the experiments
    package from the run folders: the lesson's sentences (its verdict first), the report's
    table and the report's plot data."""
    folder: Path
    title: str                               # the lesson's title, or "Comparison"
    summary: list[str]                       # claim, verdict, checks ([] without a lesson)
    header: list[str]                        # the report's table
    rows: list[list[str]]
    plots: dict                              # report.plot_data
    runs: dict[str, list[tuple[int, Path]]]  # variant -> [(seed, run folder)] that finished
    page: Path | None = None
    failures: list[str] = field(default_factory=list)


def shown_of(folder: Path, summary: list[str], page: Path | None,
             failures: list[str] = ()) -> Shown:
    """Read the comparison in ``folder`` back (measurements come from the files the page was
    written from) into what the view shows."""
    from ...experiments import report
    from ...experiments.lessons import LESSONS
    from ...experiments.results import collect

    c = collect(folder)
    lesson = LESSONS.get(c.plan.lesson)
    runs = {v.name: [(r.seed, r.run_dir) for r in v.runs] for v in c.variants}
    return Shown(Path(folder), lesson.title if lesson else "Comparison", list(summary),
                 report.columns(c), report.rows(c), report.plot_data(c), runs, page,
                 list(failures))


@dataclass
class RunEnd:
    """How one run of a comparison ended, read from its folder's metrics.jsonl."""
    variant: str
    seed: int
    run_dir: Path
    state: str      # "completed" | "stopped" | "failed" | "not started"
    step: int       # the last step it logged (0: none)
    steps: int      # of how many asked

    def __str__(self) -> str:
        name = f"{self.variant} seed {self.seed}"
        if self.state == "stopped":
            return f"{name} at step {self.step:,} of {self.steps:,}"
        return name


def run_ends(folder: Path) -> list[RunEnd]:
    """Every run of the comparison in ``folder`` as its folder says it ended (its last
    Finished or Failed event; no metrics: not started)."""
    from ...experiments.runner import read_plan, run_specs
    from ...runs import RunFolder
    from ...train.events import read_events

    ends = []
    for spec in run_specs(Path(folder), read_plan(Path(folder))):
        path = RunFolder(spec.run_dir).metrics_path
        events = read_events(path) if path.exists() else []
        last = next((e for e in reversed(events) if e.kind in ("Finished", "Failed")), None)
        if last is None:
            state, step = "not started", 0
        elif last.kind == "Failed":
            state, step = "failed", last.step
        else:
            state = "stopped" if last.reason == "stopped" else "completed"
            step = last.step
        ends.append(RunEnd(spec.variant, spec.seed, spec.run_dir, state, step,
                           spec.config.steps))
    return ends


def stopped_text(ends: list[RunEnd]) -> str:
    """What a stopped comparison says: which runs stopped, at which step, and what is kept."""
    def named(state: str) -> str:
        return ", ".join(str(e) for e in ends if e.state == state)
    parts = [f"{label}: {named(state)}" for state, label in
             (("stopped", "Stopped"), ("completed", "finished"), ("failed", "failed"),
              ("not started", "not started")) if named(state)]
    if not any(e.state == "stopped" for e in ends):
        parts.insert(0, "Stopped before the page was written")
    return "; ".join(parts) + ". Every step logged and checkpoint written is kept."


class DrawRequest:
    """The report's pictures, asked of the GUI thread by the worker; ``answer(draw)`` runs
    ``draw(folder, data, **options)`` there and hands the worker its result (or error)."""

    def __init__(self, folder: Path, data: dict, options: dict):
        self.folder, self.data, self.options = folder, data, options
        self._done = threading.Event()
        self._pictures: dict[str, str] = {}
        self._error: Exception | None = None

    def answer(self, draw: Callable) -> None:
        try:
            self._pictures = draw(self.folder, self.data, **self.options)
        except Exception as exc:  # noqa: BLE001 - handed to the worker, reported there
            self._error = exc
        finally:
            self._done.set()

    def wait(self) -> dict[str, str]:
        if not self._done.wait(DRAW_WAIT_S):
            raise RuntimeError("the window did not draw the report's pictures")
        if self._error is not None:
            raise RuntimeError(f"drawing the report failed: {self._error}")
        return self._pictures


class ComparisonJob:
    """One comparison at a time on a daemon thread; ``events`` is what it reported."""

    def __init__(self):
        self.events: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stop = None  # experiments.runner.Stop of the comparison training now

    def stop(self) -> bool:
        """Ask the comparison training now to stop; False when none is training."""
        if self._stop is None or not self.busy():
            return False
        self._stop()
        return True

    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _draw(self, folder, data, **options) -> dict[str, str]:
        request = DrawRequest(Path(folder), data, options)
        self.events.put(("draw", request))
        return request.wait()

    def train(self, label: str, base, varies, seeds: list[int], config, eval_lengths,
              folder: Path, lesson: str = "") -> None:
        """Train every variant and seed, write the page, then report what to show (after a
        stop: how each run ended)."""
        from ...experiments.runner import Stop
        stop = Stop()

        def work() -> Shown | list[RunEnd]:
            from ...experiments.compare import run_comparison

            def listeners(spec):
                key = (spec.variant, spec.seed)
                return [lambda e: e.kind == "StepMetrics" and
                        self.events.put(("step", (*key, e.step, e.loss)))]
            import torch
            # one thread, as ``tfstudio lesson`` trains: on a busy CPU a tiny model's threads
            # wait for each other (a reduced lesson measured 20 s on one thread, 90 s on two)
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                outcome = run_comparison(
                    label, base, varies, seeds, config, eval_lengths, folder, draw=self._draw,
                    lesson=lesson, listeners_for=listeners, stop=stop,
                    say=lambda line: self.events.put(("say", line)))
            finally:
                torch.set_num_threads(threads)
            if outcome.stopped:
                return run_ends(folder)
            failed = [f"{spec.variant} (seed {spec.seed}): {message}"
                      for spec, message in outcome.failures]
            return shown_of(folder, outcome.summary, outcome.page, failed)
        self._start(work)
        self._stop = stop

    def read(self, folder: Path) -> None:
        """A comparison trained before (here or by the command line): its page written again
        from its folders, and what to show."""
        def work() -> Shown:
            from ...experiments.report import write_page
            page, summary = write_page(Path(folder), self._draw,
                                       progress=lambda line: self.events.put(("say", line)))
            return shown_of(folder, summary, page)
        self._start(work)
        self._stop = None  # reading back is not training: nothing to stop

    def _start(self, work: Callable[[], Shown | list[RunEnd]]) -> None:
        if self.busy():
            raise ValueError("a comparison is already training; wait for it to finish")

        def run() -> None:
            from ...experiments.compare import USER_ERRORS
            try:
                result = work()
                self.events.put(("shown", result) if isinstance(result, Shown)
                                else ("stopped", result))
            except USER_ERRORS as exc:
                self.events.put(("failed", str(exc)))
            except Exception as exc:  # noqa: BLE001 - shown in the view, never kills the GUI
                self.events.put(("failed", f"{type(exc).__name__}: {exc}"))
            self.events.put(("done", None))
        self._thread = threading.Thread(target=run, name="tfstudio-compare", daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
