"""Each lesson variant's own best lr: the sweep the lessons train by.

Trains every variant of a lesson (or of all of them) at each lr of a log-spaced grid over 2
seeds at the lesson's own steps (times ``--budget``), widens the grid when the best lr is an
edge, trains the two lowest means again on 2 more seeds (the confirmation), chooses among
those on the selection split, and records each variant as it finishes in
tfstudio/experiments/lessons/lr_sweeps.json (``lessons.lr_record``). ``--table`` prints the
recorded sweeps as markdown for docs/BENCHMARKS.md.

    nice -n 5 python bench/sweep_lr.py history               # one lesson
    nice -n 5 python bench/sweep_lr.py all                   # every lesson with variants
    nice -n 5 python bench/sweep_lr.py interpolation         # its short model and fine-tunes
    python bench/sweep_lr.py history --budget 4x             # the sweep for --budget 4x
    python bench/sweep_lr.py --table                         # the record, as markdown
    python bench/sweep_lr.py --table --write                 # ... into docs/BENCHMARKS.md
    python bench/sweep_lr.py --rechoose                      # the choice rule again, no training
    nice -n 5 python bench/sweep_lr.py all --resume          # only what the record lacks
"""
from __future__ import annotations

import argparse
import shlex
import sys


def main(argv=None) -> int:
    from tfstudio.experiments.lessons import LESSONS, lr_record
    from tfstudio.experiments.lessons.budget import parse_budget
    from tfstudio.experiments.sweep import CONFIRM_SEEDS, DEFAULT_GRID, DEFAULT_SEEDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names, or 'all'")
    parser.add_argument("--grid", default=None, help="the lrs to try (default "
                        f"{','.join(f'{x:g}' for x in DEFAULT_GRID)}; a lesson that trains "
                        "itself, such as interpolation, sweeps on its own grids)")
    parser.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)))
    parser.add_argument("--confirm-seeds", default=",".join(map(str, CONFIRM_SEEDS)),
                        help="the seeds the two lowest means train again on")
    parser.add_argument("--resume", action="store_true", help="train only what each "
                        "recorded variant lacks (its confirmation), on the record's grid")
    parser.add_argument("--budget", default="1x", help="times each lesson's steps (4x)")
    parser.add_argument("--steps", type=int, default=None, help="steps (a try-out)")
    parser.add_argument("--only", default="", help="comma-separated variant names")
    parser.add_argument("--table", action="store_true", help="print the record as markdown")
    parser.add_argument("--write", action="store_true",
                        help="with --table: replace the record's section of docs/BENCHMARKS.md")
    parser.add_argument("--rechoose", action="store_true",
                        help="apply the choice rule again to the recorded losses")
    args = parser.parse_args(argv)
    if args.rechoose:
        print("\n".join(lr_record.rechoose()) or "every recorded lr is the rule's choice")
        return 0
    if args.table:
        if args.write:
            lr_record.write_docs()
        print("\n".join(lr_record.markdown()))
        return 0
    import torch
    torch.set_num_threads(1)
    names = [n for n, lesson in LESSONS.items() if lesson.run is None or lesson.sweeps] \
        if args.lessons == ["all"] else args.lessons
    command = shlex.join(["python", "bench/sweep_lr.py", *(argv or sys.argv[1:])])
    for name in names:
        # 'all --grid' leaves a lesson that trains itself on its own grids
        own_grids = args.lessons == ["all"] and LESSONS[name].run is not None
        try:
            lr_record.sweep_lesson(
                name, budget=parse_budget(args.budget), steps=args.steps,
                grid=[float(x) for x in args.grid.split(",")] if args.grid and not own_grids
                else None,
                seeds=None if args.resume else [int(x) for x in args.seeds.split(",")],
                confirm=[int(x) for x in args.confirm_seeds.split(",") if x],
                resume=args.resume,
                only=[x.strip() for x in args.only.split(",") if x.strip()], command=command,
                progress=lambda line: print(f"{name}: {line}", flush=True))
        except ValueError as exc:
            print(f"sweep_lr.py: {exc}", file=sys.stderr)
            return 2
    for twin in lr_record.refresh_twins():
        print(f"{twin}: its twin's sweep copied again", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
