"""``tfstudio train GRAPH --corpus ... --tokenizer ... --steps ... --out RUN_DIR [--resume]``.

Works the same under ``torchrun --nproc_per_node N -m tfstudio train ...`` (rank 0 prints and
writes the run folder)."""
from __future__ import annotations

import builtins
import sys
from dataclasses import fields
from pathlib import Path

from ..runs.config import TrainConfig
from . import values
from .checks import check_device
from .errors import (USAGE_EXIT, UsageError, check_out_apart, check_out_folder,
                     os_error_from_text, os_error_line, report_bug, user_message)
from .progress import TrainingProgress

# what each training setting does, for -h (HelpFormatter appends choices and defaults); the
# commands that train (compare, lesson) show the same sentences
SETTING_HELP = {
    "corpus": "the text to train on: sample (generated stories; sample:small|medium|large "
              "for other sizes), pydoc (Python's documentation), task:NAME (a synthetic task: "
              "copy, reverse, sort, add, brackets, induction) or a path to a .txt/.md/.jsonl "
              "file or a folder of them",
    "tokenizer": "how text becomes ids: byte, char, word:N (the corpus's N commonest words), "
                 "bpe:N (N merges learned on the corpus) or tiktoken:NAME (e.g. tiktoken:gpt2)",
    "steps": "optimizer steps to train for (default: 500 for a new run; a resumed run keeps "
             "its own, and a larger N extends it)",
    "batch_size": "sequences per step",
    "seq_len": "tokens per training sequence (the model's context while training; generation "
               "reads at most this many)",
    "lr": "peak learning rate, reached after the warm-up",
    "min_lr_ratio": "the cosine decay ends at lr x this ratio",
    "warmup_steps": "steps of linear warm-up from lr/warmup-steps up to lr",
    "weight_decay": "AdamW weight decay on matrices and embeddings (biases and norm gains get none)",
    "beta1": "AdamW's first-moment decay",
    "beta2": "AdamW's second-moment decay",
    "grad_clip": "clip the gradient's global norm to this; 0 turns clipping off",
    "grad_accum": "micro-batches summed per optimizer step (a larger batch in the same memory)",
    "precision": "number format while training; auto: bf16 on a CUDA GPU that has it, else fp32",
    "compile": "compile the model with torch.compile first (slower start, faster steps on a GPU)",
    "device": "where to train: auto (CUDA, then Apple MPS, then CPU), cpu, cuda, cuda:N or mps",
    "parallel": "how processes share the model under torchrun: ddp copies it to every process, "
                "fsdp shards its weights across them; ignored in a single process",
    "seed": "random seed for the initial weights and the batch order",
    "eval_every": "steps between validation-loss evaluations; 0 never evaluates",
    "eval_batches": "batches per validation evaluation",
    "checkpoint_every": "steps between checkpoints; 0 saves one only at the end (and when "
                        "stopped)",
    "keep_checkpoints": "how many recent checkpoints to keep (older ones are deleted; 0 keeps all)",
    "log_every": "steps between logged training metrics",
    "probe_every": "steps between looks inside the model (attention, activations) saved to "
                   "the run's probes/ folder; 0 never looks",
    "probe_text": "text the probes feed the model; default: the corpus's opening words (a "
                  "fixed example for a task)",
    "val_fraction": "share of the corpus held out for validation, between 0 and 1",
    "init_from": "a run folder whose latest weights start this run (fine-tuning) instead of a "
                 "fresh initialisation; default: fresh weights",
    "lr_decay_steps": "steps the cosine decay spans (0: all of --steps); later steps keep its "
                      "final rate",
    "no_memory_check": "train even when the memory pre-flight predicts the run will not fit "
                       "(the refusal names both numbers)",
}
SETTING_CHOICES = {"precision": ("auto", "fp32", "bf16", "fp16"),
                   "parallel": ("ddp", "fsdp")}
# what each numeric setting's flag accepts (checked as it is read: one line, exit 2); every
# numeric TrainConfig field has one, which a test checks
SETTING_TYPES = {
    "steps": values.positive_int, "batch_size": values.positive_int,
    "seq_len": values.positive_int, "grad_accum": values.positive_int,
    "eval_batches": values.positive_int, "log_every": values.positive_int,
    "lr_decay_steps": values.non_negative_int, "warmup_steps": values.non_negative_int,
    "eval_every": values.non_negative_int, "checkpoint_every": values.non_negative_int,
    "keep_checkpoints": values.non_negative_int, "probe_every": values.non_negative_int,
    "lr": values.learning_rate, "min_lr_ratio": values.ratio,
    "weight_decay": values.non_negative_float, "beta1": values.beta, "beta2": values.beta,
    "grad_clip": values.non_negative_float, "val_fraction": values.open_ratio,
    "seed": values.run_seed, "device": values.device, "corpus": values.path,
    "init_from": values.optional_path,
}


