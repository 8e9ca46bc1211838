"""Train every variant and seed as an ordinary ``tfstudio train`` run folder.

    DIR/compare.json               what was compared (base, --vary, seeds, training settings)
    DIR/variants/SLUG.json         each variant's graph, the input of its train command
    DIR/runs/SLUG/seed-S/          one run folder per variant and seed

Runs go one after another in this process, or as J local ``tfstudio train`` processes; or the
commands are printed for a scheduler (torchrun, SLURM) and ``compare --report`` collects the
folders afterwards. A run whose folder already holds a completed run is skipped, so running the
same comparison again only trains what is missing.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable

from ..graph import load_graph_file, save_graph
from ..runs import RunFolder, TrainConfig
from ..runs.disk import write_whole
from ..train.events import read_events
from .variants import Variant

PLAN_FILE = "compare.json"
# the settings that make two runs comparable: a second comparison in DIR must keep them
COMPARED_SETTINGS = ("corpus", "tokenizer", "steps", "batch_size", "seq_len", "lr",
                     "warmup_steps", "val_fraction", "eval_every", "eval_batches")


@dataclass
class RunSpec:
    variant: str          # the variant's name ("attention=gqa")
    slug: str
    seed: int
    graph_path: Path
    run_dir: Path
    config: TrainConfig   # this run's settings (its own seed)

    def command(self, executable: list[str] | None = None) -> list[str]:
        """The ``tfstudio train`` command line for this run (flags for non-default settings)."""
        head = executable or ["tfstudio"]
        return [*head, "train", str(self.graph_path), "--out", str(self.run_dir), "--force",
                *config_flags(self.config)]


@dataclass
class Plan:
    base: str
    varies: list[tuple[str, list[str]]]
    seeds: list[int]
    config: TrainConfig
    eval_lengths: list[int]
    variants: list[dict]  # name, slug, settings of each variant, in order; "lr" when its own
    lesson: str = ""      # the built-in lesson this comparison is, so its page keeps its words

    def to_dict(self) -> dict:
        return {"base": self.base, "vary": [[k, v] for k, v in self.varies],
                "seeds": self.seeds, "config": self.config.to_dict(),
                "eval_lengths": self.eval_lengths, "variants": self.variants,
                "lesson": self.lesson}

    @classmethod
    def from_dict(cls, data: dict) -> "Plan":
        return cls(data["base"], [(k, list(v)) for k, v in data["vary"]], list(data["seeds"]),
                   TrainConfig.from_dict(data["config"]), list(data["eval_lengths"]),
                   list(data["variants"]), data.get("lesson", ""))


def config_flags(config: TrainConfig) -> list[str]:
    """``tfstudio train`` flags that reproduce ``config`` (settings left at their default are
    not written)."""
    default = TrainConfig()
    flags: list[str] = []
    for f in fields(TrainConfig):
        value = getattr(config, f.name)
        if value == getattr(default, f.name):
            continue
        flag = "--errors" if f.name == "corpus_errors" else "--" + f.name.replace("_", "-")
        flags += [flag] if isinstance(value, bool) else [flag, str(value)]
    return flags


def refuse_a_file(out: Path) -> None:
    """--out names the folder of runs and pages: a file there is refused in words (mkdir's
    own "[Errno 17] File exists" does not say what to do)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder; choose a folder (new or one "
                         "holding this comparison's runs)")


