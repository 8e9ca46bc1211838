"""``tfstudio lesson positions|attention|norm [--out DIR]``: a built-in comparison that trains
on a CPU in a few minutes and ends on a page (DIR/report.html) with its plot and two sentences
on what it shows."""
from __future__ import annotations

import sys
import time
from pathlib import Path

PROG = "tfstudio lesson"


def configure(parser) -> None:
    from ..experiments.lessons import LESSONS
    parser.add_argument("name", choices=sorted(LESSONS), help="which lesson")
    parser.add_argument("--out", help="folder for its runs and page (default lesson-NAME)")


def run(args) -> int:
    return run_lesson(args.name, Path(args.out) if args.out else None)


def run_lesson(name: str, out: Path | None = None, prog: str = PROG) -> int:
    from .. import load_graph
    from ..experiments.lessons import LESSONS
    from ..experiments.variants import apply_setting
    from .compare import compare, fail

    lesson = LESSONS.get(name)
    if lesson is None:
        return fail(f"no lesson '{name}'; choose one of {', '.join(sorted(LESSONS))}", prog)
    out = out or Path(f"lesson-{name}")
    base = load_graph(lesson.base)
    for key, value in lesson.base_edits:
        base = apply_setting(base, key, value)
    label = lesson.base + "".join(f" ({k}={v})" for k, v in lesson.base_edits)
    config = lesson.config()
    import torch
    # tiny models gain little from a second thread, and on a busy CPU threads that wait for
    # each other make training many times slower (measured: 100 steps 13 s vs 109 s)
    torch.set_num_threads(1)
    start = time.perf_counter()
    status = compare(label, base, lesson.varies, [config.seed], config, lesson.eval_lengths,
                     out, lesson=name, prog=prog)
    print(f"lesson {name} took {time.perf_counter() - start:.0f}s", file=sys.stderr)
    return status
