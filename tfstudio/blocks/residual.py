"""The residual stream's joints (Add) and dropout."""
from typing import Sequence

from ..graph import block_types as bt
from ._common import dropout_param, same_as_input, x_in, y_out
from ..graph.schema import (HIDDEN, BlockSpec, ParamSpec, Params, PortSpec, Recipe, Shape, Shapes,
                            register)


def _sum(params: Params, inputs: Sequence[str]) -> str:
    return " + ".join(inputs)


def _dropout(params: Params, inputs: Sequence[str]) -> str:
    """Written into the forward like nanoGPT's ``F.dropout``; p = 0 writes nothing at all."""
    (x,) = inputs
    if not params.dropout:
        return x
    return f"F.dropout({x}, p={params.dropout!r}, training=self.training)"


def add_inputs(params: Params) -> list[PortSpec]:
    return [PortSpec(f"in{i + 1}", HIDDEN, "a stream to sum") for i in range(params.n_inputs)]


def _add_infer(params: Params, shapes: Shapes) -> dict[str, Shape]:
    for port in add_inputs(params):
        if shapes.get(port.name):
            return {"y": shapes[port.name]}
    return {}


def _add_check(node, shapes: Shapes, ctx) -> list:
    given = {port: shape for port, shape in shapes.items() if shape}
    if len(set(given.values())) > 1:
        listed = ", ".join(f"{port} is {tuple(shape)}" for port, shape in given.items())
        return [ctx.error(
            "width_mismatch",
            f"Add sums element by element, so its inputs must have the same shape, but {listed}",
            "make both branches end at the same width (the residual stream's d_model)")]
    return []


ADD = register(BlockSpec(
    type=bt.ADD, family="residual", title="Add",
    description="Element-wise sum of its inputs: the residual connection y = x + F(x), which "
                "keeps an identity path for gradients through deep stacks.",
    params=(ParamSpec("n_inputs", "int", 2, "How many streams to add.", minimum=2, maximum=8,
                      label="inputs"),),
    inputs=add_inputs,
    outputs=(y_out("the sum"),),
    infer=_add_infer,
    count_params=lambda p, s: 0,
    check=_add_check,
    summary=lambda node: "residual sum",
    keywords="residual skip sum plus",
    recipe=Recipe(inline=_sum),
))


def _dropout_activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    shape = shapes.get("x")
    return shape[-1] if params.dropout > 0 and shape and isinstance(shape[-1], int) else 0


DROPOUT = register(BlockSpec(
    type=bt.DROPOUT, family="residual", title="Dropout",
    description="Zeroes a random fraction of activations while training (scaling the rest), "
                "a regulariser; does nothing at inference.",
    params=(dropout_param(0.1),),
    inputs=(x_in(),),
    outputs=(y_out(),),
    infer=same_as_input(),
    count_params=lambda p, s: 0,
    activations=_dropout_activations,
    summary=lambda node: f"p = {node.typed_params().dropout:g}",
    keywords="regularise drop",
    recipe=Recipe(inline=_dropout),
))