def write_plan(out: Path, plan: Plan, variants: list[Variant]) -> list[RunSpec]:
    """Write DIR/compare.json and the variant graphs; refuse a DIR that holds a comparison
    with other settings (its runs would not be comparable with the new ones)."""
    refuse_a_file(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / PLAN_FILE
    if path.exists():
        old = read_plan(out)
        changed = [name for name in COMPARED_SETTINGS
                   if getattr(old.config, name) != getattr(plan.config, name)]
        if changed:
            name = changed[0]
            raise ValueError(f"{out} holds a comparison with {name}={getattr(old.config, name)} "
                             f"(now {getattr(plan.config, name)}); use another --out, or delete "
                             f"{out} to start over")
        old_lrs = {v["slug"]: variant_lr(old, v) for v in old.variants}
        moved = [v for v in plan.variants
                 if v["slug"] in old_lrs and old_lrs[v["slug"]] != variant_lr(plan, v)]
        if moved:
            v = moved[0]
            raise ValueError(f"{out} holds {v['name']} trained at lr "
                             f"{old_lrs[v['slug']]:g} (now {variant_lr(plan, v):g}); use "
                             f"another --out, or delete {out} to start over")
        plan.seeds = sorted(set(old.seeds) | set(plan.seeds))
        known = {v["slug"] for v in plan.variants}
        plan.variants = plan.variants + [v for v in old.variants if v["slug"] not in known]
    (out / "variants").mkdir(exist_ok=True)
    for variant in variants:
        save_graph(variant.graph, variant_path(out, variant.slug))
    write_whole(path, json.dumps(plan.to_dict(), indent=1))
    return run_specs(out, plan, only={v.slug for v in variants})


def variant_path(out: Path, slug: str) -> Path:
    """Where a comparison in ``out`` keeps the graph of its variant ``slug``."""
    return Path(out) / "variants" / f"{slug}.json"


def plan_graph(out: Path, slug: str):
    """The graph of the comparison's variant ``slug`` (a lesson that trains more of it)."""
    return load_graph_file(variant_path(out, slug))


def read_plan(out: Path) -> Plan:
    path = Path(out) / PLAN_FILE
    if not path.exists():
        raise ValueError(f"{out} holds no comparison (no {PLAN_FILE}); run tfstudio compare "
                         "with --out there first")
    return Plan.from_dict(json.loads(path.read_text(encoding="utf-8")))


def variant_lr(plan: Plan, variant: dict) -> float:
    """The lr ``variant`` trains at: its own (from an lr sweep) or the plan's shared one."""
    return float(variant.get("lr", plan.config.lr))


def run_specs(out: Path, plan: Plan, only: set[str] | None = None) -> list[RunSpec]:
    """Every (variant, seed) run of ``plan``, variant by variant, each at its own lr."""
    specs = []
    for variant in plan.variants:
        if only is not None and variant["slug"] not in only:
            continue
        for seed in plan.seeds:
            config = TrainConfig.from_dict({**plan.config.to_dict(), "seed": seed,
                                            "lr": variant_lr(plan, variant)})
            specs.append(RunSpec(variant["name"], variant["slug"], seed,
                                 variant_path(out, variant["slug"]),
                                 out / "runs" / variant["slug"] / f"seed-{seed}", config))
    return specs


def is_finished(run_dir: Path, steps: int) -> bool:
    """A completed run of ``steps`` steps with its final checkpoint."""
    folder = RunFolder(run_dir)
    if not folder.exists() or folder.latest() is None or not folder.metrics_path.exists():
        return False
    ends = [e for e in read_events(folder.metrics_path) if e.kind == "Finished"]
    return bool(ends) and ends[-1].reason == "completed" and ends[-1].step >= steps


Progress = Callable[[str], None]


class Stop:
    """Ends a ``train_in_process`` from another thread (the app's Stop): the run training now
    stops between two steps as ``Trainer.stop`` does (its last step logged, its checkpoint
    written, so nothing it wrote is lost) and the runs after it are not started."""

    def __init__(self):
        self._lock = threading.Lock()
        self._trainer = None
        self.requested = False

    def __call__(self) -> None:
        with self._lock:
            self.requested = True
            if self._trainer is not None:
                self._trainer.stop()

    def watch(self, trainer) -> None:
        """``trainer`` is the one training now (a stop already asked reaches it at once)."""
        with self._lock:
            self._trainer = trainer
            if self.requested:
                trainer.stop()


def train_in_process(specs: list[RunSpec], progress: Progress = lambda line: None,
                     listeners_for: Callable[[RunSpec], list] = lambda spec: [],
                     stop: Stop | None = None) -> list[tuple[RunSpec, str]]:
    """Train the unfinished runs one after another; returns (spec, message) for each failure.

    The corpus is read and the tokenizer built once for all runs (they share them)."""
    from ..data import build_tokenizer, load_corpus
    from ..train.trainer import Trainer

    todo = [s for s in specs if not is_finished(s.run_dir, s.config.steps)]
    if not todo:
        return []
    corpus = load_corpus(todo[0].config.corpus, errors=todo[0].config.corpus_errors)
    tokenizer = build_tokenizer(todo[0].config.tokenizer, corpus)
    failures = []
    for i, spec in enumerate(todo, 1):
        if stop is not None and stop.requested:
            progress(f"stopped: {len(todo) - i + 1} run(s) not started")
            break
        progress(f"[{i}/{len(todo)}] training {spec.variant} (seed {spec.seed})")
        trainer = Trainer(load_graph_file(spec.graph_path), spec.config, run_dir=spec.run_dir,
                          tokenizer=tokenizer, corpus=corpus, overwrite=True,
                          listeners=listeners_for(spec))
        if stop is not None:
            stop.watch(trainer)
        end = trainer.run()
        if end.kind == "Finished" and end.reason == "stopped":
            progress(f"      stopped at step {end.step}")
        elif end.kind == "Failed":
            failures.append((spec, end.message))
            progress(f"      {spec.variant} (seed {spec.seed}) failed: {end.message}")
        else:
            progress(f"      done in {end.elapsed_s:.1f}s, final loss {end.final_loss:.4f}")
    return failures


def train_in_processes(specs: list[RunSpec], jobs: int, progress: Progress = lambda line: None
                       ) -> list[tuple[RunSpec, str]]:
    """Train the unfinished runs as ``jobs`` concurrent ``tfstudio train`` processes, each with
    its share of the CPU threads; each appends its output to RUN/train.log.

    The children end with this process: on Linux the kernel sends each a SIGTERM when its
    parent dies (however it dies), and an exception or Ctrl-C here stops them too, so no
    trainer is left running unwatched. A run folder another live process is writing is
    reported as failed and its files left as they are."""
    todo = [s for s in specs if not is_finished(s.run_dir, s.config.steps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // jobs))}
    running: list[tuple[RunSpec, subprocess.Popen, int]] = []  # and where its log began
    failures = []
    try:
        while todo or running:
            while todo and len(running) < jobs:
                spec = todo.pop(0)
                busy = _written_elsewhere(spec.run_dir)
                if busy:
                    failures.append((spec, busy))
                    progress(f"{spec.variant} (seed {spec.seed}) not started: {busy}")
                    continue
                spec.run_dir.mkdir(parents=True, exist_ok=True)
                # appended, never truncated: what an earlier attempt logged stays readable
                log = open(spec.run_dir / "train.log", "a", encoding="utf-8")
                start = log.tell()
                progress(f"started {spec.variant} (seed {spec.seed})")
                proc = subprocess.Popen(spec.command([sys.executable, "-m", "tfstudio"]),
                                        stdout=log, stderr=subprocess.STDOUT, env=env,
                                        preexec_fn=_die_with_parent)
                log.close()
                running.append((spec, proc, start))
            time.sleep(0.2)
            for spec, proc, start in list(running):
                if proc.poll() is None:
                    continue
                running.remove((spec, proc, start))
                if proc.returncode != 0:
                    with open(spec.run_dir / "train.log", encoding="utf-8") as log:
                        log.seek(start)
                        tail = log.read().strip()
                    failures.append((spec, tail.splitlines()[-1] if tail else
                                     f"exit status {proc.returncode}"))
                    progress(f"{spec.variant} (seed {spec.seed}) failed; see "
                             f"{spec.run_dir / 'train.log'}")
                else:
                    progress(f"finished {spec.variant} (seed {spec.seed})")
    finally:
        _stop(proc for _, proc, _ in running)
    return failures


def _written_elsewhere(run_dir: Path) -> str:
    """Why ``run_dir`` must not be touched (another live run holds its lock), or ""."""
    from ..runs.lock import RunLock, RunLocked
    if not run_dir.exists():
        return ""
    try:
        with RunLock(run_dir):
            return ""
    except RunLocked as exc:
        return str(exc)


def _die_with_parent() -> None:
    """In the child before it runs: ask Linux to send it SIGTERM when its parent dies (the
    trainer then saves its step and stops). Elsewhere nothing: ``_stop`` covers the rest."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop(procs, grace_s: float = 10.0) -> None:
    """SIGTERM every child still running, then wait for it (SIGKILL after ``grace_s``)."""
    procs = [p for p in procs if p.poll() is None]
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def print_commands(specs: list[RunSpec], stream=None) -> int:
    """Write the unfinished runs' commands, one a line; returns how many."""
    stream = stream or sys.stdout
    todo = [s for s in specs if not is_finished(s.run_dir, s.config.steps)]
    for spec in todo:
        stream.write(shlex.join(spec.command()) + "\n")
    return len(todo)
