"""Absolute positional encodings added to the token embeddings."""
from ..graph import block_types as bt, kinds
from ._common import width, same_as_input, dropout_param, x_in, y_out
from ..graph.schema import (STREAM_CACHE, BlockSpec, ParamSpec, Params, Recipe, Shapes,
                            WidthFn, register)

SCHEMES = (kinds.NO_POSITIONS, *kinds.ABSOLUTE_SCHEMES)


def _summary(node) -> str:
    p = node.typed_params()
    return p.scheme + (f" · {p.max_len} positions" if p.scheme == "learned" else "")


def _args(params: Params, width: WidthFn) -> dict:
    return {"d_model": width(), **{k: params[k] for k in ("scheme", "max_len", "dropout")}}


def _count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    return params.max_len * d if params.scheme == "learned" and d else 0


def _check(node, shapes: Shapes, ctx) -> list:
    params = node.typed_params()
    length = ctx.context_length
    if params.scheme == "learned" and length and params.max_len < length:
        return [ctx.error(
            "learned_positions_too_short",
            f"the learned position table has {params.max_len} rows but the model trains on "
            f"{length} tokens; positions past {params.max_len} have no vector",
            f"raise max_len to at least {length}, lower the context length, or use sinusoidal "
            "positions, RoPE or ALiBi, which have no length limit", fix=("max_len", length))]
    return []


POSITIONAL_ENCODING = register(BlockSpec(
    type=bt.POSITIONAL_ENCODING, family="position", title="Positional encoding",
    description="Adds position information to each token vector (element-wise, not "
                "concatenated). Attention alone cannot tell token order apart.",
    params=(
        ParamSpec("scheme", "choice", "sinusoidal",
                  "sinusoidal: fixed sin/cos waves of geometric wavelengths, no parameters, any "
                  "length. learned: a trained max_len x d_model table (BERT, GPT-2) that cannot "
                  "go past max_len. none: no absolute positions (use RoPE or ALiBi inside "
                  "attention instead).", choices=SCHEMES),
        ParamSpec("max_len", "int", 1024,
                  "Longest sequence the learned table covers.", minimum=1),
        dropout_param(),
    ),
    inputs=(x_in("token embeddings"),),
    outputs=(y_out("embeddings plus positions"),),
    infer=same_as_input(),
    count_params=_count,
    check=_check,
    summary=_summary,
    keywords="pe sinusoidal learned absolute position positional encoding",
    recipe=Recipe("PositionalEncoding", _args, cache=STREAM_CACHE,
                  defaults={"scheme": "sinusoidal", "max_len": 1024, "dropout": 0.0}),
))
