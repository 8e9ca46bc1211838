"""How long a lesson takes: every training it does (its step count) times the CPU seconds one
step of that model costs, as ``bench/bench_course.py --step-time`` measured them
(``step_costs.COSTS``). CPU time, not wall time, is what a step costs: on a shared machine the
wall clock counts other people's work too.

A lesson's variants are separate runs that ``--jobs`` spreads over the cores; what a lesson
trains after them (the norm lesson's lr sweep) or on a schedule of its own (interpolation) runs
one training at a time, so its CPU time is its wall time.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ...graph import Graph
from ...runs import TrainConfig

CORES = 2   # the course's target machine: 2 CPU cores, --jobs 2


@dataclass(frozen=True)
class Training:
    """Runs of one model at one setting: ``runs`` trainings of ``config.steps`` steps each.
    ``key`` names its measured step cost; ``graph`` builds the model (only the bench calls
    it); ``parallel``: the runs are separate processes that --jobs spreads over the cores."""
    key: str
    graph: Callable[[], Graph]
    config: TrainConfig
    runs: int
    parallel: bool = True

    @property
    def steps(self) -> int:
        return self.runs * self.config.steps


def trainings(lesson, seeds: int | None = None, steps: int | None = None) -> list[Training]:
    """Everything lesson ``lesson`` trains with ``seeds`` seeds (its own count by default) and
    ``steps`` steps a run (its own by default): one Training per variant, at the variant's
    own recorded lr, plus what its ``schedule`` adds (a lesson that trains on its own
    schedule gives all of it there)."""
    from ..variants import expand
    from . import prepare

    seeds = seeds or len(lesson.seeds)
    found: list[Training] = []
    if lesson.run is None:
        run = prepare(lesson.name, seeds=list(range(1, seeds + 1)), steps=steps)
        for variant in (expand(run.base, run.varies) if run.varies else []):
            config = dataclasses.replace(run.config,
                                         lr=run.lrs.get(variant.name, run.config.lr))
            found.append(Training(variant.name, lambda g=variant.graph: g, config, seeds))
        if not run.varies:
            found.append(Training("base", lambda g=run.base: g, dataclasses.replace(
                run.config, lr=run.lrs.get("base", run.config.lr)), seeds))
    if lesson.schedule is not None:
        found += lesson.schedule(seeds, steps)
    return found


@dataclass(frozen=True)
class Estimate:
    cpu_s: float              # all its trainings' steps, CPU seconds
    wall_s: float             # on CORES cores with --jobs CORES
    steps: int
    missing: tuple[str, ...]  # trainings with no measured step cost (left out of the sums)

    def text(self) -> str:
        """"~3.9 min on 2 cores (7.1 CPU-min, 9,600 training steps)"."""
        if self.steps == 0:
            return "minutes not estimated: no measured step cost (bench/bench_course.py " \
                   "--step-time)"
        left = f"; not counted: {', '.join(self.missing)}" if self.missing else ""
        return (f"~{self.wall_s / 60:.1f} min on {CORES} cores ({self.cpu_s / 60:.1f} CPU-min, "
                f"{self.steps:,} training steps{left})")


def estimate(lesson, seeds: int | None = None, steps: int | None = None,
             costs: dict[str, dict[str, float]] | None = None,
             overhead: float | None = None, in_process: float | None = None,
             after: dict[str, float] | None = None) -> Estimate:
    """Lesson ``lesson``'s training time: each training's steps times its measured CPU seconds
    per step (``costs``: lesson -> key -> seconds; ``step_costs.COSTS`` by default), plus
    CPU seconds per run besides its steps: ``overhead`` for each separate ``tfstudio train``
    process (``step_costs.RUN_OVERHEAD``: start-up, data, evaluation), and ``in_process``
    for a training inside the lesson's own process (``step_costs.IN_PROCESS_OVERHEAD``), and
    ``after`` per run of the variants for what the lesson does once they are trained
    (``step_costs.AFTER_TRAINING``: collecting and measuring each run, sampling's texts
    among them, and drawing the page). Wall time on CORES cores: the variants' runs shared
    out over the cores, the rest one after another."""
    from .step_costs import AFTER_TRAINING, COSTS, IN_PROCESS_OVERHEAD, RUN_OVERHEAD

    table = (COSTS if costs is None else costs).get(lesson.name, {})
    extra = RUN_OVERHEAD if overhead is None else overhead
    inside = IN_PROCESS_OVERHEAD if in_process is None else in_process
    per_run_after = (AFTER_TRAINING if after is None else after).get(lesson.name, 0.0)
    workers, serial = [0.0] * CORES, 0.0     # each core's busy seconds; the one-at-a-time part
    steps_total, missing = 0, []
    for t in trainings(lesson, seeds, steps):
        if t.key not in table:
            missing.append(t.key)
            continue
        run = t.config.steps * table[t.key] + (extra if t.parallel else inside)
        steps_total += t.steps
        serial += t.runs * per_run_after
        if not t.parallel:
            serial += t.runs * run
            continue
        for _ in range(t.runs):   # the runner starts each run on the first core free
            workers[workers.index(min(workers))] += run
    return Estimate(sum(workers) + serial, max(workers) + serial, steps_total, tuple(missing))
