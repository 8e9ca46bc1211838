"""The fixed-window context of Bengio et al. (2003): the neural LM before recurrence and
attention, which sees exactly the last n tokens."""
from ..graph import block_types as bt
from ._common import same_as_input, width, x_in, y_out
from ..graph.schema import (STREAM_CACHE, BlockSpec, ParamSpec, Params, Recipe, Shapes, WidthFn,
                            register)

PADDINGS = ("zero", "learned")
WINDOW_ACTIVATIONS = ("tanh", "relu", "gelu", "none")


def _args(params: Params, width: WidthFn) -> dict:
    return {"d_model": width(), **{k: params[k] for k in ("window", "padding", "activation",
                                                          "bias")}}


def _count(params: Params, shapes: Shapes) -> int:
    """W is (n d) x d, b is d, and learned padding one d-vector per slot before the start."""
    d = width(shapes.get("x"))
    if not d:
        return 0
    n = params.window
    pad = (n - 1) * d if params.padding == "learned" else 0
    return n * d * d + (d if params.bias else 0) + pad


def _flops(params: Params, shapes: Shapes, context: int) -> float:
    """One (n d) x d matmul per token; the concatenation is a copy."""
    d = width(shapes.get("x"))
    return 2.0 * params.window * d * d if d else 0.0


def _activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    """Per token: the concatenated window (n d), the projection's output and the activation's."""
    d = width(shapes.get("x"))
    if not d:
        return 0
    return params.window * d + d * (1 if params.activation == "none" else 2)


def _summary(node) -> str:
    p = node.typed_params()
    return f"last {p.window} tokens · {p.activation}"


FIXED_WINDOW = register(BlockSpec(
    type=bt.FIXED_WINDOW, family="recurrent", title="Fixed window",
    description="Bengio et al. (2003)'s neural LM: concatenates the last n token vectors and "
                "projects them back to the model width. Position t sees tokens t-n+1..t and "
                "nothing older; compare it with recurrence and attention.",
    params=(
        ParamSpec("window", "int", 4, "How many tokens each position sees (itself included).",
                  minimum=1, maximum=64),
        ParamSpec("padding", "choice", "zero",
                  "What the slots before the first token hold: zeros, or one learned vector "
                  "per slot.", choices=PADDINGS),
        ParamSpec("activation", "choice", "tanh",
                  "Applied after the projection (Bengio used tanh).", choices=WINDOW_ACTIVATIONS),
        ParamSpec("bias", "bool", True, "Add a bias to the projection."),
    ),
    inputs=(x_in("token vectors"),),
    outputs=(y_out("the projected window at every position"),),
    infer=same_as_input(),
    count_params=_count,
    flops=_flops,
    activations=_activations,
    summary=_summary,
    keywords="bengio ngram n-gram window concat neural language model nplm",
    recipe=Recipe("FixedWindow", _args, cache=STREAM_CACHE, defaults={
        "window": 4, "padding": "zero", "activation": "tanh", "bias": True}),
))
