"""The lessons as a course: their order in the story of language models, and the graph edits
the course's lessons vary (each registered as a lesson setting, so a comparison's plan can
build its variants like any switch)."""
from __future__ import annotations

import html as html_lib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...graph import Graph
from ...runs.disk import write_whole
from ..variants import LESSON_SETTINGS, VariantError

# the story's order: counting and early neural LMs, static then contextual vectors, the
# transformer's parts, the modern block, scale, and how text is drawn from a model
ORDER = ("history", "vectors", "orthogonality", "positions", "interpolation", "attention",
         "norm", "activations", "experts", "scale", "sampling")


def course() -> list:
    """The registered lessons in the course's order (any not in ORDER last, by name)."""
    from . import LESSONS

    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(LESSONS.values(), key=lambda lesson: (rank.get(lesson.name, len(ORDER)),
                                                        lesson.name))


def estimated_minutes(lesson, seeds: int | None = None, steps: int | None = None
                      ) -> float | None:
    """Wall minutes on 2 cores with --jobs 2, from the lesson's step count times the measured
    CPU seconds per step (``cost.estimate``); None where no step cost was measured."""
    from .cost import estimate

    found = estimate(lesson, seeds, steps)
    return found.wall_s / 60.0 if found.steps else None


def minutes_text(lesson, seeds: int | None = None, steps: int | None = None) -> str:
    from .cost import estimate

    return estimate(lesson, seeds, steps).text()


def total_text(seeds: int | None = None, steps: int | None = None) -> str:
    """The whole course's estimate, one line."""
    from .cost import estimate

    found = [estimate(lesson, seeds, steps) for lesson in course()]
    wall, cpu = sum(e.wall_s for e in found), sum(e.cpu_s for e in found)
    return (f"The course: ~{wall / 60:.0f} min on 2 cores ({cpu / 60:.0f} CPU-min: training "
            "steps, each run's start-up and the measurements after training)")


def setting(key: str, choices: tuple[str, ...]):
    """Register ``edit(graph, value)`` as the lesson setting ``key`` taking ``choices``."""
    def wrap(edit: Callable[[Graph, str], Graph]):
        def checked(graph: Graph, value: str) -> Graph:
            if value not in choices:
                raise VariantError(f"{key}={value} is not a choice; {key} takes "
                                   f"{', '.join(choices)}")
            return edit(graph, value)
        LESSON_SETTINGS[key] = checked
        return edit
    return wrap


def blocks(graph: Graph, *types: str) -> list:
    """Every node of one of ``types``, at any depth."""
    return [node for _, node in graph.walk() if node.type in types]


def listing() -> list[str]:
    """The course as lines of text: order, name, estimated minutes, source, claim."""
    from .step_costs import MEASURED

    lines = []
    for i, lesson in enumerate(course(), 1):
        lines.append(f"{i}. {lesson.name} ({minutes_text(lesson)}, {lesson.source})")
        lines.append(f"   {lesson.claim}")
    lines.append(f"{total_text()}; step costs measured {MEASURED}.")
    return lines


@dataclass
class CourseEntry:
    """One lesson of a course run: where its page is, how it ended, how long it took."""
    name: str
    folder: Path
    status: int          # the lesson's exit status (0: trained and written)
    seconds: float
    verdict: str         # the lesson's verdict line, or why there is none
    cpu_seconds: float = 0.0   # user + system CPU of this process and its children
    estimate_cpu_s: float | None = None   # the lesson's own estimate (cost.estimate), CPU s
    reused: bool = False       # its folder held runs before: the estimate is not compared
    load: float | None = None  # the machine's 5-minute load average as the lesson ended

    def time_text(self) -> str:
        """Its wall and CPU time against the estimate, and whether the machine was busy: "312 s
        (598 s CPU; estimated 560 s CPU: 1.07x, within 25%; load 1.6 on 2 cores)"."""
        parts = [f"{self.cpu_seconds:.0f} s CPU"]
        if self.reused:
            parts.append("its folder held earlier runs, so no estimate is compared")
        elif self.estimate_cpu_s:
            ratio = self.cpu_seconds / self.estimate_cpu_s
            within = "within" if abs(ratio - 1) <= ESTIMATE_TOLERANCE else "outside"
            parts.append(f"estimated {self.estimate_cpu_s:.0f} s CPU: {ratio:.2f}x, {within} "
                         f"{ESTIMATE_TOLERANCE:.0%}")
        if self.load is not None:
            cores = os.cpu_count() or 1
            busy = ": busy, more work than cores" if self.load > cores else ""
            parts.append(f"load {self.load:.1f} on {cores} cores{busy}")
        return f"{self.seconds:.0f} s ({'; '.join(parts)})"


