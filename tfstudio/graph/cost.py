"""The cost model: parameters, FLOPs, KV cache and training memory, from the graph alone.

Nothing is allocated: every number comes from the blocks' schema hooks over the inferred
shapes, so a 175B-parameter preset is costed as fast as a tiny one. Conventions:

- parameters: trainable values, each counted once (a tied head shares the embedding's matrix);
  a group counts its inside times its repeat.
- FLOPs per token: forward pass, 2 FLOPs per multiply-add, matmuls only (norms, adds and
  activations are element-wise and cost well under 1%). Attention scores and the weighted sum
  cost 2 x 2 x keys x d each, where keys is what a query sees averaged over the positions of
  a context_length sequence: all of them for bidirectional attention, (T+1)/2 for causal, at
  most the window for sliding-window attention. For a causal GPT this is Kaplan et al.'s
  C_forward = 2 N + 2 n_layer n_ctx d_attn (plus the head's 2 d V, which Kaplan leaves out).
- KV cache per token: 2 (K and V) x kv_heads x head_dim x bytes for every causal
  self-attention layer (bidirectional encoders generate nothing, so cache nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import block_types as bt
from .model import Graph
from .schema import get_spec
from .shapes import Key, ShapeMap, infer_shapes

DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8": 1, "int8": 1}
_ALIASES = {"fp64": "float64", "double": "float64", "fp32": "float32", "float": "float32",
            "fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp8": "float8"}
DEFAULT_CONTEXT = 1024
ADAMW_STATE_BYTES = 8  # two fp32 moments per parameter

EMBEDDING_TYPES = (bt.TOKEN_EMBEDDING,)


def dtype_bytes(dtype: str) -> int:
    """Bytes per value of a dtype name ("bfloat16", "bf16", "float32", ...)."""
    name = str(dtype).lower().removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype '{dtype}'; use one of {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[name]


def resolve_context(graph: Graph, context_length: int | None) -> int:
    """The context length costs are computed at: given, else the graph's, else 1024."""
    value = context_length if context_length is not None else graph.meta.get("context_length")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        if context_length is not None:
            raise ValueError(f"context_length must be a positive whole number; got {value!r}")
        return DEFAULT_CONTEXT
    return value


@dataclass
class CostReport:
    """``node_*`` map (path, node_id) to one block's number at every depth; a block inside a
    group counts one copy, the group's own entry its whole inside times its repeat."""

    shapes: ShapeMap                                     # from infer_shapes
    node_params: dict[tuple[tuple[str, ...], str], int]
    total_params: int                                    # unique (a tied head counted once)
    flops_per_token: float                               # forward, at context_length
    kv_cache_bytes_per_token: int                        # 2 x layers x kv_heads x head_dim x bytes
    context_length: int
    node_flops: dict[Key, float] = field(default_factory=dict)
    node_kv_bytes: dict[Key, int] = field(default_factory=dict)
    embedding_params: int = 0                            # token tables and learned positions
    dtype: str = "bfloat16"                              # of the KV cache

    @property
    def non_embedding_params(self) -> int:
        """Kaplan et al.'s N: the parameters that are not lookup tables."""
        return self.total_params - self.embedding_params


def estimate_cost(graph: Graph, *, context_length: int | None = None,
            dtype: str = "bfloat16") -> CostReport:
    """Parameters, FLOPs per token and KV cache of ``graph`` (``dtype``: the cache's)."""
    context = resolve_context(graph, context_length)
    nbytes = dtype_bytes(dtype)
    shapes = infer_shapes(graph)
    report = CostReport(shapes, {}, 0, 0.0, 0, context, dtype=dtype)
    hooks = {  # measure -> f(spec, params, input shapes)
        "params": lambda spec, p, s: spec.count_params(p, s) if spec.count_params else 0,
        "flops": lambda spec, p, s: spec.flops(p, s, context) if spec.flops else 0.0,
        "kv": lambda spec, p, s: spec.kv_bytes(p, s, nbytes) if spec.kv_bytes else 0,
    }
    totals = _sum_graph(graph, (), shapes, hooks,
                        {"params": report.node_params, "flops": report.node_flops,
                         "kv": report.node_kv_bytes})
    report.total_params = int(totals["params"])
    report.flops_per_token = float(totals["flops"])
    report.kv_cache_bytes_per_token = int(totals["kv"])
    report.embedding_params = sum(
        report.node_params[(path, node.id)] * _repeats(graph, path)
        for path, node in graph.walk() if _is_table(node))
    return report


