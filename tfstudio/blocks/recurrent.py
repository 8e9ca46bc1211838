"""Recurrent sequence mixers, the baselines transformers replaced."""
from ._common import dropout_param, width, x_in, y_out
from ..graph.schema import BlockSpec, ParamSpec, register

CELLS = ("rnn", "lstm", "gru")
GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def _infer(params, shapes):
    x = shapes.get("x")
    return {"y": (x[0], x[1], params["hidden_size"])} if x else {}


def _count(params, shapes):
    d = width(shapes.get("x"))
    if not d:
        return 0
    h, g = params["hidden_size"], GATES[params["cell"]]
    total = 0
    for layer in range(params["layers"]):
        inp = d if layer == 0 else h
        total += g * (inp * h + h * h + 2 * h)
    return total


RNN = register(BlockSpec(
    type="rnn", family="recurrent", title="Recurrent mixer",
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
))
