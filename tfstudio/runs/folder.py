"""A run folder: everything needed to reopen, resume, sample from or export a training run.

    RUN_DIR/graph.json        the architecture as trained (vocab set to the tokenizer's)
    RUN_DIR/config.json       the TrainConfig
    RUN_DIR/tokenizer.json    the tokenizer, so the run decodes exactly as it trained
    RUN_DIR/metrics.jsonl     one event per line (see tfstudio.train.events)
    RUN_DIR/checkpoints/      see checkpoint.py
    RUN_DIR/probes/           looks inside the model during training (tfstudio.probes)
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..graph import Graph, load_graph_file, save_graph
from .checkpoint import latest_checkpoint, load_checkpoint
from .config import TrainConfig


class RunError(RuntimeError):
    pass


class RunFolder:
    def __init__(self, path: str | Path):
        self.path = Path(path)

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
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(config.to_dict(), indent=2), encoding="utf-8")
        tmp.replace(self.config_path)
        tokenizer.save(self.tokenizer_path)

    def clear(self) -> None:
        """Forget an earlier run here (its checkpoints, metrics and probes) before a new one."""
        for path in (self.checkpoints, self.path / "probes"):
            shutil.rmtree(path, ignore_errors=True)
        self.metrics_path.unlink(missing_ok=True)

    def config(self) -> TrainConfig:
        return TrainConfig.from_dict(json.loads(self.config_path.read_text(encoding="utf-8")))

    def graph(self) -> Graph:
        return load_graph_file(self.graph_path)

    def tokenizer(self):
        from ..data import load_tokenizer
        return load_tokenizer(self.tokenizer_path)

    def latest(self) -> Path | None:
        return latest_checkpoint(self.checkpoints)

    def load_model(self, device: str = "cpu"):
        """The compiled model with the newest checkpoint's weights (eval mode)."""
        if not self.exists():
            raise RunError(f"{self.path} is not a tfstudio run folder (no config.json/graph.json)")
        from ..compiler import compile_graph
        ckpt = self.latest()
        if ckpt is None:
            raise RunError(f"{self.path} has no checkpoint yet; train it first "
                           "(checkpoints are written at the end of training and on stop)")
        model = compile_graph(self.graph())
        load_checkpoint(ckpt, model, device=device)
        return model.to(device).eval()