def setting_type(name: str):
    """The ``type=`` of TrainConfig field ``name``'s flag (str for the text settings)."""
    return SETTING_TYPES.get(name, str)


def configure(parser) -> None:
    parser.add_argument("graph", type=values.path, help="a preset name (see `tfstudio presets`) or a graph .json "
                                      "file")
    parser.add_argument("--out", type=values.path, required=True, help="run folder to write (or resume); "
                                                     "created if missing")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out from its newest intact checkpoint (the "
                             "corpus, tokenizer, batch, length, seed and learning-rate schedule "
                             "are the run's own; --steps N beyond its end extends it)")
    parser.add_argument("--force", action="store_true",
                        help="replace an earlier run in --out (without --resume); it is kept "
                             "until the new run has passed every check and saved its first "
                             "checkpoint")
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="what to do with invalid UTF-8 in corpus files: strict stops and "
                             "names the file, replace reads it as U+FFFD")
    parser.add_argument("--rope-scaling", type=values.positive_float, default=1.0,
                        help="stretch RoPE positions by this factor before training (position "
                             "interpolation), e.g. 4 with --init-from and a 4x --seq-len; "
                             "default 1: as the graph says")
    parser.add_argument("--rope-scaling-type", choices=("linear", "ntk"), default="linear",
                        help="how --rope-scaling stretches: linear divides the positions, ntk "
                             "raises RoPE's base instead (default linear)")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        if f.name == "corpus_errors":  # offered as --errors above
            continue
        flag = setting_flag(f.name)
        value = getattr(defaults, f.name)
        if isinstance(value, bool):
            parser.add_argument(flag, action="store_true", default=value, help=SETTING_HELP[f.name])
        else:
            parser.add_argument(flag, type=setting_type(f.name), default=value,
                                help=SETTING_HELP[f.name],
                                choices=SETTING_CHOICES.get(f.name))
    parser.set_defaults(steps=None)  # None: a new run's default, or a resumed run's own


def setting_flag(name: str) -> str:
    """The flag that sets TrainConfig field ``name`` ("--seq-len" for seq_len)."""
    return "--errors" if name == "corpus_errors" else "--" + name.replace("_", "-")


def config_from_args(args) -> TrainConfig:
    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig)
              if f.name != "corpus_errors"}
    return TrainConfig(**values, corpus_errors=args.errors)


def failure_exit(event) -> int:
    """Print a failed run's one line and exit 2 (a refusal, a full disk, a loss that became
    NaN, out of memory: each says what to change), or 3 for a bug. The README's scheme has no
    exit 1: a diverged run is bad luck with a fix, not an error of the program."""
    message = event.message
    if event.reason == "error":
        name, _, message = message.partition(": ")
        if name not in _USER_ERRORS:
            return report_bug("train", event.message, event.details or event.message)
    os_error = os_error_from_text(message)  # "[Errno 30] ...: 'PATH'" as a sentence
    message = (os_error and os_error_line(os_error)) or message
    print(f"tfstudio train: {message}", file=sys.stderr)
    return USAGE_EXIT


# the trainer reports an exception as "Name: message"; these names are mistakes in the input:
# the builtin value and file errors, and the project's own errors about graphs, data and runs
_USER_ERRORS = {name for name, cls in vars(builtins).items()
                if isinstance(cls, type) and issubclass(cls, (ValueError, OSError))} | {
    "DataError", "GraphError", "GraphFileError", "PresetNotFound", "UnknownBlockError",
    "CompileError", "InteropError", "ExportRefused", "RunError", "CheckpointError"}


