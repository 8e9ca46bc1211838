"""RoPE scaling for contexts longer than the trained one (position interpolation).

Linear scaling divides every position by the factor, so a model trained on L tokens sees
positions 0..L*factor squeezed into the angles it knows (Chen et al. 2023); NTK-aware scaling
stretches the frequency base instead, keeping the fast-turning pairs nearly as trained.
"""
from __future__ import annotations

from ..graph import Graph
from ..graph import block_types as bt, kinds

SCALING_TYPES = ("linear", "ntk")


def rope_attention_nodes(graph: Graph) -> list:
    return [node for _, node in graph.walk()
            if node.type == bt.ATTENTION and node.typed_params().position == kinds.ROPE]


def apply_rope_scaling(graph: Graph, factor: float, kind: str = "linear") -> Graph:
    """A copy of ``graph`` whose RoPE attention blocks scale positions by ``factor``
    (``kind``: linear or ntk). ValueError when the graph has no RoPE attention, the factor is
    below 1, or the kind is unknown."""
    if kind not in SCALING_TYPES:
        raise ValueError(f"RoPE scaling type must be linear or ntk; got '{kind}'")
    if not factor >= 1.0:
        raise ValueError(f"the RoPE scaling factor must be at least 1 (1 = as trained); "
                         f"got {factor:g}")
    out = graph.clone()
    nodes = rope_attention_nodes(out)
    if not nodes:
        raise ValueError("RoPE scaling needs RoPE attention and this model has none (its "
                         "positions are learned, sinusoidal, ALiBi or absent); drop "
                         "--rope-scaling")
    for node in nodes:
        node.params["rope_scaling"] = float(factor)
        if node.typed_params().rope_scaling_type != kind:
            node.params["rope_scaling_type"] = kind
    return out
