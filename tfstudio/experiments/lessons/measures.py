"""A comparison's numbers as per-seed samples, for the lessons' checks: final validation loss,
loss per position bucket, KV-cache bytes, the spread of gradient norms across layers."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Iterator

from ..results import Comparison, RunResult, VariantResult
from .lesson import Sample


def variants(c: Comparison, key: str) -> dict[str, VariantResult]:
    """{value: variant} for the variants named "KEY=value"."""
    return {v.name.split("=", 1)[1]: v for v in c.variants if v.name.startswith(key + "=")}


def unmeasured(c: Comparison, file: str, among: Iterable[VariantResult] | None = None
               ) -> Iterator[tuple[RunResult, Path]]:
    """Each run (of ``among``, else of every variant) whose folder holds no ``file`` yet, with
    that file's path: a lesson measures a trained run once and reads the file after."""
    for v in (c.variants if among is None else among):
        for run in v.runs:
            path = Path(run.run_dir) / file
            if not path.exists():
                yield run, path


def final_loss(v: VariantResult) -> Sample:
    return Sample.of(v.val_losses)


def bucket(v: VariantResult, i: int) -> Sample | None:
    """Loss in position bucket ``i`` over the seeds; None where a bucket could not be evaluated
    (past a learned table's rows) or no run has a length evaluation."""
    values = [r.lengths.buckets[i] for r in v.runs
              if r.lengths is not None and i < len(r.lengths.buckets)]
    if not values or any(x is None for x in values):
        return None
    return Sample.of(values)


def ratio(v: VariantResult, i: int, j: int) -> Sample | None:
    """Bucket ``i`` over bucket ``j``, seed by seed."""
    values = []
    for r in v.runs:
        b = r.lengths.buckets if r.lengths is not None else []
        if max(i, j) >= len(b) or b[i] is None or b[j] is None:
            return None
        values.append(b[i] / b[j])
    return Sample.of(values) if values else None


def kv_bytes(v: VariantResult) -> int | None:
    """The KV cache's measured bytes after one context length (the same for every seed)."""
    costs = [r.inference for r in v.runs if r.inference is not None]
    return costs[0].kv_bytes_measured if costs else None


def layer_spread(v: VariantResult, floor: float = 1e-12) -> Sample | None:
    """Largest over smallest gradient norm among the layers at the last logged step, seed by
    seed (a layer's norm below ``floor`` counts as ``floor``)."""
    values = []
    for r in v.runs:
        last = [series[-1][1] for layer, series in r.layer_grad_norms.items()
                if layer.startswith("layers.") and series]
        if last:
            values.append(max(last) / max(min(last), floor))
    return Sample.of(values) if values else None


def log_spread(v: VariantResult) -> Sample | None:
    """``layer_spread`` in log10, seed by seed: ratios that range over orders of magnitude are
    compared, and their spread taken, as powers of ten (one seed's vanished gradient would
    otherwise make the raw ratios' standard deviation swamp every difference)."""
    spread = layer_spread(v)
    return Sample.of([math.log10(x) for x in spread.values]) if spread else None


def factor(x: float) -> str:
    """×2.8, ×140, ×1.2e+05: a ratio as it is, never rounded to a power of ten."""
    return f"x{x:.2g}" if x < 10 else f"x{x:,.0f}" if x < 1e4 else f"x{x:.2g}"