def _sum_graph(graph: Graph, path: tuple[str, ...], shapes: ShapeMap, hooks: dict,
               into: dict[str, dict]) -> dict[str, float]:
    """Fill ``into[measure][(path, id)]`` for every node under ``graph``; return the sums."""
    totals = {name: 0 for name in hooks}
    for node in graph:
        key = (path, node.id)
        if node.subgraph is not None:
            inner = _sum_graph(node.subgraph, path + (node.id,), shapes, hooks, into)
            repeat = max(1, _int(node.params.get("repeat", 1)))
            values = {name: inner[name] * repeat for name in hooks}
        else:
            values = _node_values(node, shapes.input_shapes(node.id, path), hooks)
        for name, value in values.items():
            into[name][key] = value
            totals[name] += value
    return totals


def _node_values(node, in_shapes: dict, hooks: dict) -> dict[str, float]:
    """The hooks' numbers for one block; a block validation rejects (unknown type, malformed
    parameter) costs nothing until it is fixed."""
    try:
        spec = get_spec(node.type)
        params = node.resolved_params()
    except KeyError:
        return {name: 0 for name in hooks}
    if not spec.well_formed(node.params):
        return {name: 0 for name in hooks}
    out = {}
    for name, hook in hooks.items():
        try:
            out[name] = hook(spec, params, in_shapes)
        except (ArithmeticError, KeyError, TypeError, ValueError):
            out[name] = 0  # a malformed parameter (reported by validation) has no cost yet
    return out


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 1


def _is_table(node) -> bool:
    if node.type in EMBEDDING_TYPES:
        return True
    return node.type == bt.POSITIONAL_ENCODING and node.typed_params().scheme == "learned"


def _repeats(graph: Graph, path: tuple[str, ...]) -> int:
    """How many copies of a node at ``path`` the stacked groups make."""
    total, g = 1, graph
    for gid in path:
        node = g.node(gid)
        total *= max(1, _int(node.params.get("repeat", 1)))
        g = node.subgraph
    return total


# ----------------------------------------------------------------------- training memory
@dataclass
class MemoryEstimate:
    weights: int
    gradients: int
    optimizer: int
    activations: int
    total: int   # bytes

    def as_dict(self) -> dict[str, int]:
        return {"weights": self.weights, "gradients": self.gradients,
                "optimizer": self.optimizer, "activations": self.activations,
                "total": self.total}


def training_memory(graph: Graph, *, batch: int, seq_len: int,
                    dtype: str = "float32") -> MemoryEstimate:
    """Bytes one AdamW training step of ``batch`` x ``seq_len`` tokens needs, at its peak.

    Assumptions, stated so the estimate can be checked:
    - weights and gradients are held in ``dtype``, one copy each (no fp32 master copy);
    - AdamW keeps two fp32 moments per parameter (8 bytes each parameter, whatever ``dtype``);
    - activations are what every block keeps for its backward pass (its ``activations`` hook:
      a norm its input; attention its input, q, k, v, output and one softmax normaliser per
      head, as fused scaled-dot-product attention does, with no T x T matrix; an FFN its input,
      pre- and post-activation; the head its logits and their log-softmax), in ``dtype``, for
      every copy of a repeated group, and nothing is recomputed;
    - framework workspace, the CUDA context and allocator fragmentation are not included.
    """
    if batch < 1 or seq_len < 1:
        raise ValueError(f"batch and seq_len must be at least 1; got {batch} and {seq_len}")
    nbytes = dtype_bytes(dtype)
    params = estimate_cost(graph, context_length=seq_len).total_params
    shapes = infer_shapes(graph)
    per_token = _sum_graph(graph, (), shapes, {"act": lambda spec, p, s: (
        spec.activations(p, s, seq_len) if spec.activations else 0)}, {"act": {}})["act"]
    weights = params * nbytes
    gradients = params * nbytes
    optimizer = params * ADAMW_STATE_BYTES
    activations = int(per_token * batch * seq_len * nbytes)
    return MemoryEstimate(weights, gradients, optimizer, activations,
                          weights + gradients + optimizer + activations)
