"""Recurrent sequence mixers, the baselines transformers replaced."""
from ..graph import block_types as bt
from ._common import dropout_param, width, x_in, y_out
from ..graph.schema import (STREAM_CACHE, BlockSpec, ParamSpec, Params, Recipe, Shape, Shapes,
                            WidthFn, register)

CELLS = ("rnn", "lstm", "gru")
GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def _summary(node) -> str:
    p = node.typed_params()
    return f"{p.cell} · {p.hidden_size} wide" + (
        f" · {p.layers} layers" if p.layers > 1 else "")


def _args(params: Params, width: WidthFn) -> dict:
    return {"d_model": width(), **{k: params[k] for k in ("cell", "hidden_size", "layers",
                                                          "dropout")}}


def _infer(params: Params, shapes: Shapes) -> dict[str, Shape]:
    x = shapes.get("x")
    return {"y": (x[0], x[1], params.hidden_size)} if x else {}


def _count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    if not d:
        return 0
    return _per_layer_sum(params, d, lambda inp, h, g: g * (inp * h + h * h + 2 * h))


def _per_layer_sum(params: Params, d: int, per_layer) -> float:
    """Sum ``per_layer(input width, hidden, gates)`` over the stacked layers: the first reads
    the d-wide input, every later one the hidden state."""
    h, g, n = params.hidden_size, GATES[params.cell], params.layers
    return per_layer(d, h, g) + (n - 1) * per_layer(h, h, g)


def _flops(params: Params, shapes: Shapes, context: int) -> float:
    """Per token and layer, every gate multiplies the input and the previous state."""
    d = width(shapes.get("x"))
    if not d:
        return 0.0
    return _per_layer_sum(params, d, lambda inp, h, g: 2.0 * g * (inp * h + h * h))


def _activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    """Per layer: its input, the gate pre-activations and the cell's state and output."""
    d = width(shapes.get("x"))
    if not d:
        return 0
    return _per_layer_sum(params, d, lambda inp, h, g: inp + g * h + 2 * h)


RNN = register(BlockSpec(
    type=bt.RNN, family="recurrent", title="Recurrent mixer",
    description="Reads the sequence left to right, carrying a hidden state (plain RNN, LSTM or "
                "GRU). Causal by construction; compare it with attention on the same corpus.",
    params=(
        ParamSpec("cell", "choice", "lstm", "rnn (tanh), lstm or gru.", choices=CELLS),
        ParamSpec("hidden_size", "int", 128, "Width of the recurrent state and of the output.",
                  minimum=1, label="hidden size"),
        ParamSpec("layers", "int", 1, "Stacked recurrent layers.", minimum=1),
        dropout_param(),
    ),
    inputs=(x_in(),),
    outputs=(y_out("the hidden state at every position"),),
    infer=_infer,
    count_params=_count,
    flops=_flops,
    activations=_activations,
    summary=_summary,
    keywords="lstm gru recurrent",
    recipe=Recipe("Recurrent", _args, cache=STREAM_CACHE, defaults={
        "cell": "lstm", "hidden_size": 128, "layers": 1, "dropout": 0.0}),
))
