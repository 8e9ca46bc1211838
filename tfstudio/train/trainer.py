"""The training loop: one engine for the CLI, the GUI and torchrun.

``Trainer(graph, config, run_dir=...).run()`` trains until ``config.steps`` or until ``stop()`` is
called, emitting events (events.py) to its listeners and to ``metrics.jsonl``. ``pause()``,
``resume()`` and ``stop()`` are thread-safe and take effect between steps, so another thread can
steer a run (the app's training process obeys its commands that way, see child.py). A stop is
also seen between a step's micro-batches and between evaluation batches: a step it interrupts
is given up (its data position and random state put back), so even a step of a billion
micro-batches answers a stop at once and the checkpoint holds the last whole step.
``abandon()`` (a second Ctrl+C) gives up the step in progress without waiting for its
micro-batch to end.

A run goes: refusals (start.py: settings, the run folder's lock, resume, memory; nothing is
built yet), building (pipeline, model, optimizer, restored state), the loop, the last
checkpoint. Faults end the run with a ``Failed`` event that says what to do: a refusal, a
NaN/inf loss (and which checkpoint is kept), out-of-memory (what to reduce), a write the disk
refused (which checkpoint is intact), anything else. A new run replacing an earlier one
(``overwrite``) sets it aside once built and deletes it at its own first checkpoint; a run that
ends before that puts it back.
"""
from __future__ import annotations

import contextlib
import copy
import math
import shutil
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import torch
from torch.nn.utils import clip_grads_with_norm_, get_total_norm

from ..graph import Graph
from ..runs.checkpoint import load_checkpoint, rng_state, save_checkpoint, set_rng_state
from ..runs.disk import disk_line, disk_refusal
from ..runs.config import TrainConfig
from ..runs.folder import RunFolder
from .device import autocast, peak_flops
from .distributed import (DistInfo, all_ranks_agree, as_local, full_weights, init as dist_init,
                          local_rows, mean_across_ranks, shutdown, wrap_for_training)
from .events import (CheckpointSaved, EvalMetrics, Event, Failed, Finished, MetricsLog, Probe,
                     RouterMetrics, Started, StepMetrics)
from .init_from import load_weights_from
from .objectives import loss_and_logits, token_accuracy
from .optim import lr_at, make_optimizer
from .start import RunRefused, Start, plan_start

Listener = Callable[[Event], None]
_CPU_OOM = "DefaultCPUAllocator: can't allocate memory"


class NonFiniteLoss(RuntimeError):
    pass


class DiskRefused(RuntimeError):
    """A write to the run folder the disk refused (full, quota, file-size limit)."""


class StepAbandoned(Exception):
    """A stop that came in the middle of a step or an evaluation: that work is given up."""


@dataclass
class RunPosition:
    """Where the run is (what a checkpoint keeps besides weights, optimizer and data)."""
    step: int = 0
    tokens_seen: int = 0
    saved_step: int | None = None   # the newest checkpoint of this run on disk (None: none)
    grad_norm: float = 0.0          # of the last step, before clipping
    layer_norms: dict[str, float] = field(default_factory=dict)  # of the last logged step
    aux_loss: float = 0.0           # mixture-of-experts balance loss of the last step


@dataclass
class Session:
    """What a run trains with, built in one place (``Trainer._build``) once every refusal has
    passed: a trainer has none before, so no part of it is ever half made."""
    device: torch.device
    precision: str
    pipeline: Any                     # train.pipeline.Pipeline: data, tokenizer, objective
    model: torch.nn.Module
    train_model: torch.nn.Module      # the model as trained: DDP/FSDP-wrapped, compiled
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    metrics_log: MetricsLog | None    # set: this process writes the run folder (rank 0)
    layer_params: dict[str, list[torch.nn.Parameter]]  # per layer, for its gradient norm
    flops_per_token: float
    peak_flops: float | None          # of one device (None: unknown, no MFU)

    @property
    def writes(self) -> bool:
        return self.metrics_log is not None

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


