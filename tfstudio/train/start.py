"""How a run starts: every refusal, decided before anything is built.

:func:`plan_start` reads the request (graph, settings, run folder, resume or not) and either
raises :class:`RunRefused` with one line saying what is wrong and what to do, or returns a
:class:`Start` the trainer builds from. Nothing here allocates a model: the memory pre-flight
works from the graph alone (tfstudio.runs.preflight), so a 175B preset is refused at once.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from ..graph import Graph
from ..runs.checkpoint import CheckpointError, read_state, step_of
from ..runs.config import KEPT_ON_RESUME, TrainConfig
from ..runs.folder import RunError, RunFolder
from ..runs.lock import RunLock, RunLocked
from ..runs.preflight import check_training_memory
from .device import pick_device, pick_precision
from .distributed import DistInfo
from .optim import lr_at
from .pipeline import fit_graph_to_tokenizer


FSDP_RESUME = ("resuming a run trained with --parallel fsdp is not supported: its checkpoints "
               "hold whole weights but no optimizer state; start a new run from its weights "
               "(--init-from), or train with ddp")


class RunRefused(ValueError):
    """A run that cannot start as asked; the message says why and what to do."""


@dataclass
class Start:
    """What the refusals settled: how the trainer builds this run."""
    config: TrainConfig
    graph: Graph
    tokenizer: Any                    # None: built from the corpus
    device: torch.device
    precision: str
    checkpoint: Path | None = None    # resume from here; None: a new run
    state: dict = field(default_factory=dict)  # the checkpoint's state.json
    replace_old: bool = False         # a new run replacing an earlier one (--force)
    config_changed: bool = False      # a resumed run's --steps changed: rewrite config.json
    finished_note: str = ""           # set: the run is already done; say this and stop
    notes: list[str] = field(default_factory=list)  # said when the run starts


def plan_start(graph: Graph, config: TrainConfig, *, folder: RunFolder | None, resume: bool,
               overwrite: bool, dist: DistInfo, tokenizer, lock: RunLock | None) -> Start:
    """Every check a run must pass, in order; raises RunRefused with the first failure."""
    try:
        config.check()
        notes = []
        if lock is not None:
            lock.acquire()  # before the folder is read: a second writer stops here
            # the writer before this one has ended: mend what it left half done
            notes += folder.recover_replaced()
            folder.remove_abandoned_partials()
        device = pick_device(config.device)
        precision = pick_precision(config.precision, device)
        if resume:
            start = _resumed(config, folder, dist, device, precision)
        else:
            start = _new(graph, config, folder, overwrite, tokenizer, device, precision)
        if lock is not None and lock.previous_holder is not None:
            notes.insert(0, _died_note(lock.previous_holder, start))
        start.notes = notes + start.notes
        _check_parallel(start.config, dist, start.checkpoint is not None)
        if not start.finished_note and not start.config.no_memory_check:
            _check_memory(start, dist)
        return start
    except RunRefused:
        raise
    except (RunLocked, RunError, CheckpointError, ValueError, OSError) as exc:
        # user errors (bad settings, devices, files, memory): said in their own words
        raise RunRefused(str(exc)) from None


def _died_note(pid: int, start: Start) -> str:
    """What taking over a dead writer's lock means for this run."""
    if start.checkpoint is not None:
        step = step_of(start.checkpoint)
        what = (f"resuming from its checkpoint of step {step} (steps it trained after that "
                "are trained again)")
    else:
        what = "this run starts from step 0"
    return f"the previous writer of this run (process {pid}) ended without finishing; {what}"


def _new(graph, config, folder, overwrite, tokenizer, device, precision) -> Start:
    replace_old = folder is not None and folder.has_checkpoints()
    if replace_old and not overwrite:
        raise RunRefused(f"{folder.path} already holds a trained run; continue it with "
                         "--resume, choose another --out, or replace it with --force")
    if config.init_from:
        source = RunFolder(config.init_from)
        if not source.exists():
            raise RunRefused(f"--init-from {source.path}: not a tfstudio run folder (no "
                             "config.json/graph.json)")
        choice = source.checkpoint()
        if choice.path is None:
            raise RunRefused(f"--init-from {source.path}: no checkpoint there to start from"
                             + (f" ({choice.skipped[0]})" if choice.skipped else ""))
        if tokenizer is None and source.tokenizer_path.exists():
            tokenizer = source.tokenizer()  # its weights keep meaning the same tokens
            # and config.json names the tokenizer used, not the flag's default
            config = TrainConfig.from_dict({**config.to_dict(),
                                            "tokenizer": source.config().tokenizer})
    config, clamped = clamp_warmup(config)
    return Start(config, graph, tokenizer, device, precision, replace_old=replace_old,
                 notes=[clamped] if clamped else [])


