"""``tfstudio compare BASE --vary KEY=v1,v2 [--vary ...] --steps N [--seeds 1,2] [--jobs J]
--out DIR``: train variants of one graph on the same data, seeds and budget, and write
DIR/report.md and report.html. ``--print-commands`` prints the ``tfstudio train`` commands for
a scheduler instead; ``--report DIR`` collects their folders afterwards; ``--lesson NAME`` runs
a built-in lesson (see ``tfstudio lesson``)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..runs import CheckpointError, RunError
from ..runs.config import TrainConfig
from .train import SETTING_HELP

PROG = "tfstudio compare"
# what bad input (a corpus, a folder, a changed graph) raises: one line, exit 2
USER_ERRORS = (ValueError, OSError, CheckpointError, RunError)
TRAINING_FLAGS = ("corpus", "tokenizer", "steps", "batch_size", "seq_len", "lr", "warmup_steps",
                  "device", "precision")


def configure(parser) -> None:
    parser.add_argument("base", nargs="?", help="a preset name or a graph .json file")
    parser.add_argument("--vary", action="append", default=[], metavar="KEY=v1,v2",
                        help="attention=mha,gqa,mqa; norm=pre,post,sandwich; positions=learned,"
                             "sinusoidal,rope,alibi,none; ffn=dense,moe; activation=gelu,swiglu; "
                             "or a parameter path such as layers.attn.heads=2,4,8 (repeatable: "
                             "every combination is trained)")
    parser.add_argument("--out", help="folder for the runs and the report (required, except "
                                      "for --report and --lesson: default lesson-NAME)")
    parser.add_argument("--seeds", default=str(TrainConfig.seed),
                        help="comma-separated seeds, each variant trained once per seed "
                             "(default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="train this many runs at once as local processes (default 1)")
    parser.add_argument("--eval-lengths", default="",
                        help="e.g. 64,128,192,256: loss per position bucket and a loss-against-"
                             "position plot")
    parser.add_argument("--target-loss", type=float, default=None,
                        help="validation loss for the 'steps to target' column (default: the "
                             "worst variant's final loss, which every variant reaches)")
    parser.add_argument("--print-commands", action="store_true",
                        help="print the tfstudio train commands instead of running them")
    parser.add_argument("--report", metavar="DIR",
                        help="collect the finished runs of the comparison in DIR and write its "
                             "report instead of training (default: train, then report)")
    parser.add_argument("--lesson", choices=("positions", "attention", "norm"),
                        help="run a built-in lesson instead of --vary (default: none)")
    defaults = TrainConfig()
    for name in TRAINING_FLAGS:
        value = getattr(defaults, name)
        parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                            help=SETTING_HELP[name] + "; the same for every variant")


def fail(message: str, prog: str = PROG) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return 2


def _numbers(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--{what} takes comma-separated whole numbers such as 1,2,3; "
                         f"got '{text}'") from None
    return values


def run(args) -> int:
    try:
        if args.lesson:
            from .lesson import run_lesson
            return run_lesson(args.lesson, Path(args.out) if args.out else None, prog=PROG)
        if args.report:
            report_path = write_report(Path(args.report), target_loss=args.target_loss)
            print(f"report: {report_path}")
            return 0
        plan_args = _plan_from_args(args)
    except USER_ERRORS as exc:
        return fail(str(exc))
    return compare(*plan_args, jobs=args.jobs, print_only=args.print_commands,
                   target_loss=args.target_loss)


def _plan_from_args(args):
    from .. import load_graph
    from ..experiments.variants import parse_vary

    if not args.base:
        raise ValueError("name the base graph (a preset or a .json file), e.g. "
                         "tfstudio compare tiny-gpt --vary attention=mha,gqa --out DIR")
    if not args.vary:
        raise ValueError("say what to vary, e.g. --vary attention=mha,gqa,mqa")
    if not args.out:
        raise ValueError("say where the runs go with --out DIR")
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1; got {args.jobs}")
    seeds = _numbers(args.seeds, "seeds")
    if not seeds:
        raise ValueError("--seeds needs at least one seed, e.g. --seeds 1,2,3")
    lengths = _numbers(args.eval_lengths, "eval-lengths")
    config = TrainConfig(**{name: getattr(args, name) for name in TRAINING_FLAGS},
                         seed=seeds[0], eval_every=max(1, args.steps // 10))
    config.check()
    base = load_graph(args.base)
    return args.base, base, [parse_vary(v) for v in args.vary], seeds, config, lengths, \
        Path(args.out)


def compare(base_name: str, base, varies, seeds: list[int], config: TrainConfig,
            eval_lengths: list[int], out: Path, *, jobs: int = 1, print_only: bool = False,
            target_loss: float | None = None, lesson: str = "", prog: str = PROG) -> int:
    """Build the variants, train what is missing, write the report; the exit status."""
    from ..experiments import runner
    from ..experiments.lengths import check_lengths
    from ..experiments.variants import expand
    from ..graph import validate

    try:
        variants = expand(base, varies)
        for variant in variants:
            problems = [d for d in validate(variant.graph, context_length=config.seq_len)
                        if d.severity == "error"]
            if problems:
                raise ValueError(f"variant {variant.name} is not a valid graph: "
                                 f"{problems[0].message}; {problems[0].hint}")
        if eval_lengths:
            check_lengths(eval_lengths)
        plan = runner.Plan(base_name, varies, seeds, config, eval_lengths,
                           [{"name": v.name, "slug": v.slug, "settings": list(v.settings)}
                            for v in variants], lesson)
        specs = runner.write_plan(out, plan, variants)
    except USER_ERRORS as exc:
        return fail(str(exc), prog)
    if print_only:
        count = runner.print_commands(specs)
        print(f"{count} run(s) to train; afterwards: tfstudio compare --report {out}",
              file=sys.stderr)
        return 0
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        if jobs > 1:
            failures = runner.train_in_processes(specs, jobs, say)
        else:
            failures = runner.train_in_process(specs, say)
    except USER_ERRORS as exc:  # the corpus or tokenizer cannot be used as asked
        return fail(str(exc), prog)
    for spec, message in failures:
        say(f"{prog}: {spec.variant} (seed {spec.seed}) failed: {message}")
    try:
        path = write_report(out, target_loss=target_loss)
    except USER_ERRORS as exc:
        return fail(str(exc), prog)
    print(f"report: {path}")
    return 1 if failures else 0


def write_report(out: Path, *, target_loss: float | None = None) -> Path:
    """Collect the finished runs in ``out``, draw the plots, write report.md/html (a lesson's
    page with its title and sentences, which are printed too); the HTML's path."""
    from ..experiments.report import write_page
    from ..gui.report_plots import draw_report

    page, summary = write_page(Path(out), draw_report, target_loss=target_loss,
                               progress=lambda line: print(line, file=sys.stderr, flush=True))
    for sentence in summary:
        print(sentence)
    return page