class Trainer:
    def __init__(self, graph: Graph, config: TrainConfig, *, run_dir: str | Path | None = None,
                 resume: bool = False, listeners: Iterable[Listener] = (),
                 dist: DistInfo | None = None, tokenizer=None, corpus=None,
                 overwrite: bool = False):
        # the request, as given
        self.graph = graph
        self.config = config
        self.run_folder = RunFolder(run_dir) if run_dir is not None else None
        self.resume_requested = resume
        self.listeners = list(listeners)
        self.dist = dist or DistInfo()
        self.tokenizer = tokenizer
        self.corpus = corpus          # already loaded by the caller (else cfg.corpus is loaded)
        self.overwrite = overwrite    # a new run may replace an earlier run in run_dir
        self.session: Session | None = None  # built by _build, once every refusal passed
        self.state = RunPosition()
        self.notes: list[str] = []    # said when the run starts (Started.notes)
        self._replaced: Path | None = None  # an earlier run set aside until our first save
        self._lock = self.run_folder.lock() if self.run_folder and self.dist.is_main else None
        self._default_probe_text: str | None = None  # cached by tfstudio.probes
        self._pause = threading.Event()
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._abandonable = False       # in a forward/backward pass that a stop may cut short
        self._thread: int | None = None  # the thread that runs the loop

    # what others read of the session (the probes, the app's training process, tests)
    model = property(lambda self: self.session.model)
    pipeline = property(lambda self: self.session.pipeline)
    optimizer = property(lambda self: self.session.optimizer)
    device = property(lambda self: self.session.device)
    writes = property(lambda self: self.session is not None and self.session.writes)

    @property
    def step(self) -> int:
        return self.state.step

    @property
    def tokens_seen(self) -> int:
        return self.state.tokens_seen

    # ----------------------------------------------------------------- control
    def pause(self) -> None:
        self._pause.set()

    def resume(self) -> None:
        with self._wake:
            self._pause.clear()
            self._wake.notify_all()

    def stop(self) -> None:
        with self._wake:
            self._stop.set()
            self._wake.notify_all()

    def abandon(self) -> None:
        """Stop, and give up the step in progress now rather than at its next micro-batch
        (a second Ctrl+C): called by a signal handler, which runs between two operations of
        the thread that trains. Only a forward or backward pass is cut short, never an
        optimizer step or a save, so the run still saves its last whole step."""
        self.stop()
        if self._abandonable and threading.get_ident() == self._thread:
            raise StepAbandoned()

    @contextlib.contextmanager
    def _may_abandon(self):
        self._abandonable = True
        try:
            yield
        finally:
            self._abandonable = False

    def _wait_while_paused(self) -> None:
        with self._wake:
            while self._pause.is_set() and not self._stop.is_set():
                self._wake.wait(timeout=0.2)

    def emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)

    # ----------------------------------------------------------------- building
    def _build(self, start: Start) -> Session:
        """Everything the loop needs, from a start that passed every refusal."""
        from ..compiler import compile_graph
        from .pipeline import build_pipeline, fit_graph_to_tokenizer

        cfg = self.config = start.config
        torch.manual_seed(cfg.seed)
        device = dist_init(self.dist, start.device)
        self.notes += start.notes
        pipeline = build_pipeline(start.graph, cfg, tokenizer=start.tokenizer, corpus=self.corpus)
        self.tokenizer = pipeline.tokenizer
        # the model (vocabulary fitted to the tokenizer), its training wrapper and optimizer
        self.graph = fit_graph_to_tokenizer(start.graph, self.tokenizer)
        model = compile_graph(self.graph)
        if cfg.init_from and start.checkpoint is None:
            self.notes += load_weights_from(RunFolder(cfg.init_from), model,
                                            self.tokenizer.vocab_size)
        model = model.to(device)
        train_model = wrap_for_training(model, self.dist, cfg.parallel, device)
        if cfg.compile:
            train_model = torch.compile(train_model)
        session = Session(
            device=device, precision=start.precision, pipeline=pipeline, model=model,
            train_model=train_model,
            optimizer=make_optimizer(model, cfg.lr, cfg.weight_decay, (cfg.beta1, cfg.beta2),
                                     device.type),
            scaler=torch.amp.GradScaler(device.type, enabled=start.precision == "fp16"),
            metrics_log=self._open_run_folder(start),
            layer_params=_layer_parameter_groups(model),
            flops_per_token=_training_flops_per_token(self.graph, cfg.seq_len),
            peak_flops=peak_flops(device))
        if start.checkpoint is not None:
            self._restore(start.checkpoint, session)
        return session

    def _open_run_folder(self, start: Start) -> MetricsLog | None:
        """Rank 0 writes: a new run's setup files, or a resumed run's changed config (its
        metrics log returned); other ranks write nothing (None). A run replacing an earlier one
        sets it aside only now, once every check has passed and the run is built."""
        folder = self.run_folder
        if not (self.dist.is_main and folder is not None):
            return None
        if start.replace_old:
            self._replaced = folder.set_aside()
        log = MetricsLog(folder.metrics_path)
        if start.checkpoint is None:
            folder.write_setup(self.graph, self.config, self.tokenizer)
            folder.metrics_path.unlink(missing_ok=True)
        elif start.config_changed:
            folder.write_config(self.config)  # the new --steps (and the kept lr horizon)
        return log

    def _restore(self, checkpoint: Path, session: Session) -> None:
        saved = load_checkpoint(checkpoint, session.model, session.optimizer, session.device)
        self.state.step = self.state.saved_step = saved["step"]
        self.state.tokens_seen = saved.get("tokens_seen", 0)
        session.pipeline.load_state_dict(saved["data"])
        try:
            set_rng_state(saved["rng"])
            if saved.get("scaler"):
                session.scaler.load_state_dict(saved["scaler"])
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise RunRefused(f"{checkpoint / 'state.json'}: its random-number or grad-scaler "
                             f"state does not restore ({type(exc).__name__}: {exc}); start a new "
                             f"run from its weights (--init-from {self.run_folder.path})"
                             ) from None
        if session.metrics_log:
            session.metrics_log.truncate_after(self.state.step)

    # ----------------------------------------------------------------- the run
    def run(self) -> Event:
        """Train; returns the final event (Finished or Failed). Never raises for training faults."""
        clock = time.perf_counter()
        end: Event | None = None
        self._thread = threading.get_ident()
        try:
            start = plan_start(self.graph, self.config, folder=self.run_folder,
                               resume=self.resume_requested, overwrite=self.overwrite,
                               dist=self.dist, tokenizer=self.tokenizer, lock=self._lock)
            if start.finished_note:
                self.config, self.state.step = start.config, start.config.steps
                end = Finished(self.step, "already finished", note=start.finished_note)
            else:
                end = self._train(start, clock)
        except NonFiniteLoss as exc:
            end = Failed(self.step, "nan", str(exc))
        except DiskRefused as exc:
            end = Failed(self.step, "disk", str(exc))
        except RunRefused as exc:
            end = Failed(self.step, "refused", str(exc))
        except (torch.OutOfMemoryError, MemoryError):
            end = Failed(self.step, "oom", self._oom_message())
        except Exception as exc:  # noqa: BLE001 - reported to the user, never swallowed silently
            if disk_refusal(exc):
                end = Failed(self.step, "disk", self._disk_message(
                    exc, f"at step {self.step}", getattr(exc, "filename", None)))
            elif _CPU_OOM in str(exc):  # torch's CPU allocator says it as a RuntimeError
                end = Failed(self.step, "oom", self._oom_message())
            else:
                end = Failed(self.step, "error", f"{type(exc).__name__}: {exc}",
                             details=traceback.format_exc())
        finally:
            # after a clean end every rank waits for the others (rank 0 may still be writing the
            # checkpoint); tearing gloo down under a busy peer aborts the process
            shutdown(self.dist, wait_for_peers=isinstance(end, Finished))
        try:
            self._emit_end(end)  # still under the lock: metrics.jsonl gets its last line
        finally:
            if self._replaced is not None:  # ended before its first checkpoint: undo
                self.run_folder.put_back(self._replaced)
                self._replaced = None
            if self._lock is not None:
                self._lock.release()
        return end

    def _emit_end(self, end: Event) -> None:
        """The last event; a metrics.jsonl that cannot take it (a full disk) never hides what
        the event reports."""
        for listener in self.listeners:
            try:
                listener(end)
            except OSError:
                if self.session is None or listener is not self.session.metrics_log:
                    raise

    def _train(self, start: Start, clock: float) -> Finished:
        session = self.session = self._build(start)
        if session.metrics_log:
            self.listeners.append(session.metrics_log)
        self.emit(Started(self.step, self.config.steps, session.n_params, str(session.device),
                          session.precision, session.pipeline.objective,
                          self.graph.meta.get("name", ""),
                          (self.run_folder.notes if self.run_folder else []) + self.notes))
        last_loss = self._loop(clock)
        reason = "stopped" if self._stop.is_set() else "completed"
        self._checkpoint()
        return Finished(self.step, reason, last_loss, time.perf_counter() - clock)

    def _logs(self, step: int) -> bool:
        """Whether ``step`` (counted from 1) is reported: every log_every-th and the last."""
        return step % self.config.log_every == 0 or step == self.config.steps

    def _lr(self, step: int) -> float:
        cfg = self.config
        return lr_at(step, lr=cfg.lr, warmup=cfg.warmup_steps,
                     total=cfg.lr_decay_steps or cfg.steps, min_ratio=cfg.min_lr_ratio)

    def _loop(self, clock: float) -> float | None:
        cfg, state = self.config, self.state
        last_loss = None
        if cfg.probe_every and state.step == 0:
            self._probe()  # the untrained model: where every pattern starts from
        while state.step < cfg.steps:
            self._wait_while_paused()
            if self._stop.is_set():
                break
            t0 = time.perf_counter()
            lr = self._lr(state.step)
            for group in self.session.optimizer.param_groups:
                group["lr"] = lr
            position = self._position()
            try:
                loss, tokens = self._train_step()
            except StepAbandoned:  # stopped mid-step: the checkpoint holds the step before
                self._put_back(position)
                break
            state.step += 1
            state.tokens_seen += tokens
            last_loss = loss
            dt = time.perf_counter() - t0
            if self._logs(state.step) or self._stop.is_set():  # a stop logs its last step
                self._emit_step(loss, lr, tokens, dt, clock)
            if cfg.eval_every and (state.step % cfg.eval_every == 0 or state.step == cfg.steps):
                self._evaluate()
            if cfg.probe_every and state.step % cfg.probe_every == 0:
                self._probe()
            if cfg.checkpoint_every and state.step % cfg.checkpoint_every == 0 \
                    and state.step < cfg.steps:
                self._checkpoint()
        return last_loss

    def _position(self) -> tuple[dict, torch.Tensor]:
        """The data position and random state before a step, to put back if it is given up."""
        return copy.deepcopy(self.session.pipeline.state_dict()), torch.get_rng_state()

    def _put_back(self, position: tuple[dict, torch.Tensor]) -> None:
        data, rng = position
        self._abandonable = False
        self.session.pipeline.load_state_dict(data)
        torch.set_rng_state(rng)
        self.session.optimizer.zero_grad(set_to_none=True)

    def _train_step(self) -> tuple[float, int]:
        cfg, s = self.config, self.session
        # train() walks every module (half a millisecond a step on tiny-gpt, 3% of it); the
        # evaluation and the looks inside put train mode back, so this only mends a model
        # something else left in eval mode
        if not s.model.training:
            s.train_model.train()
        s.optimizer.zero_grad(set_to_none=True)
        total_loss, tokens, aux_total = 0.0, 0, 0.0
        for micro in range(cfg.grad_accum):
            # a stop between micro-batches gives the step up (ranks would have to agree)
            if micro and self._stop.is_set() and not self.dist.enabled:
                raise StepAbandoned()
            batch = s.pipeline.train_batch(cfg.batch_size)
            if self.dist.enabled:
                batch = batch.rows(*local_rows(cfg.batch_size, self.dist))
            batch = batch.to(s.device)
            sync = micro == cfg.grad_accum - 1 or not self.dist.enabled
            # DDP can skip the gradient all-reduce on all but the last micro-batch
            skip_sync = not sync and hasattr(s.train_model, "no_sync")
            ctx = s.train_model.no_sync() if skip_sync else contextlib.nullcontext()
            with ctx, self._may_abandon():
                with autocast(s.device, s.precision):
                    loss, _ = loss_and_logits(s.train_model, batch)
                    aux = s.model.aux_loss()
                    objective = (loss + aux) / cfg.grad_accum
                # every rank stops together, or the others would wait forever in all-reduce
                if not all_ranks_agree(bool(torch.isfinite(loss)), self.dist, s.device):
                    raise NonFiniteLoss(self._diverged(f"the loss became {float(loss.detach())}"))
                s.scaler.scale(objective).backward()
            total_loss += float(loss.detach()) / cfg.grad_accum
            aux_total += float(aux.detach()) / cfg.grad_accum
            tokens += batch.tokens
        self.state.aux_loss = aux_total
        s.scaler.unscale_(s.optimizer)
        self._measure_and_clip(log=self._logs(self.step + 1) or self._stop.is_set())
        # fp16's scaler skips steps with inf gradients by design; otherwise they would write NaN
        # into the weights (and into the next "good" checkpoint)
        norm = self.state.grad_norm
        if not s.scaler.is_enabled() and not math.isfinite(norm):
            raise NonFiniteLoss(self._diverged(f"the gradient norm became {norm}"))
        s.scaler.step(s.optimizer)
        s.scaler.update()
        return mean_across_ranks(total_loss, self.dist, s.device), tokens * self.dist.world_size

    def _measure_and_clip(self, log: bool) -> None:
        """Total gradient norm (clipped to ``grad_clip``), and on logged steps each layer's norm.

        The per-layer norms are combined into the total, so logging costs one norm per layer."""
        clip, s = self.config.grad_clip, self.session
        if not log:
            params = s.model.parameters()
            norm = (torch.nn.utils.clip_grad_norm_(params, clip) if clip > 0
                    else get_total_norm([p.grad for p in params if p.grad is not None]))
            self.state.grad_norm = float(as_local(norm))
            return
        layer = {name: get_total_norm(grads) if grads else torch.zeros((), device=s.device)
                 for name, grads in ((name, [p.grad for p in params if p.grad is not None])
                                     for name, params in s.layer_params.items())}
        total = get_total_norm(list(layer.values()))
        if clip > 0:
            clip_grads_with_norm_(s.model.parameters(), clip, total)
        self.state.layer_norms = {name: float(as_local(n)) for name, n in layer.items()}
        self.state.grad_norm = float(as_local(total))

    def _emit_step(self, loss: float, lr: float, tokens: int, dt: float, clock: float) -> None:
        tps = tokens / dt if dt > 0 else 0.0
        # tokens/s counts every rank; the peak is one device's
        s = self.session
        mfu = (s.flops_per_token * tps / (s.peak_flops * self.dist.world_size)
               if s.peak_flops else None)
        state = self.state
        self.emit(StepMetrics(state.step, loss, lr, state.grad_norm, dict(state.layer_norms), tps,
                              time.perf_counter() - clock, state.tokens_seen, mfu))
        loads = _router_loads(s.model)
        if loads:
            self.emit(RouterMetrics(state.step, loads, state.aux_loss))

    @torch.no_grad()
    def _evaluate(self) -> None:
        s = self.session
        s.model.eval()
        losses, correct, counted = [], 0, 0
        try:
            for batch in s.pipeline.val_batches(self.config.eval_batches, self.config.batch_size):
                if self._stop.is_set() and not self.dist.enabled:
                    raise StepAbandoned()  # a stop: no loss of part of the batches is shown
                batch = batch.to(s.device)
                with autocast(s.device, s.precision), self._may_abandon():
                    loss, logits = loss_and_logits(s.model, batch)
                losses.append(float(loss))
                c, n = token_accuracy(logits, batch.labels)
                correct, counted = correct + c, counted + n
        except StepAbandoned:
            losses, self._abandonable = [], False
        s.model.train()
        if not losses:
            return
        val = sum(losses) / len(losses)
        acc = correct / counted if (counted and s.pipeline.reports_accuracy) else None
        self.emit(EvalMetrics(self.step, val, math.exp(min(val, 50.0)), acc))

    def _probe(self) -> None:
        """A look inside on the probe text, between steps (tfstudio.probes restores the model's
        mode; kept in RUN_DIR/probes/). ``config.probe_text`` and ``probe_every`` may be changed
        while the run goes on."""
        if not self.dist.is_main:
            return
        from ..probes import snapshot_for_run
        self.emit(Probe(self.step, snapshot_for_run(self)))

    def _checkpoint(self) -> None:
        if self.run_folder is None or self.step == 0:
            return
        if self.state.saved_step == self.step:  # resumed and stopped at once: nothing new
            return
        s = self.session
        gathered = full_weights(s.model, self.dist, self.config.parallel)  # all ranks
        if not s.writes:
            return
        state = {"tokens_seen": self.tokens_seen, "data": s.pipeline.state_dict(),
                 "rng": rng_state(), "config": self.config.to_dict(),
                 "scaler": s.scaler.state_dict() if s.scaler.is_enabled() else None}
        try:
            path = save_checkpoint(self.run_folder.checkpoints, self.step, s.model,
                                   s.optimizer if gathered is None else None, state,
                                   self.config.keep_checkpoints, weights=gathered,
                                   setup={"graph.json": self.run_folder.graph_path,
                                          "tokenizer.json": self.run_folder.tokenizer_path})
        except Exception as exc:
            if disk_refusal(exc) is None:
                raise
            raise DiskRefused(self._disk_message(exc, f"while saving step {self.step}")
                              ) from None
        self.state.saved_step = self.step
        if self._replaced is not None:  # the new run is on disk: the old one may go now
            shutil.rmtree(self._replaced, ignore_errors=True)
            self._replaced = None
        self.emit(CheckpointSaved(self.step, str(path)))

    def _diverged(self, what: str) -> str:
        saved = self.state.saved_step
        kept = (f"the checkpoint of step {saved} is kept" if saved is not None
                else "no checkpoint was written yet (--checkpoint-every N keeps one every N "
                     "steps)")
        return (f"{what} at step {self.step + 1}. Training stopped; {kept}. Lower the learning "
                f"rate (now {self.config.lr:g}), keep gradient clipping on, or use fp32")

    def _disk_message(self, exc: BaseException, when: str, file: str | None = None) -> str:
        """One line for a write the disk refused: what, where, what is kept, what to do."""
        where = file or (self.run_folder.path if self.run_folder else "the run folder")
        saved = self.state.saved_step
        if saved is None:
            return disk_line(exc, where, when, "no checkpoint of this run was written yet",
                             "train again")
        return disk_line(exc, where, when, f"the previous checkpoint (step {saved}) is intact",
                         "--resume")

    def _oom_message(self) -> str:
        cfg = self.config
        where = self.session.device if self.session else self.config.device
        return (f"out of memory on {where} at step {self.step + 1}. Reduce the batch size "
                f"(now {cfg.batch_size}; keep the effective batch with grad_accum), the sequence "
                f"length (now {cfg.seq_len}) or the model's width/depth; on a GPU, bf16 halves "
                "activation memory")


