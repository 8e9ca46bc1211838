"""The course's wall times: every lesson (``tfstudio lesson all``), or the step time its estimates
use.

``--step-time`` trains every model each lesson trains (``lessons.cost.trainings``: its variants,
the norm lesson's lr sweep, interpolation's fine-tunes) a few steps with that lesson's batch and
length on one torch thread, as ``tfstudio lesson`` does, and prints the median CPU seconds per
step; ``--write`` saves them in tfstudio/experiments/lessons/step_costs.py, which ``tfstudio
lesson`` multiplies by each lesson's step count for its estimate. CPU time, because on a shared
machine the wall clock counts other people's work. Without it the whole course runs into
``--out`` (finished runs are reused) and a markdown table of each lesson's wall time, CPU time,
estimate and verdict is printed for docs/BENCHMARKS.md.

    python bench/bench_course.py --step-time --write
    python bench/bench_course.py --out /tmp/course              # the full course, 3 seeds
    python bench/bench_course.py --out /tmp/c --steps 50 --seeds 1,2   # a reduced budget
    taskset -c 0,1 python bench/bench_course.py ...             # on two cores
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def step_cpu(graph, config, steps: int) -> float:
    """Median CPU seconds per training step (this process, one torch thread) of ``graph``
    with ``config``'s batch and length, over ``steps`` steps after the first 3."""
    import dataclasses

    import torch

    from tfstudio.train.events import StepMetrics
    from tfstudio.train.trainer import Trainer

    torch.set_num_threads(1)
    stamps = []
    config = dataclasses.replace(config, steps=steps + 4, eval_every=0, init_from="",
                                 probe_every=0)
    with tempfile.TemporaryDirectory() as folder:
        Trainer(graph, config, run_dir=folder, listeners=[
            lambda e: stamps.append(time.process_time()) if isinstance(e, StepMetrics)
            else None]).run()
    gaps = [b - a for a, b in zip(stamps[3:], stamps[4:])]
    return statistics.median(gaps)


def run_overhead() -> float:
    """CPU seconds of a one-step ``tfstudio train`` process (one thread, as ``--jobs``
    starts them): the start-up, data and evaluation every run pays besides its steps."""
    import resource
    import subprocess

    def children() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    with tempfile.TemporaryDirectory() as folder:
        before = children()
        subprocess.run([sys.executable, "-m", "tfstudio", "train", "tiny-gpt", "--out", folder,
                        "--force", "--tokenizer", "char", "--steps", "1", "--seed", "1"],
                       check=True, capture_output=True,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
        return children() - before


def in_process_overhead() -> float:
    """CPU seconds of a one-step training in this (warm) process, evaluation included: what a
    lesson's own trainings (the lr sweep, interpolation) pay besides their steps."""
    import torch

    import tfstudio
    from tfstudio.experiments.lessons.training import LESSON_TRAINING
    from tfstudio.runs import TrainConfig
    from tfstudio.train.trainer import Trainer

    torch.set_num_threads(1)
    config = TrainConfig(**{**LESSON_TRAINING, "steps": 1, "eval_every": 1, "seed": 1})
    with tempfile.TemporaryDirectory() as folder:
        Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=folder).run()   # warm
    with tempfile.TemporaryDirectory() as folder:
        start = time.process_time()
        Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=folder).run()
        return time.process_time() - start


