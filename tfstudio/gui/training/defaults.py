"""Sensible training settings for a graph on a device (pure functions, no Qt, no torch).

A newcomer presses Train on a tiny preset on a laptop CPU and should see the loss fall within
a minute: small graphs get a short run with a high learning rate on a synthetic task whose
attention pattern is crisp (reverse); larger graphs, or a GPU, get longer runs, bigger batches
and a gentler learning rate.
"""
from __future__ import annotations

from ...graph import block_types as bt
from ...graph import Graph
from ...runs.config import TrainConfig

TINY_PARAMS = 2_000_000      # up to here: a CPU trains it in seconds
SMALL_PARAMS = 50_000_000    # up to here: minutes on a GPU
REPLAY_CHECKPOINTS = 5       # checkpoints over an in-app run (plus the final one)


def graph_family(graph: Graph) -> str:
    """"decoder", "encoder" or "encoder-decoder", from the head and the token inputs."""
    types = {n.type for _, n in graph.walk()}
    if bt.MLM_HEAD in types:
        return "encoder"
    roles = {n.typed_params().role for _, n in graph.walk() if n.type == bt.TOKEN_INPUT}
    return "encoder-decoder" if "source" in roles or bt.SEQ2SEQ_HEAD in types else "decoder"


def graph_params(graph: Graph) -> int | None:
    try:
        from ...graph.cost import estimate_cost
        return int(estimate_cost(graph).total_params)
    except Exception:  # noqa: BLE001 - an unfinished graph has no count yet; defaults still work
        return None


def context_length(graph: Graph, fallback: int = 64) -> int:
    value = graph.meta.get("context_length")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else fallback


def checkpoint_schedule(steps: int, params: int | None) -> tuple[int, int]:
    """(checkpoint_every, keep_checkpoints) for a run started in the app: a checkpoint every
    fifth of the run, so a crash loses at most a fifth and Explain's embedding map can replay
    training; a small model keeps them all (a few MB each), a larger one the last two (disk)."""
    every = max(1, steps // REPLAY_CHECKPOINTS)
    small = (params or TINY_PARAMS) <= TINY_PARAMS
    return every, REPLAY_CHECKPOINTS + 1 if small else 2


def suggested_config(graph: Graph, gpu: bool = False) -> TrainConfig:
    """Settings to start from for ``graph`` (``gpu``: a CUDA or MPS device is available)."""
    params = graph_params(graph) or TINY_PARAMS
    family = graph_family(graph)
    tiny = params <= TINY_PARAMS
    corpus = "sample:small" if family == "encoder" else "task:reverse"
    if not tiny:
        corpus = "sample"
    if tiny:
        steps, batch, lr = (1000, 64, 3e-3) if gpu else (400, 16, 3e-3)
    elif params <= SMALL_PARAMS:
        steps, batch, lr = (3000, 32, 6e-4) if gpu else (200, 4, 6e-4)
    else:
        steps, batch, lr = (5000, 8, 3e-4) if gpu else (50, 1, 3e-4)
    seq_len = min(context_length(graph), 128 if tiny else 1024 if gpu else 256)
    checkpoint_every, keep = checkpoint_schedule(steps, params)
    return TrainConfig(corpus=corpus, tokenizer="char", steps=steps, batch_size=batch,
                       seq_len=seq_len, lr=lr, warmup_steps=max(1, min(100, steps // 10)),
                       eval_every=max(10, steps // 10), probe_every=max(1, steps // 40),
                       checkpoint_every=checkpoint_every, keep_checkpoints=keep,
                       device="auto", precision="auto")
