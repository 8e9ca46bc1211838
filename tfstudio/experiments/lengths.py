"""Loss against position: how a model trained on T tokens does at positions past T.

Windows longer than the training length are cut from the run's validation split; the
per-position cross-entropy is averaged over the windows, then over position buckets
[W, L1), [L1, L2), ... The first W positions (a quarter of the training length, at most
half the first bucket), where a token has too little context to predict well whatever the
positions, are averaged apart as the warm-up: inside the first bucket they would make it
look worse than the ones after it, and every ratio against it smaller than it is. A learned position table has no vector past its
rows, so positions beyond it are reported as out of reach ("cannot go past N") rather than
evaluated.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..graph import block_types as bt, kinds
from ..compiler import compile_graph
from ..data import eval_windows
from ..graph import Graph
from ..runs import RunFolder
from ..runs.disk import write_whole
from .scaling import apply_rope_scaling
from .splits import run_splits

DEFAULT_WINDOWS = 64


@dataclass
class LengthEval:
    train_length: int
    lengths: list[int]                 # bucket ends: bucket i is [lengths[i-1], lengths[i])
    buckets: list[float | None]        # mean loss per bucket; None past ``limit``
    per_position: list[float]          # mean loss at positions 0, 1, ... (as far as evaluated)
    windows: int                       # validation windows averaged
    limit: int | None = None           # rows of a learned position table, when it stops us
    rope_scaling: float = 1.0
    rope_scaling_type: str = "linear"
    notes: list[str] = field(default_factory=list)
    warmup: int = 0                    # positions [0, warmup) are averaged apart ...
    warmup_loss: float | None = None   # ... into this, and left out of the first bucket

    def bucket_names(self) -> list[str]:
        starts = [self.warmup] + self.lengths[:-1]
        return [f"{a}-{b - 1}" for a, b in zip(starts, self.lengths)]

    def warmup_name(self) -> str:
        return f"0-{self.warmup - 1}" if self.warmup else ""

    def rebucket(self, warmup: int) -> "LengthEval":
        """The same curve with ``warmup`` positions averaged apart (exact: from the stored
        per-position losses, no model needed)."""
        self.warmup = warmup
        self.buckets = bucket_means(self.per_position, self.lengths, start=warmup)
        self.warmup_loss = float(np.mean(self.per_position[:warmup])) if warmup else None
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "LengthEval":
        return cls(**data)


def warmup_positions(train_length: int, first_end: int | None = None) -> int:
    """Positions averaged apart as the warm-up: a quarter of the training length, and never
    more than half the first bucket (which keeps the positions after them)."""
    quarter = train_length // 4
    return quarter if first_end is None else min(quarter, first_end // 2)


def default_lengths(train_length: int) -> list[int]:
    """One, two, three and four training lengths."""
    return [train_length * k for k in (1, 2, 3, 4)]


def check_lengths(lengths: list[int]) -> list[int]:
    if not lengths or any(b <= a for a, b in zip([0] + lengths[:-1], lengths)):
        raise ValueError(f"lengths must be increasing positive numbers such as 64,128,256; "
                         f"got {','.join(map(str, lengths))}")
    return lengths


def learned_limit(graph: Graph) -> int | None:
    """Rows of the smallest learned position table (None without one)."""
    rows = [int(n.typed_params().max_len) for _, n in graph.walk()
            if n.type == bt.POSITIONAL_ENCODING and n.typed_params().scheme == kinds.LEARNED]
    return min(rows) if rows else None


def per_position_loss(model, tokens: np.ndarray, length: int, *, batch_size: int = 8,
                      max_windows: int = DEFAULT_WINDOWS) -> tuple[list[float], int]:
    """Mean next-token cross-entropy at each position 0..length-1 over evenly spread windows
    of ``tokens``; returns (losses, windows used)."""
    # imported here: the stored results (LengthEval, load) are read where torch is not loaded
    import torch
    import torch.nn.functional as F

    device = next(model.parameters()).device
    total = torch.zeros(length, dtype=torch.float64)
    windows = 0
    with torch.no_grad():
        for x, y in eval_windows(tokens, length, batch_size, max(1, max_windows // batch_size)):
            logits = model(x.to(device)).float()
            loss = F.cross_entropy(logits.transpose(1, 2), y.to(device), reduction="none")
            total += loss.sum(0).double().cpu()
            windows += x.shape[0]
    return (total / max(1, windows)).tolist(), windows


def bucket_means(per_position: list[float], lengths: list[int], start: int = 0
                 ) -> list[float | None]:
    """Mean of each [previous end, end) bucket that ``per_position`` fully covers, the first
    from ``start``."""
    out = []
    for end in lengths:
        out.append(float(np.mean(per_position[start:end])) if end <= len(per_position) else None)
        start = end
    return out


def evaluate_model(model, graph: Graph, val_tokens: np.ndarray, train_length: int,
                   lengths: list[int], *, max_windows: int = DEFAULT_WINDOWS,
                   warmup: int | None = None) -> LengthEval:
    """``warmup``: positions averaged apart (default a quarter of ``train_length``; give the
    same one to runs of different lengths that are compared bucket by bucket)."""
    lengths = check_lengths(list(lengths))
    warmup = warmup_positions(train_length, lengths[0]) if warmup is None else warmup
    if warmup >= lengths[0]:
        raise ValueError(f"the warm-up ({warmup} positions) must end before the first length "
                         f"({lengths[0]})")
    limit = learned_limit(graph)
    reach = min(lengths[-1], limit) if limit else lengths[-1]
    if len(val_tokens) < reach + 1:
        raise ValueError(f"the validation split has {len(val_tokens):,} tokens, too few for "
                         f"windows of {reach}; evaluate shorter lengths or use a larger corpus")
    curve, windows = per_position_loss(model, val_tokens, reach, max_windows=max_windows)
    result = LengthEval(train_length, lengths, [], curve, windows).rebucket(warmup)
    if limit and limit < lengths[-1]:
        result.limit = limit
        result.notes.append(f"learned positions: cannot go past {limit}")
    return result


def evaluate_run(run_dir: str | Path, lengths: list[int] | None = None, *,
                 rope_scaling: float = 1.0, rope_scaling_type: str = "linear",
                 device: str = "cpu", max_windows: int = DEFAULT_WINDOWS,
                 warmup: int | None = None) -> LengthEval:
    """Loss per position bucket of a trained causal-LM run on its validation split, optionally
    with RoPE scaled by ``rope_scaling`` (no training: what scaling alone does)."""
    folder = RunFolder(run_dir)
    if not folder.exists():
        raise ValueError(f"{folder.path} is not a tfstudio run folder (no config.json/graph.json)")
    graph = folder.graph()
    if graph.meta.get("family", "decoder") != "decoder":
        raise ValueError(f"{folder.path} is not a decoder; loss by position is measured on "
                         "causal language models")
    if rope_scaling != 1.0 or rope_scaling_type != "linear":
        graph = apply_rope_scaling(graph, rope_scaling, rope_scaling_type)
    checkpoint = folder.latest()
    if checkpoint is None:
        raise ValueError(f"{folder.path} has no checkpoint yet; train it first")
    model = compile_graph(graph)
    folder.load_weights(model)  # held from a live run's rotation while it loads
    model = model.to(device).eval()
    train_length = folder.config().seq_len
    result = evaluate_model(model, graph, run_splits(folder).val, train_length,
                            lengths or default_lengths(train_length), max_windows=max_windows,
                            warmup=warmup)
    result.rope_scaling, result.rope_scaling_type = float(rope_scaling), rope_scaling_type
    return result


def result_path(run_dir: str | Path, rope_scaling: float = 1.0,
                rope_scaling_type: str = "linear") -> Path:
    """RUN/lengths.json, or RUN/lengths-rope4-linear.json for a scaled evaluation."""
    name = "lengths" if rope_scaling == 1.0 else f"lengths-rope{rope_scaling:g}-{rope_scaling_type}"
    return Path(run_dir) / f"{name}.json"


def save(result: LengthEval, path: Path) -> None:
    write_whole(path, json.dumps(result.to_dict(), indent=1))


def load(path: Path) -> LengthEval:
    return LengthEval.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
