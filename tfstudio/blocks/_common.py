"""Small helpers shared by the block families' schemas (pure Python, no torch)."""
from __future__ import annotations

from typing import Any, Mapping

from ..graph.kinds import ACTIVATIONS, GATED
from ..graph.schema import HIDDEN, BlockSpec, ParamSpec, PortSpec, register


def width(shape) -> int | None:
    """The feature width (last dimension) of a shape, or None when unknown."""
    if not shape or not isinstance(shape[-1], int):
        return None
    return shape[-1]


def same_as_input(port: str = "x", out: str = "y"):
    def infer(params: Mapping[str, Any], shapes: Mapping[str, tuple]):
        return {out: shapes[port]} if shapes.get(port) else {}
    return infer


def x_in(description: str = "the hidden stream") -> PortSpec:
    return PortSpec("x", HIDDEN, description)


def y_out(description: str = "the transformed hidden stream") -> PortSpec:
    return PortSpec("y", HIDDEN, description)


def dropout_param(default: float = 0.0) -> ParamSpec:
    return ParamSpec("dropout", "float", default,
                     "Probability of zeroing an activation while training; off at inference.",
                     minimum=0.0, maximum=0.9)


def ffn_params(d_model: int, d_ff: int, activation: str, bias: bool) -> int:
    """Parameters of one feed-forward network (also one MoE expert)."""
    gated = activation in GATED
    n = (2 if gated else 1) * d_model * d_ff + d_ff * d_model
    if bias:
        n += (2 if gated else 1) * d_ff + d_model
    return n


def ffn_matmul_weights(d_model: int, d_ff: int, activation: str) -> int:
    """Weights one token multiplies through in an FFN: 2 FLOPs each, biases not counted."""
    return (3 if activation in GATED else 2) * d_model * d_ff


def ffn_activations(d_model: int, d_ff: int, activation: str) -> int:
    """Values an FFN keeps per token for backward: its input, the inner pre-activation and
    the activation's output (gated: both branches, the gate's output and their product)."""
    return d_model + (4 if activation in GATED else 2) * d_ff


def attended_keys(context: int, causal: bool, window: int = 0) -> float:
    """Keys one query scores against, averaged over the positions of a ``context``-token
    sequence. Causal: query i sees i+1 keys, or the last ``window``. Bidirectional: every key,
    or those within ``window`` positions on either side."""
    t = int(context)
    if t <= 0:
        return 0.0
    if causal:
        w = window if 0 < window < t else t
        return (w * (w + 1) / 2 + (t - w) * w) / t
    if window <= 0 or window >= t:
        return float(t)
    reach = window - 1  # keys on each side of the query
    one_side = reach * (reach + 1) / 2 + (t - 1 - reach) * reach
    return (2 * one_side + t) / t


def divisors_near(n: int, target: float, count: int = 3) -> list[int]:
    """The divisors of ``n`` closest to ``target``, for hints such as 'use 8 or 12 heads'."""
    return sorted(sorted(divisors(n), key=lambda k: (abs(k - target), k))[:count])


def nearest_divisor(n: int, target: int) -> int:
    """The divisor of ``n`` nearest ``target``, the larger on a tie (64 and 3 heads: 4); the
    one value a Fix button sets."""
    return min(divisors(n), key=lambda k: (abs(k - target), -k))


def divisors(n: int) -> list[int]:
    """All divisors of ``n`` in increasing order (found up to sqrt(n): d_model may be huge)."""
    small = [k for k in range(1, int(n ** 0.5) + 1) if n % k == 0]
    return sorted(set(small + [n // k for k in small]))



__all__ = ["BlockSpec", "ParamSpec", "PortSpec", "register", "width", "same_as_input",
           "x_in", "y_out", "dropout_param", "ffn_params", "ffn_matmul_weights", "ffn_activations",
           "attended_keys", "divisors", "divisors_near", "ACTIVATIONS", "GATED"]