def run(args) -> int:
    from .. import load_graph
    from ..data import build_tokenizer, load_corpus
    from ..train.events import Failed, Finished
    from ..train.signals import StopOnSignals, exit_code

    if args.steps is None:  # not given: a new run's default, or the resumed run's own
        args.steps = _saved_steps(args.out) if args.resume else TrainConfig.steps
    config = config_from_args(args)
    check_out_folder(args.out)
    if not args.resume:
        check_out_apart(args.out, _inputs(args))
    if config.device != "auto":
        check_device(config.device)
    try:
        config.check()
        graph = load_graph(args.graph)
        if args.rope_scaling != 1.0 or args.rope_scaling_type != "linear":
            from ..experiments.scaling import apply_rope_scaling
            graph = apply_rope_scaling(graph, args.rope_scaling, args.rope_scaling_type)
        tokenizer = corpus = capped = None
        starts_from_run = bool(config.init_from) and (
            Path(config.init_from) / "tokenizer.json").exists()
        if not args.resume and not starts_from_run:
            corpus = load_corpus(config.corpus, errors=config.corpus_errors)
            tokenizer = build_tokenizer(config.tokenizer, corpus)
            capped = capped_vocabulary_note(config.tokenizer, tokenizer)
    except (ValueError, OSError) as exc:
        raise UsageError(user_message(exc)) from None
    # torch comes in only now (~2 s of CPU): a graph, corpus or tokenizer refused above is
    # told at once
    from ..train.preload import TRAINING, import_frozen
    import_frozen(TRAINING)
    from ..train.distributed import from_environment
    from ..train.trainer import Trainer
    dist = from_environment()
    if capped and dist.is_main:
        print(f"tfstudio train: note: {capped}", file=sys.stderr)
    listeners = [_WithNotes(TrainingProgress())] if dist.is_main else []
    trainer = Trainer(graph, config, run_dir=args.out, resume=args.resume, listeners=listeners,
                      dist=dist, tokenizer=tokenizer, corpus=corpus, overwrite=args.force)
    # torchrun forwards a signal to every rank, which could stop at different steps and wait
    # forever for each other; there the signal ends the processes as before
    say = (lambda line: print(f"tfstudio train: {line}", file=sys.stderr)) if dist.is_main \
        else None
    stopping = StopOnSignals(trainer.stop, say, abandon=trainer.abandon)
    with stopping if not dist.enabled else _NoSignals() as signals:
        end = trainer.run()
    if isinstance(end, Failed):
        return failure_exit(end) if dist.is_main else 1
    if signals.received is not None and isinstance(end, Finished) and end.reason == "stopped":
        print(f"tfstudio train: {stopped_line(end.step, trainer.state.saved_step)}",
              file=sys.stderr)
        return exit_code(signals.received)
    if dist.is_main and isinstance(end, Finished) and end.note:
        print(f"tfstudio train: {end.note}", file=sys.stderr)
    elif dist.is_main:
        print(f"run folder: {args.out}", file=sys.stderr)
    return 0


def _inputs(args) -> dict[str, str]:
    """What a new run reads from disk, which --force would set aside and delete with the old
    run: the run --init-from names, a corpus file or folder, a graph file (but not the old
    run's own graph.json, which the new run writes again)."""
    reads = {"the run --init-from reads": args.init_from, "the corpus train reads": args.corpus}
    if Path(args.graph).resolve() != (Path(args.out) / "graph.json").resolve():
        reads["the graph file train reads"] = args.graph
    return reads


def capped_vocabulary_note(spec: str, tokenizer) -> str:
    """A line when ``word:N`` asked for more words than the corpus has ('' otherwise): the
    vocabulary is every word it has, which a user asking for N should know."""
    kind, _, size = spec.strip().partition(":")
    if kind.lower() != "word" or not size.isdigit():
        return ""
    asked, got = int(size), tokenizer.ordinary_vocab_size
    if got >= asked:
        return ""
    return (f"--tokenizer {spec} asks for {asked:,} words, but the corpus has {got:,} distinct "
            f"words: the vocabulary is capped at those {got:,} (as --tokenizer word:{got})")


def stopped_line(step: int, saved_step: int | None) -> str:
    """What a run stopped by a signal at ``step`` left on disk, in one line."""
    if saved_step == step and step > 0:
        return f"stopped at step {step}; checkpoint saved; continue with --resume"
    if saved_step is not None:
        return (f"stopped at step {step}; the checkpoint of step {saved_step} is kept; "
                "continue with --resume")
    return f"stopped at step {step}, before any training step; nothing to save"


class _NoSignals:
    received = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


class _WithNotes:
    """Passes events to the progress printer, except what ``run`` says in one line itself (a
    refusal, a resume with nothing to do), and prints the notes a run starts with."""

    def __init__(self, printer):
        self.printer = printer

    def __call__(self, event) -> None:
        from ..train.events import Finished, Started
        if isinstance(event, Started):
            for note in event.notes:
                print(f"tfstudio train: note: {note}", file=sys.stderr)
        if isinstance(event, Finished) and event.note:
            return
        self.printer(event)


def _saved_steps(run_dir: str) -> int:
    """The --steps a run folder was trained with (the default if it cannot be read: the
    trainer then says what is wrong with the folder)."""
    from ..runs.folder import RunError, RunFolder
    try:
        return RunFolder(run_dir).config().steps
    except RunError:
        return TrainConfig.steps
