"""Token inputs: where ids enter the model."""
from ..graph import block_types as bt
from ..graph.schema import IDS, BlockSpec, ParamSpec, Params, PortSpec, Shape, Shapes, register

ROLES = ("tokens", "source", "target")


def _infer(params: Params, shapes: Shapes) -> dict[str, Shape]:
    return {"ids": ("B", "S" if params.role == "source" else "T")}


TOKEN_INPUT = register(BlockSpec(
    type=bt.TOKEN_INPUT, family="input", title="Token input",
    description="Integer token ids enter the model here, one row per sequence in the batch.",
    params=(
        ParamSpec("role", "choice", "tokens",
                  "tokens: the only input of a decoder or encoder. source/target: the two "
                  "inputs of an encoder-decoder (the encoder reads source, the decoder target).",
                  choices=ROLES),
    ),
    outputs=(PortSpec("ids", IDS, "token ids [B, T]"),),
    infer=_infer,
    count_params=lambda p, s: 0,
    summary=lambda node: f"role: {node.typed_params().role}",
))
