"""``tfstudio eval RUN [--lengths 64,128,256,512] [--rope-scaling F] [--rope-scaling-type
linear|ntk]``: loss per position bucket on the run's validation split, printed and saved as
RUN/lengths.json (with the per-position curve), to see how far past its training length a model
keeps working."""
from __future__ import annotations

import sys

from . import values
from .checks import check_device, say_what_is_used
from .errors import UsageError, user_message

PROG = "tfstudio eval"


def configure(parser) -> None:
    parser.add_argument("run", type=values.path, help="a run folder (from tfstudio train)")
    parser.add_argument("--lengths", default="",
                        help="bucket ends, e.g. 64,128,256,512 (default: 1-4 training lengths)")
    parser.add_argument("--rope-scaling", type=values.positive_float, default=1.0,
                        help="scale RoPE positions by this factor (no training), e.g. 4")
    parser.add_argument("--rope-scaling-type", choices=("linear", "ntk"), default="linear",
                        help="linear (position interpolation) or ntk (stretch the base)")
    parser.add_argument("--device", type=values.device, default="cpu", help="cpu, cuda, cuda:N or mps")


def run(args) -> int:
    from ..experiments import lengths
    from ..runs import CheckpointError, RunError

    try:
        bucket_ends = [int(x) for x in args.lengths.split(",") if x.strip()] or None
    except ValueError:
        print(f"{PROG}: --lengths takes comma-separated whole numbers such as 64,128,256; got "
              f"'{args.lengths}'", file=sys.stderr)
        return 2
    from ..train.preload import READING, import_frozen
    import_frozen(READING)  # torch comes in here
    try:
        device = str(check_device(args.device))
        _check_run(args.run, args.device, device)
        result = lengths.evaluate_run(args.run, bucket_ends, rope_scaling=args.rope_scaling,
                                      rope_scaling_type=args.rope_scaling_type,
                                      device=device)
    except (ValueError, OSError, CheckpointError, RunError, UsageError) as exc:
        print(f"{PROG}: {user_message(exc)}", file=sys.stderr)
        return 2
    path = lengths.result_path(args.run, args.rope_scaling, args.rope_scaling_type)
    scaled = (f", RoPE scaled x{args.rope_scaling:g} ({args.rope_scaling_type})"
              if args.rope_scaling != 1.0 else "")
    print(f"loss by position, trained on {result.train_length} tokens{scaled} "
          f"({result.windows} validation windows):")
    if result.warmup:  # too little context to predict: kept out of the first bucket
        print(f"  positions {result.warmup_name():>11}: {result.warmup_loss:.3f} (warm-up, apart)")
    for name, loss in zip(result.bucket_names(), result.buckets):
        text = f"{loss:.3f}" if loss is not None else f"cannot go past {result.limit}"
        print(f"  positions {name:>11}: {text}")
    try:  # printed first: a run folder that cannot be written still shows its results
        lengths.save(result, path)
    except OSError as exc:
        print(f"{PROG}: could not save {path} ({exc.strerror or exc}); the results are the "
              "lines above", file=sys.stderr)
        return 2
    print(f"saved {path}")
    return 0


def _check_run(run: str, asked_device: str, device: str) -> None:
    """The run's graph, tokenizer and settings are the ones its newest checkpoint was trained
    with (RunError naming the changed file otherwise), and its model fits in memory; says
    which checkpoint and device are used when they are not the ones asked for."""
    from ..runs import RunFolder
    from ..runs.preflight import check_model_memory
    folder = RunFolder(run)
    if folder.exists():
        say_what_is_used(PROG, folder, asked_device, device)
        check_model_memory(folder.graph(), device=device, copies=2, what=f"evaluating {run}")
        if folder.checkpoint().path is not None:
            # held from rotation: a run still training may delete it between choice and read
            folder.read_newest(folder.check_setup)
            folder.tokenizer()  # its special ids are checked as it loads
