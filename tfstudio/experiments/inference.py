"""Inference cost, measured: generation speed at batch 1 with the KV cache, and the bytes the
cache's key and value tensors actually hold at the context length, next to the cost model's
prediction (``graph.cost.estimate_cost``'s ``kv_cache_bytes_per_token`` x tokens)."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..graph import Graph
from ..graph.cost import estimate_cost
from ..nn.attention import SelfAttention
from ..runs import RunFolder
from ..runs.disk import write_whole
from ..train.generation import generate_ids

WARMUP_TOKENS = 4


@dataclass
class InferenceCost:
    context_length: int
    tokens_per_s: float            # generating context_length - 1 tokens after a 1-token prompt
    kv_bytes_measured: int         # the cache's K and V tensors after context_length tokens
    kv_bytes_predicted: int        # cost model: bytes per token x context_length
    dtype: str

    def to_dict(self) -> dict:
        return asdict(self)


def cache_bytes(model, cache) -> int:
    """Bytes of every self-attention block's cached keys and values."""
    total = 0
    for _, module in model.blocks():
        if isinstance(module, SelfAttention):
            state = cache.state(module)
            total += sum(t.numel() * t.element_size() for t in state.values()
                         if torch.is_tensor(t))
    return total


@torch.no_grad()
def measure_inference(model, graph: Graph, context_length: int, prompt_id: int = 0
                      ) -> InferenceCost:
    """Time batch-1 generation up to ``context_length`` tokens and weigh the filled cache."""
    dtype = next(model.parameters()).dtype
    list(generate_ids(model, [prompt_id], max_new_tokens=WARMUP_TOKENS, seed=0))
    start = time.perf_counter()
    made = len(list(generate_ids(model, [prompt_id], max_new_tokens=context_length - 1, seed=0)))
    elapsed = time.perf_counter() - start
    cache = model.new_cache()
    device = next(model.parameters()).device
    ids = torch.full((1, context_length), prompt_id, dtype=torch.long, device=device)
    model(ids, cache=cache)
    measured = cache_bytes(model, cache)
    dtype_name = str(dtype).removeprefix("torch.")
    per_token = estimate_cost(graph, context_length=context_length,
                              dtype=dtype_name).kv_cache_bytes_per_token
    return InferenceCost(context_length, made / elapsed if elapsed > 0 else 0.0, measured,
                         per_token * context_length, dtype_name)


def measure_run(run_dir: str | Path, context_length: int | None = None) -> InferenceCost:
    folder = RunFolder(run_dir)
    model = folder.load_model()
    length = context_length or folder.config().seq_len
    return measure_inference(model, folder.graph(), length)


def result_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / "inference.json"


def save(result: InferenceCost, path: Path) -> None:
    write_whole(path, json.dumps(result.to_dict(), indent=1))


def load(path: Path) -> InferenceCost:
    return InferenceCost(**json.loads(Path(path).read_text(encoding="utf-8")))


@torch.no_grad()
def decode_ms_per_token(model, context: int, *, use_cache: bool, tokens: int = 3) -> float:
    """Milliseconds per generated token once ``context`` tokens are in: the prefill is left
    out, so with the cache each token is one step over the cache, and without it each token
    recomputes the whole prefix (batch 1, greedy)."""
    prompt = [0] * context
    steps = generate_ids(model, prompt, max_new_tokens=tokens + 1, temperature=0.0, seed=0,
                         use_cache=use_cache, window=context + tokens + 2)
    next(steps)  # the prefill and the first token
    start = time.perf_counter()
    made = sum(1 for _ in steps)
    return 1000 * (time.perf_counter() - start) / max(1, made)


def decode_graph(base: Graph, kind: str, *, d_model: int, layers: int, heads: int,
                 max_len: int) -> Graph:
    """``base`` widened for decode timing: ``d_model`` wide, ``layers`` deep, ``heads`` query
    heads with ``kind``'s K/V heads, RoPE positions (no table to outgrow)."""
    from .variants import apply_setting
    graph = apply_setting(base, "positions", "rope")
    for key, value in (("embed.d_model", d_model), ("layers.ffn.d_ff", 4 * d_model),
                       ("layers.repeat", layers), ("layers.attn.heads", heads)):
        graph = apply_setting(graph, key, str(value))
    graph.meta["context_length"] = max_len
    return apply_setting(graph, "attention", kind)
