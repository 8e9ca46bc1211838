"""The course's wall times: every lesson (``tfstudio lesson all``), or the step time its estimates
use.

``--step-time`` trains tiny-gpt with the lessons' shared settings (char tokens of the stories
sample, 16 x 64 tokens) on one torch thread, as ``tfstudio lesson`` does, and prints the median
seconds per step after the first 5 (``STEP_SECONDS`` in tfstudio/experiments/lessons/course.py
is this number). Without it the whole course runs into ``--out`` (finished runs are reused) and a
markdown table of each lesson's wall time and verdict is printed for docs/BENCHMARKS.md.

    python bench/bench_course.py --step-time
    python bench/bench_course.py --out /tmp/course              # the full course, 3 seeds
    python bench/bench_course.py --out /tmp/c --steps 50 --seeds 1,2   # a reduced budget
    taskset -c 0,1 python bench/bench_course.py ...             # on two cores
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def step_time(steps: int) -> float:
    import torch

    import tfstudio
    from tfstudio.experiments.lessons.training import LESSON_TRAINING
    from tfstudio.runs import TrainConfig
    from tfstudio.train.events import StepMetrics
    from tfstudio.train.trainer import Trainer

    torch.set_num_threads(1)
    stamps = []
    config = TrainConfig(**{**LESSON_TRAINING, "steps": steps, "eval_every": 0})
    with tempfile.TemporaryDirectory() as folder:
        Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=folder, listeners=[
            lambda e: stamps.append(time.perf_counter()) if isinstance(e, StepMetrics)
            else None]).run()
    gaps = [b - a for a, b in zip(stamps[5:], stamps[6:])]
    return statistics.median(gaps)


def course(out: Path, seeds: list[int], steps: int | None, jobs: int) -> int:
    from tfstudio.cli.lesson import run_lesson
    from tfstudio.experiments.lessons.course import course_step, run_course

    start = time.perf_counter()
    status, page, entries = run_course(out, course_step(run_lesson, seeds, steps, jobs))
    total = time.perf_counter() - start
    print("\n| lesson | wall time | verdict |\n| --- | --- | --- |")
    for e in entries:
        print(f"| {e.name} | {e.seconds / 60:.1f} min | {e.verdict} |")
    print(f"\ncourse: {page}; total {total / 60:.1f} min, exit status {status}")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--step-time", action="store_true", help="only time tiny-gpt's steps")
    parser.add_argument("--steps", type=int, default=None,
                        help="--step-time: steps to time (default 60); else every run's steps "
                             "(default: each lesson's own)")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="course-bench")
    args = parser.parse_args()
    if args.step_time:
        print(f"{step_time(args.steps or 60):.4f} s per step (median, tiny-gpt, 1 thread)")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]
    return course(Path(args.out), seeds, args.steps, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