ESTIMATE_TOLERANCE = 0.25   # a lesson's estimate should be within this share of its CPU time


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children so far."""
    import resource

    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def course_step(run_lesson: Callable[..., int], seeds: list[int], steps: int | None,
                jobs: int) -> Callable[[str, Path], tuple[int, list[str]]]:
    """``one(name, folder) -> (exit status, the sentences it printed)`` for
    :func:`run_course`, calling ``run_lesson(name, folder, seeds=, steps=, jobs=)`` (the
    command line's) and keeping what it prints; a lesson that trains itself gets one job."""
    import contextlib
    import io

    from . import LESSONS

    def one(name: str, folder: Path) -> tuple[int, list[str]]:
        printed = io.StringIO()  # the lesson's sentences (its progress goes to stderr)
        with contextlib.redirect_stdout(printed):
            status = run_lesson(name, folder, seeds=seeds, steps=steps,
                                jobs=jobs if LESSONS[name].run is None else 1)
        print(printed.getvalue(), end="", flush=True)
        return status, printed.getvalue().splitlines()
    return one


def run_course(out: Path, run_one: Callable[[str, Path], tuple[int, list[str]]],
               say: Callable[[str], None] = lambda line: None,
               estimate: Callable[..., float | None] = lambda lesson: None
               ) -> tuple[int, Path, list[CourseEntry]]:
    """Run every lesson in order with ``run_one(name, folder) -> (exit status, the sentences
    it printed)`` (each into ``out/NAME``; finished runs are reused), then write
    ``out/course.html``; ``estimate(lesson)`` gives its estimated CPU seconds (None: not
    shown), compared only for a lesson whose folder was empty (one that reuses finished runs
    trains less than its estimate counts). Returns the worst exit status, the page and each
    lesson's entry."""
    entries = []
    for lesson in course():
        folder = Path(out) / lesson.name
        say(f"lesson {lesson.name} -> {folder}")
        reused = folder.exists() and any(folder.iterdir())
        start, cpu = time.perf_counter(), cpu_seconds()
        status, sentences = run_one(lesson.name, folder)
        verdict = next((line for line in sentences if line.startswith("Verdict:")),
                       f"no verdict: the lesson ended with exit status {status}")
        entries.append(CourseEntry(lesson.name, folder, status, time.perf_counter() - start,
                                   verdict, cpu_seconds() - cpu, estimate(lesson),
                                   reused, os.getloadavg()[1]))
    page = write_course_page(Path(out), entries)
    return max((e.status for e in entries), default=0), page, entries


def write_course_page(out: Path, entries: list[CourseEntry]) -> Path:
    """``out/course.html``: each lesson in order with its claim, verdict, wall time and a link
    to its page."""
    from . import LESSONS

    esc = html_lib.escape
    rows = []
    for i, e in enumerate(entries, 1):
        lesson = LESSONS[e.name]
        report = e.folder / "report.html"
        link = (f'<a href="{esc(report.relative_to(out).as_posix())}">{esc(lesson.title)}</a>'
                if report.exists() else esc(lesson.title) + " (no page: the lesson failed)")
        rows.append(f"<tr><td>{i}</td><td>{link}<br><small>{esc(lesson.source)}</small></td>"
                    f"<td>{esc(lesson.claim)}</td><td>{esc(e.verdict)}</td>"
                    f"<td>{esc(e.time_text())}</td></tr>")
    total = sum(e.seconds for e in entries)
    page = "\n".join([
        "<!doctype html><html><head><meta charset='utf-8'><title>tfstudio course</title>",
        "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto}td,th{padding:.4em;"
        "border-bottom:1px solid #ccc;vertical-align:top;text-align:left}</style></head><body>",
        "<h1>The course: the ideas of language models, re-run</h1>",
        f"<p>{len(entries)} lessons in the order of the story; wall time of this run "
        f"{total / 60:.1f} minutes (a lesson whose runs were already complete reuses them).</p>",
        "<table><tr><th>#</th><th>lesson</th><th>claim</th><th>verdict</th><th>wall time</th>"
        "</tr>", *rows, "</table></body></html>"])
    path = Path(out) / "course.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, page)
    return path


def differing_nodes(name: str) -> tuple[Graph, list[str]]:
    """Lesson ``name``'s base graph and the ids of its top-level nodes that some variant
    changes (a group counts when anything inside it changes; a variant that is another model
    altogether changes every node). A lesson without variants changes none."""
    from ...graph.compare import model_signature
    from ..variants import expand
    from . import prepare

    run = prepare(name)
    if not run.varies:
        return run.base, []
    base = model_signature(run.base)["nodes"]
    changed = set()
    for variant in expand(run.base, run.varies):
        nodes = model_signature(variant.graph)["nodes"]
        changed |= {nid for nid, sig in base.items() if nodes.get(nid) != sig}
    return run.base, [nid for nid in run.base.nodes if nid in changed]
