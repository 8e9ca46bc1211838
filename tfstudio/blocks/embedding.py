"""Token embedding: a lookup table from token id to a d_model-wide vector."""
from ..graph import block_types as bt
from ..graph.schema import (HIDDEN, IDS, BlockSpec, ParamSpec, Params, PortSpec, Recipe, Shape,
                            Shapes, WidthFn, register)


def _summary(node) -> str:
    p = node.typed_params()
    scaled = " · ×√d" if p.scale else ""
    return f"{p.vocab_size} tokens → {p.d_model} wide{scaled}"


def _args(params: Params, width: WidthFn) -> dict:
    return {k: params[k] for k in ("vocab_size", "d_model", "scale")}


def _infer(params: Params, shapes: Shapes) -> dict[str, Shape]:
    ids = shapes.get("ids")
    return {"y": (ids[0], ids[1], params.d_model)} if ids else {}


TOKEN_EMBEDDING = register(BlockSpec(
    type=bt.TOKEN_EMBEDDING, family="embedding", title="Token embedding",
    description="Looks up one learned vector per token id. Its matrix (vocab x d_model) is "
                "often shared with the output head (weight tying).",
    params=(
        ParamSpec("vocab_size", "int", 256,
                  "Number of distinct tokens; follows the tokenizer when training.", minimum=2),
        ParamSpec("d_model", "int", 128,
                  "Width of the hidden stream every later block works on.", minimum=1),
        ParamSpec("scale", "bool", False,
                  "Multiply embeddings by sqrt(d_model), as the original Transformer did."),
    ),
    inputs=(PortSpec("ids", IDS, "token ids"),),
    outputs=(PortSpec("y", HIDDEN, "one vector per token [B, T, d_model]"),),
    infer=_infer,
    count_params=lambda p, s: p.vocab_size * p.d_model,
    summary=_summary,
    keywords="embed wte vocab lookup",
    recipe=Recipe("TokenEmbedding", _args, defaults={"scale": False}),
))