def _layer_parameter_groups(model) -> dict[str, list[torch.nn.Parameter]]:
    """Parameters grouped per layer ("embed", "layers.0", "layers.1", ..., "head") so the
    gradient norm of each layer can be plotted (how pre- and post-norm differ)."""
    groups: dict[str, list[torch.nn.Parameter]] = {}
    seen: set[int] = set()
    for key, module in model.blocks():
        name = ".".join(str(k) for k in key[:2]) if len(key) > 2 else ".".join(map(str, key))
        for p in module.parameters(recurse=True):
            if id(p) not in seen:
                seen.add(id(p))
                groups.setdefault(name, []).append(p)
    rest = [p for p in model.parameters() if id(p) not in seen]
    if rest:  # parameters outside any block (none today): still part of the total norm
        groups["other"] = rest
    return groups


def _router_loads(model) -> dict[str, list[float]]:
    loads = {}
    for key, module in model.blocks():
        load = getattr(module, "last_expert_load", None)
        if load is not None:
            loads[".".join(map(str, key))] = [float(x) for x in load]
    return loads


def _training_flops_per_token(graph: Graph, seq_len: int) -> float:
    """Forward + backward is about 3x the forward FLOPs."""
    try:
        from ..graph.cost import estimate_cost
        return 3.0 * estimate_cost(graph, context_length=seq_len).flops_per_token
    except Exception:  # noqa: BLE001 - MFU is a nicety; never fail a run for it
        return 0.0
