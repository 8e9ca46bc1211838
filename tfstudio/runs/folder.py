"""A run folder: everything needed to reopen, resume, sample from or export a training run.

    RUN_DIR/graph.json        the architecture as trained (vocab set to the tokenizer's)
    RUN_DIR/config.json       the TrainConfig
    RUN_DIR/tokenizer.json    the tokenizer, so the run decodes exactly as it trained
    RUN_DIR/metrics.jsonl     one event per line (see tfstudio.train.events)
    RUN_DIR/checkpoints/      see checkpoint.py
    RUN_DIR/probes/           looks inside the model during training (tfstudio.probes)
    RUN_DIR/.lock             held by the one process writing the run (see lock.py)

Everything that reads a checkpoint asks :meth:`RunFolder.checkpoint` (or ``latest``), which
returns the newest one that verifies; each newer one it passed over is added to ``notes`` as
one line, for the caller to print.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..graph import Graph, load_graph_file, save_graph
from .checkpoint import (CheckpointChoice, CheckpointError, find_checkpoint, held_from_rotation,
                         load_checkpoint, read_state, remove_abandoned_partials, setup_problem,
                         step_of)
from .config import KEPT_ON_RESUME, TrainConfig


class RunError(RuntimeError):
    pass


class RunFolder:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.notes: list[str] = []  # damaged checkpoints passed over, one line each

    graph_path = property(lambda self: self.path / "graph.json")
    config_path = property(lambda self: self.path / "config.json")
    tokenizer_path = property(lambda self: self.path / "tokenizer.json")
    metrics_path = property(lambda self: self.path / "metrics.jsonl")
    checkpoints = property(lambda self: self.path / "checkpoints")

    def exists(self) -> bool:
        return self.config_path.exists() and self.graph_path.exists()

    def write_setup(self, graph: Graph, config: TrainConfig, tokenizer) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        save_graph(graph, self.graph_path)
        self.write_config(config)
        tokenizer.save(self.tokenizer_path)

    def write_config(self, config: TrainConfig) -> None:
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(config.to_dict(), indent=2), encoding="utf-8")
        tmp.replace(self.config_path)

    def clear(self) -> None:
        """Forget an earlier run here (its checkpoints, metrics and probes)."""
        for path in (self.checkpoints, self.path / "probes"):
            shutil.rmtree(path, ignore_errors=True)
        self.metrics_path.unlink(missing_ok=True)

    # ----------------------------------------------------------------- replacing a run
    # --force replaces an earlier run in two moves: its files are set aside (renamed into
    # .replaced.PID/) once the new run has passed every check and is built, and deleted only
    # when the new run has saved its first checkpoint; a new run that ends before that puts
    # them back. A process killed in between is mended at the next start (recover_replaced).
    RUN_FILES = ("checkpoints", "probes", "metrics.jsonl", "graph.json", "config.json",
                 "tokenizer.json")

    def set_aside(self) -> Path:
        """Move the earlier run's files out of the way (under the lock); returns where."""
        aside = self.path / f".replaced.{os.getpid()}"
        aside.mkdir()
        for name in self.RUN_FILES:
            if os.path.lexists(self.path / name):
                os.replace(self.path / name, aside / name)
        return aside

    def put_back(self, aside: Path) -> None:
        """Undo ``set_aside``: the new run's files go, the earlier run's return as they were."""
        for name in self.RUN_FILES:
            _remove(self.path / name)
            if os.path.lexists(aside / name):
                os.replace(aside / name, self.path / name)
        shutil.rmtree(aside, ignore_errors=True)

    def replace_with(self, staged: Path) -> None:
        """Make the run written in ``staged`` (a folder on the same disk) this folder's run:
        the earlier run's files are set aside, the new ones moved in, then the earlier ones
        deleted; a move that fails puts them back. Call under the lock."""
        aside = self.set_aside()
        try:
            for item in sorted(staged.iterdir()):
                os.replace(item, self.path / item.name)
        except BaseException:
            self.put_back(aside)
            raise
        shutil.rmtree(aside, ignore_errors=True)

    def recover_replaced(self) -> list[str]:
        """Mend a replacement a killed process left half done (call under the lock, so its
        writer has ended): the earlier run is put back if the new one saved no checkpoint,
        else deleted. Returns one note for each."""
        notes = []
        for aside in sorted(self.path.glob(".replaced.*")) if self.path.is_dir() else []:
            if not aside.is_dir() or aside.is_symlink():
                continue
            if self.has_checkpoints():
                shutil.rmtree(aside, ignore_errors=True)
                notes.append(f"deleted the earlier run {aside.name} that a replacing run had "
                             "set aside (the replacing run had saved a checkpoint)")
            else:
                self.put_back(aside)
                notes.append(f"put back the earlier run that a replacing run ended before its "
                             f"first checkpoint had set aside in {aside.name}")
        return notes

    def remove_abandoned_partials(self) -> None:
        """Half-written checkpoints of writers that have ended (a kill, a full disk)."""
        remove_abandoned_partials(self.checkpoints)

    def config(self) -> TrainConfig:
        try:
            data = json.loads(self.config_path.read_bytes().decode("utf-8"))
            return TrainConfig.from_dict(data)
        except FileNotFoundError:
            raise RunError(f"{self.path} is not a tfstudio run folder (no config.json)") from None
        except (ValueError, TypeError) as exc:
            raise RunError(f"{self.config_path} is damaged ({exc}); restore it from a copy of "
                           "the run, or start a new run") from None

    def graph(self) -> Graph:
        return load_graph_file(self.graph_path)

    def trained_length(self) -> int:
        """The most tokens the model reads at once (the window generation slides): the run's
        ``seq_len``; a checkpoint imported from Hugging Face (or fine-tuned from one) also knows
        the length its makers trained it at, the graph's ``context_length``."""
        config = self.config()
        context = self.graph().meta.get("context_length")
        latest = self.latest()
        state = latest / "state.json" if latest is not None else None
        imported = config.init_from or (state is not None and state.exists() and
                                        "imported_from" in json.loads(state.read_text("utf-8")))
        return max(config.seq_len, int(context)) if imported and context else config.seq_len

    def tokenizer(self):
        from ..data import load_tokenizer
        return load_tokenizer(self.tokenizer_path)

    # ----------------------------------------------------------------- checkpoints
    def checkpoint(self) -> CheckpointChoice:
        """The newest checkpoint that verifies; each newer one skipped is added to ``notes``."""
        choice = find_checkpoint(self.checkpoints)
        if choice.path is not None:
            pointer = str(self.checkpoints / "LATEST")
            for problem in choice.skipped:
                if problem.startswith(pointer):  # the pointer, not a checkpoint, is bad
                    note = (f"{problem}; using {choice.path.name}, the newest intact "
                            "checkpoint (the next checkpoint written rewrites LATEST)")
                else:
                    note = (f"skipped a damaged checkpoint: {problem}; using "
                            f"{choice.path.name} instead (delete the damaged folder once you "
                            "no longer need it)")
                if note not in self.notes:
                    self.notes.append(note)
        return choice

    def latest(self) -> Path | None:
        """The newest checkpoint that verifies (None: none does; see ``checkpoint``)."""
        return self.checkpoint().path

    def has_checkpoints(self) -> bool:
        """Whether training ever saved here (intact or not): a new run must not replace it
        unasked."""
        return self.checkpoints.is_dir() and any(
            p.name == "LATEST" or p.name.startswith("step-") for p in self.checkpoints.iterdir())

    def no_checkpoint_message(self, choice: CheckpointChoice) -> str:
        """Why ``choice`` found nothing, and what to do."""
        if not choice.skipped:
            return (f"{self.path} has no checkpoint yet; train it first (checkpoints are "
                    "written at the end of training and on stop)")
        more = f" (and {len(choice.skipped) - 1} more)" if len(choice.skipped) > 1 else ""
        return (f"{self.path} has no intact checkpoint: {choice.skipped[0]}{more}; restore "
                "the file from a copy, or train again (--force replaces the run)")

    def check_setup(self, checkpoint: Path) -> None:
        """Raise RunError (one line) unless graph.json, tokenizer.json and config.json are the
        ones ``checkpoint`` was trained with: its manifest's sha256 of the first two, and the
        settings its state.json kept that a resume never changes."""
        problem = setup_problem(checkpoint, self.path)
        if problem is not None:
            raise RunError(problem)
        saved = read_state(checkpoint).get("config")
        if not isinstance(saved, dict):
            return  # imported, or written before checkpoints kept their settings
        config = self.config()
        for name in KEPT_ON_RESUME:
            if name == "lr_decay_steps" or name not in saved:
                continue  # a resume that extends --steps sets it; see train/start.py
            if getattr(config, name) != saved[name]:
                raise RunError(
                    f"{self.config_path} says {name} {getattr(config, name)!r} but "
                    f"{Path(checkpoint).name} was trained with {saved[name]!r}; the file was "
                    "changed after training: restore it from a copy of the run")

    def lock(self):
        """The lock a writer holds for the life of its run (see lock.py); not yet taken."""
        from .lock import RunLock
        return RunLock(self.path)

    @staticmethod
    def step_of(checkpoint: Path) -> int:
        return step_of(checkpoint)

    def load_model(self, device: str = "cpu", memory_check: bool = True):
        """The compiled model with the newest intact checkpoint's weights (eval mode).

        ``memory_check`` first compares the weights' size with the device's free memory
        (tfstudio.runs.preflight) and refuses with both numbers."""
        if not self.exists():
            raise RunError(f"{self.path} is not a tfstudio run folder (no config.json/graph.json)")
        from ..compiler import compile_graph
        self.read_newest(self.check_setup)  # under the hold: a live run may rotate it away
        graph = self.graph()
        if memory_check:
            from .preflight import check_model_memory
            check_model_memory(graph, device=device, what=f"loading {self.path}")
        model = compile_graph(graph)
        self.load_weights(model, device)
        return model.to(device).eval()

    def load_weights(self, model, device: str = "cpu") -> Path:
        """Load the newest intact checkpoint into ``model``; its path. A run that trains
        meanwhile keeps its checkpoints while this reads (``held_from_rotation``); one that
        was deleted just before the hold is retried once on the newest then."""
        return self.read_newest(lambda path: load_checkpoint(path, model, device=device))[0]

    def read_newest(self, read):
        """(path, ``read(path)``) of the newest intact checkpoint, kept from rotation while it
        reads (``held_from_rotation``): anything that opens a checkpoint of a run that may be
        training goes through here. A checkpoint deleted just before the hold is retried
        once on the newest then."""
        retried = False
        while True:
            with held_from_rotation(self.checkpoints):
                choice = self.checkpoint()
                if choice.path is None:
                    raise RunError(self.no_checkpoint_message(choice))
                try:
                    return choice.path, read(choice.path)
                except (CheckpointError, RunError, OSError):
                    if retried or choice.path.exists():
                        raise
            retried = True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink()
