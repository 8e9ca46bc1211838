"""``tfstudio compare BASE --vary KEY=v1,v2 [--vary ...] --steps N [--seeds 1,2] [--jobs J]
--out DIR``: train variants of one graph on the same data, seeds and budget, and write
DIR/report.md and report.html. ``--print-commands`` prints the ``tfstudio train`` commands for
a scheduler instead; ``--report DIR`` collects their folders afterwards; ``--lesson NAME`` runs
a built-in lesson (see ``tfstudio lesson``)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..experiments.seeds import read_numbers
from ..runs import CheckpointError, RunError
from ..runs.config import TrainConfig
from . import values
from .train import SETTING_CHOICES, SETTING_HELP, setting_type

PROG = "tfstudio compare"
# what bad input (a corpus, a folder, a changed graph) raises: one line, exit 2
USER_ERRORS = (ValueError, OSError, CheckpointError, RunError)
TRAINING_FLAGS = ("corpus", "tokenizer", "steps", "batch_size", "seq_len", "lr", "warmup_steps",
                  "device", "precision")


def configure(parser) -> None:
    parser.add_argument("base", nargs="?", type=values.path, help="a preset name or a graph .json file")
    parser.add_argument("--vary", action="append", default=[], metavar="KEY=v1,v2",
                        help="attention=mha,gqa,mqa; norm=pre,post,post-in-residual,sandwich; "
                             "positions=learned,sinusoidal,rope,alibi,none; ffn=dense,moe; "
                             "activation=gelu,swiglu; or a parameter path such as "
                             "layers.attn.heads=2,4,8 (repeatable: every combination is "
                             "trained)")
    parser.add_argument("--out", type=values.path, help="folder for the runs and the report (required, except "
                                      "for --report and --lesson: default lesson-NAME)")
    parser.add_argument("--seeds", type=values.run_seeds, default=None,
                        help="comma-separated seeds, each variant trained once per seed "
                             f"(default: {TrainConfig.seed}; a lesson's: 1,2,3)")
    parser.add_argument("--jobs", type=values.positive_int, default=1,
                        help="train this many runs at once as local processes (default 1)")
    parser.add_argument("--eval-lengths", default="",
                        help="e.g. 64,128,192,256: loss per position bucket and a loss-against-"
                             "position plot")
    parser.add_argument("--target-loss", type=values.finite_float, default=None,
                        help="validation loss for the 'steps to target' column (default: the "
                             "worst variant's final loss, which every variant reaches)")
    parser.add_argument("--tune-lr", action="store_true",
                        help="first sweep each variant's lr (4 log-spaced values, widened past "
                             "an edge that wins, 2 seeds, the two lowest means trained again on "
                             "2 more; chosen on text apart from the validation split: of those "
                             "two, the smallest lr within one standard error of the lower "
                             "mean loss), then train each variant at its own lr; "
                             "the sweep's table goes on the report (DIR/tuned_lrs.json)")
    parser.add_argument("--print-commands", action="store_true",
                        help="print the tfstudio train commands instead of running them")
    parser.add_argument("--report", type=values.path, metavar="DIR",
                        help="collect the finished runs of the comparison in DIR and write its "
                             "report instead of training (default: train, then report)")
    parser.add_argument("--lesson", metavar="NAME",
                        help="run a built-in lesson instead of --vary (see tfstudio lesson -h); "
                             "it takes --seeds, --steps, --jobs, --out, --device, --precision "
                             "and --print-commands, and refuses the flags its claim fixes "
                             "(default: none)")
    defaults = TrainConfig()
    for name in TRAINING_FLAGS:
        value = getattr(defaults, name)
        # None: not given (a lesson refuses a flag given; a plain comparison takes the default)
        parser.add_argument("--" + name.replace("_", "-"), type=setting_type(name), default=None,
                            choices=SETTING_CHOICES.get(name),
                            help=SETTING_HELP[name] + f"; the same for every variant "
                                                      f"(default: {value})")


def fail(message: str, prog: str = PROG) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    try:
        if args.lesson:
            from ..experiments.seeds import read_seeds
            from .lesson import run_lesson
            _refuse_for_lesson(args)
            # read as `tfstudio lesson --seeds` reads them (distinct: a repeat measures nothing)
            return run_lesson(args.lesson, Path(args.out) if args.out else None, prog=PROG,
                              seeds=read_seeds(args.seeds) if args.seeds else None,
                              steps=args.steps, jobs=args.jobs, device=args.device,
                              precision=args.precision, print_only=args.print_commands)
        if args.report:
            report_path = write_report(Path(args.report), target_loss=args.target_loss)
            print(f"report: {report_path}")
            return 0
        plan_args = _plan_from_args(args)
        lrs = _tune(*plan_args) if args.tune_lr else None
    except USER_ERRORS as exc:
        return fail(str(exc))
    return compare(*plan_args, jobs=args.jobs, print_only=args.print_commands,
                   target_loss=args.target_loss, lrs=lrs)


def _tune(base_name, base, varies, seeds, config, eval_lengths, out) -> dict[str, float]:
    """--tune-lr: each variant's best lr from the sweep (experiments.sweep, as the lessons')."""
    import torch

    from ..experiments.runner import refuse_a_file
    from ..experiments.sweep import tune
    from ..experiments.variants import expand

    refuse_a_file(out)
    torch.set_num_threads(1)   # tiny models: one thread each is fastest on a shared CPU
    say = lambda line: print(f"lr sweep: {line}", file=sys.stderr, flush=True)  # noqa: E731
    lrs = tune(out, [(v.name, v.graph) for v in expand(base, varies)], config, progress=say)
    say("chosen: " + ", ".join(f"{name} {lr:g}" for name, lr in lrs.items()))
    return lrs


# the training flags a lesson takes; the others are part of what its claim was measured with
LESSON_TAKES = ("steps", "device", "precision")


def _refuse_for_lesson(args) -> None:
    """--lesson with a flag it cannot honour: say which, before anything runs."""
    given = [f"--{name.replace('_', '-')}" for name in TRAINING_FLAGS
             if name not in LESSON_TAKES and getattr(args, name) is not None]
    given += [flag for flag, value in (("--vary", args.vary), ("--eval-lengths",
              args.eval_lengths), ("--target-loss", args.target_loss), ("--report", args.report),
              ("--tune-lr (a lesson trains at its recorded sweep's lrs)", args.tune_lr),
              ("a base graph", args.base)) if value]
    if given:
        raise ValueError(f"--lesson {args.lesson} fixes its own graph and training, so it "
                         f"cannot take {', '.join(given)}; drop them, or run tfstudio compare "
                         "with --vary to choose everything yourself")


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
    seeds = read_numbers(args.seeds or str(TrainConfig.seed), "--seeds")
    if not seeds:
        raise ValueError("--seeds needs at least one seed, e.g. --seeds 1,2,3")
    lengths = read_numbers(args.eval_lengths, "--eval-lengths")
    given = {name: getattr(args, name) for name in TRAINING_FLAGS
             if getattr(args, name) is not None}
    config = TrainConfig(**given, seed=seeds[0])
    config.eval_every = max(1, config.steps // 10)
    config.check()
    base = load_graph(args.base)
    return args.base, base, [parse_vary(v) for v in args.vary], seeds, config, lengths, \
        Path(args.out)


def compare(base_name: str, base, varies, seeds: list[int], config: TrainConfig,
            eval_lengths: list[int], out: Path, *, jobs: int = 1, print_only: bool = False,
            target_loss: float | None = None, lesson: str = "", prog: str = PROG,
            lrs: dict[str, float] | None = None) -> int:
    """Build the variants, train what is missing, write the report; the exit status."""
    from ..experiments.compare import run_comparison
    from ..gui.report_plots import draw_report

    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        outcome = run_comparison(base_name, base, varies, seeds, config, eval_lengths, out,
                                 draw=draw_report, jobs=jobs, print_only=print_only,
                                 target_loss=target_loss, lesson=lesson, say=say, lrs=lrs)
    except USER_ERRORS as exc:
        return fail(str(exc), prog)
    if print_only:
        print(f"{outcome.commands} run(s) to train; afterwards: tfstudio compare --report {out}",
              file=sys.stderr)
        return 0
    for sentence in outcome.summary:
        print(sentence)
    print(f"report: {outcome.page}")
    return 1 if outcome.failures else 0


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
