"""``tfstudio lesson NAME [--seeds 1,2,3] [--steps N] [--budget 4x] [--jobs J] [--out DIR]``:
a built-in lesson, trained over its seeds with each variant at its own recorded lr
(``lessons.lr_record``), ending on a page (DIR/report.html) with its claim, the verdict
computed from the runs ("holds here", "does not hold here", "not decided here" or "mixed")
and the numbers that decided it."""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from ..experiments.seeds import read_seeds
from . import values

PROG = "tfstudio lesson"


def configure(parser) -> None:
    from ..experiments.lessons import DEFAULT_SEEDS, LESSONS
    parser.add_argument("name", nargs="?", choices=sorted(LESSONS) + ["all"],
                        help="which lesson; 'all' runs the course into --out (course.html); "
                             "none lists the course")
    parser.add_argument("--seeds", type=values.run_seeds, default=None,
                        help="comma-separated seeds; the verdict needs two or more, since "
                             "only the spread over seeds says whether a difference counts "
                             "(default: each lesson's own, chosen for the power its smallest "
                             f"effect needs; {','.join(map(str, DEFAULT_SEEDS))} for most)")
    parser.add_argument("--steps", type=values.positive_int, default=None,
                        help="training steps of every run (default: the lesson's own)")
    parser.add_argument("--budget", default="1x",
                        help="a multiple of the lesson's own steps, e.g. 4x for a faster "
                             "machine; each variant keeps its lr from the sweep recorded at "
                             "that budget (bench/sweep_lr.py --budget 4x), else at 1x "
                             "(default: %(default)s)")
    parser.add_argument("--jobs", type=values.positive_int, default=1,
                        help="train this many runs at once as local processes (default 1)")
    parser.add_argument("--out", type=values.path, help="folder for its runs and page (default lesson-NAME)")


def run(args) -> int:
    from ..experiments.lessons.budget import parse_budget
    try:
        # none given: each lesson's own seeds (a fixed default overrode the lessons whose
        # seeds were chosen for power, e.g. history's 4)
        seeds = read_seeds(args.seeds) if args.seeds else None
        budget = parse_budget(args.budget)
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if args.name is None:
        from ..experiments.lessons.course import listing
        print("\n".join(listing()))
        return 0
    if args.name == "all":
        return run_course(Path(args.out or "course"), seeds, args.steps, args.jobs, budget)
    return run_lesson(args.name, Path(args.out) if args.out else None, seeds=seeds,
                      steps=args.steps, jobs=args.jobs, budget=budget)


def run_course(out: Path, seeds: list[int] | None, steps: int | None, jobs: int,
               budget: float = 1) -> int:
    """Every lesson in the course's order into OUT/NAME, then OUT/course.html."""
    from functools import partial

    from ..experiments.lessons.cost import estimate
    from ..experiments.lessons.course import course_step, run_course as run_all

    def estimated_cpu(lesson) -> float | None:
        own = steps or lesson.training.get("steps")
        found = estimate(lesson, len(seeds) if seeds else None,
                         round(own * budget) if own else None)
        return found.cpu_s if found.steps else None

    status, page, _ = run_all(out, course_step(partial(run_lesson, budget=budget), seeds,
                                               steps, jobs),
                              say=lambda line: print(line, flush=True), estimate=estimated_cpu)
    print(f"course: {page}")
    return status


