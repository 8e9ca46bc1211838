"""The words on the inspector's quick-switch buttons. What each switch reads and does lives in
``tfstudio.graph.switches`` (and ``.placement``); this module only names the choices, in the
order the buttons appear."""
from __future__ import annotations

from ..graph import Graph
from ..graph.switches import (activation_kind, attention_kind, ffn_kind, norm_kind, placement,
                              positional_scheme, set_positional_scheme, switch_layer)

# value -> button label, in the order the buttons appear
ATTENTION_KINDS = {"mha": "MHA", "gqa": "GQA", "mqa": "MQA"}
FFN_KINDS = {"ffn": "FFN", "moe": "MoE"}
ACTIVATIONS = {"relu": "ReLU", "gelu": "GELU", "silu": "SiLU", "glu": "GLU", "geglu": "GEGLU",
               "swiglu": "SwiGLU"}
PLACEMENTS = {"pre": "Pre", "post": "Post", "sandwich": "Sandwich"}
NORM_KINDS = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}
POSITION_SCHEMES = {"sinusoidal": "Sinusoidal", "learned": "Learned", "rope": "RoPE",
                    "alibi": "ALiBi", "none": "None"}


def rewrite(layer: Graph, key: str, choice: str, equal_params: bool = True) -> Graph:
    """The layer with switch ``key`` ("attention", "ffn", "activation", "placement") set to
    ``choice`` (kept for callers of the older name; see graph.switches.switch_layer)."""
    return switch_layer(layer, key, choice, equal_params)


def with_positional_scheme(root: Graph, scheme: str) -> Graph:
    return set_positional_scheme(root, scheme)


__all__ = ["ATTENTION_KINDS", "FFN_KINDS", "ACTIVATIONS", "PLACEMENTS", "NORM_KINDS",
           "POSITION_SCHEMES", "rewrite", "with_positional_scheme", "attention_kind", "ffn_kind",
           "activation_kind", "norm_kind", "placement", "positional_scheme"]
