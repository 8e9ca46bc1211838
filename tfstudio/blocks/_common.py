"""Small helpers shared by the block families' schemas (pure Python, no torch)."""
from __future__ import annotations

from typing import Any, Mapping

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


ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "glu", "geglu", "swiglu")
GATED = ("glu", "geglu", "swiglu")

__all__ = ["BlockSpec", "ParamSpec", "PortSpec", "register", "width", "same_as_input",
           "x_in", "y_out", "dropout_param", "ffn_params", "ACTIVATIONS", "GATED"]