def clamp_warmup(config: TrainConfig) -> tuple[TrainConfig, str]:
    """A warm-up longer than the run never reaches the learning rate asked for (30 steps
    with warm-up 50 peaked at 0.6 of it): a new run's warm-up is cut to its steps, here, for
    every caller (the CLI, the app's Train, Compare's variants), and config.json keeps the cut
    value, so a resume continues the same schedule. Returns (config, the note saying so)."""
    if config.warmup_steps <= config.steps:
        return config, ""
    note = (f"warm-up cut from {config.warmup_steps:,} to {config.steps:,} steps (the run's "
            "length), so the learning rate reaches the one asked for")
    return replace(config, warmup_steps=config.steps), note


def _resumed(requested: TrainConfig, folder, dist, device, precision) -> Start:
    if folder is None:
        raise RunRefused("cannot resume without a run folder (--out)")
    choice = folder.checkpoint()
    if choice.path is None:
        if choice.skipped:
            raise RunRefused(folder.no_checkpoint_message(choice))
        raise RunRefused(f"cannot resume: {folder.path} has no checkpoint; start a new run "
                         "instead (drop --resume)")
    folder.check_setup(choice.path)
    state = read_state(choice.path)
    saved = folder.config()
    step = step_of(choice.path)
    _check_resumable(state, saved, choice.path, folder)
    config = _resumed_config(saved, requested)
    if config.steps < step:
        raise RunRefused(f"{folder.path} is at step {step}, past --steps {config.steps}; "
                         f"resume with --steps N (more than {step}) to train further")
    start = Start(config, folder.graph(), folder.tokenizer(), device, precision,
                  checkpoint=choice.path, state=state)
    if config.steps == step:
        next_lr = lr_at(step, lr=config.lr, warmup=config.warmup_steps,
                        total=config.lr_decay_steps or config.steps,
                        min_ratio=config.min_lr_ratio)
        start.finished_note = (f"{folder.path} already finished at step {step}; to train "
                               f"further, resume with --steps N (more than {step}): the "
                               f"learning rate continues at the end of its schedule, "
                               f"{next_lr:.2e}")
    elif config.steps != saved.steps:
        # the cosine keeps the horizon it was started with; later steps stay at its end
        config.lr_decay_steps = saved.lr_decay_steps or saved.steps
        start.config_changed = True
    return start


def _check_resumable(state: dict, saved: TrainConfig, checkpoint: Path, folder) -> None:
    if "optimizer" not in state:
        if "imported_from" in state:
            raise RunRefused(f"{folder.path} was imported, not trained here, so it has no "
                             "optimizer state to resume; train from its weights with "
                             f"--init-from {folder.path}")
        if saved.parallel == "fsdp":
            raise RunRefused(FSDP_RESUME)
        raise RunRefused(f"{checkpoint} holds no optimizer state, so the run cannot continue "
                         f"exactly; start a new run from its weights (--init-from {folder.path})")
    missing = [key for key in ("data", "rng") if not isinstance(state.get(key), dict)]
    if missing:
        raise RunRefused(f"{checkpoint / 'state.json'} lacks the {' and '.join(missing)} "
                         "state a resume needs; start a new run from its weights "
                         f"(--init-from {folder.path})")


def _resumed_config(saved: TrainConfig, requested: TrainConfig) -> TrainConfig:
    """The requested settings (steps, evaluation, device...) with the saved data and
    learning-rate settings."""
    merged = requested.to_dict()
    merged.update({name: getattr(saved, name) for name in KEPT_ON_RESUME})
    return TrainConfig.from_dict(merged)


def _check_parallel(config: TrainConfig, dist: DistInfo, resuming: bool) -> None:
    if dist.enabled and config.parallel == "fsdp":
        if config.probe_every:
            raise RunRefused("probes read the whole model on one process, which a sharded "
                             "(--parallel fsdp) model does not have; set --probe-every 0 or "
                             "train with ddp")
        if resuming:
            raise RunRefused(FSDP_RESUME)


def _check_memory(start: Start, dist: DistInfo) -> None:
    """The pre-flight, on the graph as it will be built (vocabulary set to the tokenizer's)."""
    graph = (fit_graph_to_tokenizer(start.graph, start.tokenizer)
             if start.tokenizer is not None else start.graph)
    cfg = start.config
    device = start.device
    if dist.enabled and device.type == "cuda":  # this rank's own GPU, not everyone's GPU 0
        device = torch.device("cuda", dist.local_rank)
    check_training_memory(graph, batch=cfg.batch_size, seq_len=cfg.seq_len,
                          grad_accum=cfg.grad_accum, precision=start.precision,
                          device=str(device), world_size=dist.world_size,
                          sharded=dist.enabled and cfg.parallel == "fsdp")