def after_training_cost(name: str) -> float:
    """CPU seconds per run that comparison lesson ``name`` spends once its runs are trained:
    collecting them (length and inference measures), its own ``measure`` step (sampling's
    texts, vectors' hidden states) and drawing its page; timed on one seed of 3 steps, since
    none of it depends on how long a run trained."""
    import contextlib
    import io
    import shlex
    import subprocess

    from tfstudio.cli.lesson import run_lesson
    from tfstudio.experiments.lessons.course import cpu_seconds
    from tfstudio.experiments.report import write_page
    from tfstudio.gui.report_plots import draw_report

    with tempfile.TemporaryDirectory() as folder:
        out, printed = Path(folder) / name, io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            run_lesson(name, out, seeds=[1], steps=3, print_only=True)
        commands = [line for line in printed.getvalue().splitlines()
                    if line.startswith("tfstudio train")]
        for command in commands:
            subprocess.run([sys.executable, "-m", *shlex.split(command)], check=True,
                           capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        start = cpu_seconds()
        write_page(out, draw_report)
        return (cpu_seconds() - start) / max(len(commands), 1)


def own_after_training_cost(name: str) -> float:
    """CPU seconds per training that lesson ``name``, which trains in its own process,
    spends besides its trainings' steps and start-up (measuring its models, such as
    interpolation's loss by position out to 512 tokens, and drawing its page): the CPU of a
    1-seed, 3-step run of the lesson less the estimate of its trainings at those settings."""
    import contextlib
    import io

    from tfstudio.cli.lesson import run_lesson
    from tfstudio.experiments.lessons import LESSONS
    from tfstudio.experiments.lessons.cost import estimate, trainings
    from tfstudio.experiments.lessons.course import cpu_seconds

    lesson = LESSONS[name]
    with tempfile.TemporaryDirectory() as folder:
        start = cpu_seconds()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            run_lesson(name, Path(folder) / name, seeds=[1], steps=3)
        spent = cpu_seconds() - start
    trained = estimate(lesson, seeds=1, steps=3, after={}).cpu_s
    runs = sum(t.runs for t in trainings(lesson, 1, 3))
    return max(0.0, (spent - trained) / max(runs, 1))


def after_training_costs(only: list[str] | None = None) -> dict[str, float]:
    """``after_training_cost`` of every lesson that is one comparison of runs, and
    ``own_after_training_cost`` of every lesson that trains in its own process."""
    from tfstudio.experiments.lessons.course import course

    costs = {}
    for lesson in course():
        if only and lesson.name not in only:
            continue
        measure = after_training_cost if lesson.run is None else own_after_training_cost
        costs[lesson.name] = round(measure(lesson.name), 2)
        print(f"{lesson.name:14s} after training {costs[lesson.name]:.2f} CPU s/run",
              flush=True)
    return costs


def step_costs(steps: int, only: list[str] | None = None) -> dict[str, dict[str, float]]:
    """CPU seconds per step of every training of every lesson (``cost.trainings``)."""
    from tfstudio.experiments.lessons.cost import trainings
    from tfstudio.experiments.lessons.course import course

    costs: dict[str, dict[str, float]] = {}
    for lesson in course():
        if only and lesson.name not in only:
            continue
        for t in trainings(lesson):
            if t.key in costs.get(lesson.name, {}):
                continue
            seconds = step_cpu(t.graph(), t.config, steps)
            costs.setdefault(lesson.name, {})[t.key] = round(seconds, 5)
            print(f"{lesson.name:14s} {t.key:40s} {seconds:.4f} CPU s/step", flush=True)
    return costs


def write_costs(costs: dict[str, dict[str, float]], note: str,
                overhead: float | None = None, in_process: float | None = None,
                after: dict[str, float] | None = None) -> Path:
    import pprint

    import tfstudio.experiments.lessons.step_costs as module
    path = Path(module.__file__)
    merged = {**module.COSTS, **costs}
    path.write_text(
        '"""CPU seconds per training step of every model the course trains, by lesson and '
        'training key\n(``cost.trainings``); written by ``python bench/bench_course.py '
        '--step-time --write``."""\n'
        f"MEASURED = {note!r}\n"
        "# CPU seconds every run pays besides its steps (start-up, data, evaluation)\n"
        f"RUN_OVERHEAD = {round(module.RUN_OVERHEAD if overhead is None else overhead, 2)!r}\n"
        "# the same for a training inside the lesson's own, already started process\n"
        "IN_PROCESS_OVERHEAD = "
        f"{round(module.IN_PROCESS_OVERHEAD if in_process is None else in_process, 2)!r}\n"
        "# CPU seconds per run a lesson spends after training (collecting and measuring its\n"
        "# runs, drawing its page), one run after another in its own process\n"
        f"AFTER_TRAINING: dict[str, float] = "
        f"{pprint.pformat({**module.AFTER_TRAINING, **(after or {})}, width=96)}\n"
        f"COSTS: dict[str, dict[str, float]] = {pprint.pformat(merged, width=96)}\n",
        encoding="utf-8")
    return path


def course(out: Path, seeds: list[int], steps: int | None, jobs: int) -> int:
    from tfstudio.cli.lesson import run_lesson
    from tfstudio.experiments.lessons.course import course_step, run_course

    start = time.perf_counter()
    status, page, entries = run_course(out, course_step(run_lesson, seeds, steps, jobs))
    total = time.perf_counter() - start
    from tfstudio.experiments.lessons import LESSONS
    from tfstudio.experiments.lessons.cost import estimate

    print("\n| lesson | wall time | CPU time | estimate on 2 cores (CPU) | verdict |\n"
          "| --- | --- | --- | --- | --- |")
    for e in entries:
        guess = estimate(LESSONS[e.name], len(seeds), steps)
        print(f"| {e.name} | {e.seconds / 60:.1f} min | {e.cpu_seconds / 60:.1f} min | "
              f"{guess.wall_s / 60:.1f} min ({guess.cpu_s / 60:.1f}) | {e.verdict} |")
    print(f"\ncourse: {page}; total {total / 60:.1f} min, exit status {status}")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--step-time", action="store_true",
                        help="time a step of every model each lesson trains (CPU seconds)")
    parser.add_argument("--write", action="store_true",
                        help="--step-time: save them in tfstudio/experiments/lessons/"
                             "step_costs.py, which the estimates read")
    parser.add_argument("--lessons", default="",
                        help="--step-time: only these lessons (comma-separated)")
    parser.add_argument("--steps", type=int, default=None,
                        help="--step-time: steps to time per model (default 12); else every "
                             "run's steps (default: each lesson's own)")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="course-bench")
    args = parser.parse_args()
    if args.step_time:
        import platform
        costs = step_costs(args.steps or 12, [x for x in args.lessons.split(",") if x])
        overhead, in_process = run_overhead(), in_process_overhead()
        print(f"a one-step tfstudio train process: {overhead:.2f} CPU s; a one-step training "
              f"in a started process: {in_process:.2f} CPU s")
        after = after_training_costs([x for x in args.lessons.split(",") if x])
        if args.write:
            note = (f"{time.strftime('%Y-%m-%d')} on {platform.machine()} "
                    f"({os.cpu_count()} cores, 5-minute load average {os.getloadavg()[1]:.1f}), "
                    f"one torch thread, median of {args.steps or 12} steps")
            print(f"wrote {write_costs(costs, note, overhead, in_process, after)}")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]
    return course(Path(args.out), seeds, args.steps, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
