"""What the inspector's quick switches show and do: reads the current state of a layer (which
attention kind, FFN or MoE, which norm placement) and asks the graph layer for the rewrite.
No Qt: the rewrites themselves live in ``tfstudio.graph.switches`` and ``.placement``."""
from __future__ import annotations

from ..graph import Graph
from ..graph.placement import identify_placement, residual_structure, rewrite_placement
from ..graph.switches import set_attention_kind, set_ffn_kind, set_positional_scheme

# value -> button label, in the order the buttons appear
ATTENTION_KINDS = {"mha": "MHA", "gqa": "GQA", "mqa": "MQA"}
FFN_KINDS = {"ffn": "FFN", "moe": "MoE"}
PLACEMENTS = {"pre": "Pre", "post": "Post", "post-in-residual": "In res", "sandwich": "Both"}
POSITION_SCHEMES = {"sinusoidal": "Sinusoidal", "learned": "Learned", "rope": "RoPE",
                    "alibi": "ALiBi", "none": "None"}


def _walk(graph: Graph, *types: str):
    return [node for _, node in graph.walk() if node.type in types]


def attention_kind(layer: Graph) -> str | None:
    """"mha", "gqa" or "mqa" when every attention block agrees, "mixed" when not, None when
    the layer has no attention."""
    blocks = _walk(layer, "attention", "cross_attention")
    if not blocks:
        return None
    kinds = set()
    for node in blocks:
        heads, kv = int(node.param("heads")), int(node.param("kv_heads"))
        kinds.add("mha" if kv == heads else "mqa" if kv == 1 else "gqa")
    return kinds.pop() if len(kinds) == 1 else "mixed"


def ffn_kind(layer: Graph) -> str | None:
    kinds = {"moe" if n.type == "moe" else "ffn" for n in _walk(layer, "feed_forward", "moe")}
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else "mixed"


def placement(layer: Graph) -> str | None:
    """The layer's norm placement ("mixed"/"none" select no button), None without residuals."""
    structure = residual_structure(layer)
    if structure is None or not structure.sublayers:
        return None
    return identify_placement(layer)


def positional_scheme(root: Graph) -> str:
    """How the whole model encodes positions: in attention (rope, alibi) or added (sinusoidal,
    learned); "none" when it does neither."""
    for node in _walk(root, "attention"):
        if node.param("position") != "none":
            return node.param("position")
    for node in _walk(root, "positional_encoding"):
        if node.param("scheme") != "none":
            return node.param("scheme")
    return "none"


def rewrite(layer: Graph, key: str, choice: str) -> Graph:
    """The layer with switch ``key`` ("attention", "ffn", "placement") set to ``choice``."""
    if key == "attention":
        return set_attention_kind(layer, choice)
    if key == "ffn":
        return set_ffn_kind(layer, choice)
    if key == "placement":
        return rewrite_placement(layer, choice)
    raise ValueError(f"unknown switch '{key}'; use attention, ffn or placement")


def with_positional_scheme(root: Graph, scheme: str) -> Graph:
    return set_positional_scheme(root, scheme)
