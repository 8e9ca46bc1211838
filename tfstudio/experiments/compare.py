"""One comparison from start to page: build the variants, check them, write the plan, train what
is missing (here or as local processes), collect the runs and write the report. The command
line's ``compare`` and ``lesson`` both call ``run_comparison``; the pictures come from the
caller's ``draw`` (the GUI layer's ``report_plots.draw_report``), so nothing here imports Qt."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..runs import CheckpointError, RunError, TrainConfig
from . import runner
from .lengths import check_lengths
from .results import is_task
from .variants import expand

# what bad input (a corpus, a folder, a changed graph) raises: the caller says it in one line
USER_ERRORS = (ValueError, OSError, CheckpointError, RunError)


@dataclass
class Outcome:
    failures: list[tuple[runner.RunSpec, str]] = field(default_factory=list)
    page: Path | None = None          # report.html, once written
    summary: list[str] = field(default_factory=list)   # a lesson's sentences
    commands: int = 0                 # runs printed instead of trained (print_only)
    runs: int = 0                     # runs planned
    reused: int = 0                   # of them, complete in the folder already: not trained
    stopped: bool = False             # a Stop ended the training: no page was written


def plan_runs(label: str, base, varies, seeds: list[int], config: TrainConfig,
              eval_lengths: list[int], out: Path, lesson: str = "",
              lrs: dict[str, float] | None = None) -> list[runner.RunSpec]:
    """Check every variant, write DIR/compare.json and the variant graphs; the runs to train.
    ``lrs`` gives variants their own lr by name (from an lr sweep; a lesson's come from its
    record when not given), the others train at ``config.lr``. Raises one of USER_ERRORS for
    a variant that is not a valid graph or a DIR that holds another comparison."""
    from ..graph import validate

    variants = expand(base, varies)
    for variant in variants:
        problems = [d for d in validate(variant.graph, context_length=config.seq_len)
                    if d.severity == "error"]
        if problems:
            raise ValueError(f"variant {variant.name} is not a valid graph: "
                             f"{problems[0].message}; {problems[0].hint}")
    if eval_lengths:
        check_lengths(eval_lengths)
        if is_task(config.corpus):
            raise ValueError(f"--eval-lengths measures loss by position along a token stream, "
                             f"and {config.corpus} is a synthetic task scored on its answers; "
                             "drop --eval-lengths (the report gives answer accuracy)")
    if lrs is None and lesson:
        from .lessons.lr_record import chosen_lrs
        lrs = chosen_lrs(lesson)[0]
    lrs = lrs or {}
    plan = runner.Plan(label, varies, seeds, config, eval_lengths,
                       [{"name": v.name, "slug": v.slug, "settings": list(v.settings),
                         **({"lr": lrs[v.name]} if v.name in lrs else {})}
                        for v in variants], lesson)
    return runner.write_plan(out, plan, variants)


def run_comparison(label: str, base, varies, seeds: list[int], config: TrainConfig,
                   eval_lengths: list[int], out: Path, *, draw: Callable, jobs: int = 1,
                   print_only: bool = False, target_loss: float | None = None,
                   lesson: str = "", say: Callable[[str], None] = lambda line: None,
                   listeners_for: Callable[[runner.RunSpec], list] = lambda spec: [],
                   stop: runner.Stop | None = None,
                   lrs: dict[str, float] | None = None) -> Outcome:
    """Plan, train, report; raises one of USER_ERRORS for bad input (before any training, or
    when the corpus cannot be used). Runs that fail are reported in ``Outcome.failures`` and
    the page is written from the ones that finished. ``listeners_for(spec)`` gives the
    trainer listeners of each run trained in this process (the app's live curves); ``stop``
    ends that training from another thread, and then no page is written (measuring the
    finished runs would keep the user waiting after they asked to stop)."""
    from .report import write_page

    specs = plan_runs(label, base, varies, seeds, config, eval_lengths, out, lesson, lrs)
    if print_only:
        return Outcome(commands=runner.print_commands(specs))
    reused = sum(runner.is_finished(s.run_dir, s.config.steps) for s in specs)
    if jobs > 1:
        failures = runner.train_in_processes(specs, jobs, say)
    else:
        failures = runner.train_in_process(specs, say, listeners_for=listeners_for, stop=stop)
    for spec, message in failures:
        say(f"{spec.variant} (seed {spec.seed}) failed: {message}")
    if stop is not None and stop.requested:
        return Outcome(failures, runs=len(specs), reused=reused, stopped=True)
    if failures and len(failures) == len(specs):  # nothing to report: say why in the last line
        spec, message = failures[0]
        raise ValueError(f"every run failed; the first, {spec.variant} (seed {spec.seed}): "
                         f"{message}")
    page, summary = write_page(Path(out), draw, target_loss=target_loss, progress=say)
    return Outcome(failures, page, summary, runs=len(specs), reused=reused)
