"""``tfstudio train GRAPH --corpus ... --tokenizer ... --steps ... --out RUN_DIR [--resume]``.

Works the same under ``torchrun --nproc_per_node N -m tfstudio train ...`` (rank 0 prints and
writes the run folder)."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from dataclasses import fields

from ..runs.config import TrainConfig

_HELP = {
    "corpus": "sample, sample:small|medium|large, pydoc, task:NAME (copy, reverse, sort, add, "
              "brackets, induction) or a path to a .txt/.md/.jsonl file or folder",
    "tokenizer": "byte, char, bpe:N (trained on the corpus) or tiktoken:NAME",
    "precision": "auto, fp32, bf16 or fp16",
    "device": "auto, cpu, cuda, cuda:N or mps",
    "lr_decay_steps": "steps the cosine decay spans (0: all of --steps); later steps keep its "
                      "final rate",
    "no_memory_check": "train even when the memory pre-flight predicts the run will not fit",
}


def configure(parser) -> None:
    parser.add_argument("graph", help="a preset name or a graph .json file")
    parser.add_argument("--out", required=True, help="run folder to write (or resume)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out from its newest intact checkpoint (the "
                             "corpus, tokenizer, batch, length, seed and learning-rate schedule "
                             "are the run's own; --steps N beyond its end extends it)")
    parser.add_argument("--force", action="store_true",
                        help="replace an earlier run in --out (without --resume)")
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="replace: read invalid UTF-8 in corpus files as U+FFFD instead of stopping")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        if f.name == "corpus_errors":  # offered as --errors above
            continue
        flag = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        if isinstance(value, bool):
            parser.add_argument(flag, action="store_true", default=value,
                                help=_HELP.get(f.name, f"(default {value})"))
        else:
            parser.add_argument(flag, type=type(value), default=value,
                                help=_HELP.get(f.name, "") + f" (default {value})")
    parser.set_defaults(steps=None)  # None: a new run's default, or a resumed run's own


def config_from_args(args) -> TrainConfig:
    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig)
              if f.name != "corpus_errors"}
    return TrainConfig(**values, corpus_errors=args.errors)


class ProgressPrinter:
    """One updating line: step, loss, tokens/s, ETA; evaluations and the end on their own line."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.total = 0
        self.tty = self.stream.isatty()

    def __call__(self, event) -> None:
        kind = event.kind
        if kind == "Started":
            self.total = event.total_steps
            self._line(f"training {event.graph_name or 'graph'}: {event.params:,} parameters, "
                       f"{event.objective}, {event.device}/{event.precision}", end="\n")
        elif kind == "StepMetrics":
            done = event.step / max(1, self.total)
            eta = event.elapsed_s / max(done, 1e-9) - event.elapsed_s
            bar = "#" * int(done * 24)
            text = (f"[{bar:<24}] {event.step}/{self.total} loss {event.loss:.4f} "
                    f"lr {event.lr:.2e} {event.tokens_per_s:,.0f} tok/s ETA {eta:,.0f}s")
            if self.tty:
                self._line("\r" + text, end="")
            elif event.step % max(1, self.total // 20) == 0:
                self._line(text)
        elif kind == "EvalMetrics":
            acc = f", accuracy {event.accuracy:.1%}" if event.accuracy is not None else ""
            self._line(f"{self._cr()}step {event.step}: validation loss {event.val_loss:.4f}, "
                       f"perplexity {event.perplexity:.2f}{acc}")
        elif kind == "Failed":
            self._line(f"{self._cr()}FAILED at step {event.step} ({event.reason}): {event.message}")
        elif kind == "Finished":
            self._line(f"{self._cr()}{event.reason} at step {event.step} in {event.elapsed_s:.1f}s; "
                       f"final loss {event.final_loss if event.final_loss is not None else 'n/a'}")

    def _cr(self) -> str:
        return "\n" if self.tty else ""

    def _line(self, text: str, end: str = "\n") -> None:
        self.stream.write(text + end)
        self.stream.flush()


def run(args) -> int:
    from .. import load_graph
    from ..data import build_tokenizer, load_corpus
    from ..train.distributed import from_environment
    from ..train.events import Failed, Finished
    from ..train.trainer import Trainer

    if args.steps is None:  # not given: a new run's default, or the resumed run's own
        args.steps = _saved_steps(args.out) if args.resume else TrainConfig.steps
    config = config_from_args(args)
    dist = from_environment()
    try:
        config.check()
        graph = load_graph(args.graph)
        tokenizer = corpus = None
        starts_from_run = bool(config.init_from) and (
            Path(config.init_from) / "tokenizer.json").exists()
        if not args.resume and not starts_from_run:
            corpus = load_corpus(config.corpus, errors=config.corpus_errors)
            tokenizer = build_tokenizer(config.tokenizer, corpus)
    except (ValueError, OSError) as exc:
        print(f"tfstudio train: {exc}", file=sys.stderr)
        return 2
    listeners = [_Said(ProgressPrinter())] if dist.is_main else []
    trainer = Trainer(graph, config, run_dir=args.out, resume=args.resume, listeners=listeners,
                      dist=dist, tokenizer=tokenizer, corpus=corpus, overwrite=args.force)
    end = trainer.run()
    if isinstance(end, Failed) and end.reason == "refused":
        if dist.is_main:
            print(f"tfstudio train: {end.message}", file=sys.stderr)
        return 2
    if isinstance(end, Failed):
        return 1
    if dist.is_main and isinstance(end, Finished) and end.note:
        print(f"tfstudio train: {end.note}", file=sys.stderr)
    elif dist.is_main:
        print(f"run folder: {args.out}", file=sys.stderr)
    return 0


class _Said:
    """Passes events to the progress printer, except what ``run`` says in one line itself (a
    refusal, a resume with nothing to do), and prints the notes a run starts with."""

    def __init__(self, printer):
        self.printer = printer

    def __call__(self, event) -> None:
        from ..train.events import Failed, Finished, Started
        if isinstance(event, Started):
            for note in event.notes:
                print(f"tfstudio train: note: {note}", file=sys.stderr)
        if isinstance(event, Failed) and event.reason == "refused":
            return
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