def run_lesson(name: str, out: Path | None = None, prog: str = PROG, *,
               seeds: list[int] | None = None, steps: int | None = None, jobs: int = 1,
               device: str | None = None, precision: str | None = None,
               print_only: bool = False, budget: float = 1) -> int:
    """Train lesson ``name`` (its steps times ``budget``) and write its page; the exit
    status (2: bad input, 1: a run failed)."""
    from ..experiments.compare import USER_ERRORS, run_comparison
    from ..experiments.lessons import prepare
    from ..gui.report_plots import draw_report

    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    from ..experiments.lessons import LESSONS
    if name in LESSONS and LESSONS[name].run is not None:
        refused = [flag for flag, given in (("--jobs", jobs != 1), ("--device", device),
                   ("--precision", precision), ("--print-commands", print_only)) if given]
        if refused:
            print(f"{prog}: lesson {name} trains its runs in turn on the CPU and cannot take "
                  f"{', '.join(refused)}; drop them", file=sys.stderr)
            return 2
        if budget != 1:
            steps = max(1, round((steps or LESSONS[name].training["steps"]) * budget))
        return _run_own(LESSONS[name], out, prog, seeds, steps, say)
    try:
        if jobs < 1:
            raise ValueError(f"--jobs must be at least 1; got {jobs}")
        lesson = prepare(name, seeds=seeds, steps=steps, budget=budget)
        changes = {k: v for k, v in (("device", device), ("precision", precision)) if v}
        config = dataclasses.replace(lesson.config, **changes)
        config.check()
    except USER_ERRORS as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    out = out or Path(f"lesson-{name}")
    import torch
    # tiny models gain little from a second thread, and on a busy CPU threads that wait for
    # each other make training many times slower (measured: 100 steps 13 s vs 109 s)
    torch.set_num_threads(1)
    say(lr_line(lesson, budget))
    start = time.perf_counter()
    try:
        outcome = run_comparison(lesson.label, lesson.base, lesson.varies, lesson.seeds, config,
                                 lesson.eval_lengths, out, draw=draw_report, jobs=jobs,
                                 print_only=print_only, lesson=name, say=say, lrs=lesson.lrs)
    except USER_ERRORS as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if print_only:
        say(f"{outcome.commands} run(s) to train; afterwards: tfstudio compare --report {out}")
        return 0
    for sentence in outcome.summary:
        print(sentence)
    print(f"report: {outcome.page}")
    say(what_ran(name, outcome.runs, outcome.reused, len(outcome.failures),
                 time.perf_counter() - start, f"{len(lesson.seeds)} seed(s), {config.steps} steps"))
    return 1 if outcome.failures else 0


def lr_line(lesson, budget: float) -> str:
    """Where the lesson's lrs come from: its sweep at this budget, the one at 1x, or none."""
    if not lesson.lrs:
        return (f"lesson {lesson.lesson}: no lr sweep recorded; every variant trains at lr "
                f"{lesson.config.lr:g} (run python bench/sweep_lr.py {lesson.lesson})")
    lrs = ", ".join(f"{k} {v:g}" for k, v in lesson.lrs.items())
    note = "" if lesson.lrs_budget == budget else (
        f"; swept at {lesson.lrs_budget:g}x, none recorded at {budget:g}x (python "
        f"bench/sweep_lr.py {lesson.lesson} --budget {budget:g}x)")
    return f"lesson {lesson.lesson}: each variant at its own lr from the recorded sweep: " \
           f"{lrs}{note}"


def what_ran(name: str, runs: int, reused: int, failed: int, seconds: float,
             budget: str) -> str:
    """The lesson's last line: what was trained, reused or failed, and the time it took (a
    time alone read "took 0s" when every run was reused or refused)."""
    trained = runs - reused - failed
    parts = [f"trained {trained} of {runs} run(s) in {seconds:.0f}s" if trained else
             "trained no run"]
    if reused:
        parts.append(f"reused {reused} finished run(s) from its folder")
    if failed:
        parts.append(f"{failed} failed (see above)")
    return f"lesson {name}: {', '.join(parts)} ({budget})"


def _run_own(lesson, out: Path | None, prog: str, seeds, steps, say) -> int:
    """A lesson that trains and measures itself (not one comparison of variants)."""
    from ..experiments.compare import USER_ERRORS
    import torch
    torch.set_num_threads(1)
    out = out or Path(f"lesson-{lesson.name}")
    start = time.perf_counter()
    try:
        from ..experiments.runner import refuse_a_file
        refuse_a_file(out)
        out.mkdir(parents=True, exist_ok=True)
        result = lesson.run(out, list(seeds or lesson.seeds), steps, say)
    except USER_ERRORS as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    for sentence in lesson.summarise(result):
        print(sentence)
    print(f"report: {out / 'report.html'}")
    say(f"lesson {lesson.name} took {time.perf_counter() - start:.0f}s "
        f"({len(result.seeds)} seed(s))")
    return 0
