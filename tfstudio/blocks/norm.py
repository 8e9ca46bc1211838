"""Normalisation: LayerNorm and RMSNorm."""
from ..graph import block_types as bt, kinds
from ._common import same_as_input, width, x_in, y_out
from ..graph.schema import BlockSpec, ParamSpec, Params, Recipe, Shapes, WidthFn, register

KINDS = kinds.NORM_KINDS


def _args(params: Params, width: WidthFn) -> dict:
    args = {"d_model": width(), "kind": params.kind, "eps": params.eps}
    if params.kind == "layernorm":  # RMSNorm has no shift to learn
        args["bias"] = params.bias
    return args


def _count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    if not d:
        return 0
    return d * (2 if params.kind == "layernorm" and params.bias else 1)


NORM = register(BlockSpec(
    type=bt.NORM, family="norm", title="Norm",
    description="Rescales each token vector. LayerNorm: (x - mean) / std * gamma + beta. "
                "RMSNorm: x / RMS(x) * gamma (cheaper, no mean). Where it sits relative to the "
                "residual Add is the norm placement (pre, post, sandwich).",
    params=(
        ParamSpec("kind", "choice", "layernorm", "layernorm or rmsnorm.", choices=KINDS),
        ParamSpec("eps", "float", 1e-5, "Small constant added to the variance for stability.",
                  minimum=0.0),
        ParamSpec("bias", "bool", True, "LayerNorm only: learn a shift beta as well as gamma."),
    ),
    inputs=(x_in(),),
    outputs=(y_out("normalised stream"),),
    infer=same_as_input(),
    count_params=_count,
    activations=lambda p, s, seq_len: width(s.get("x")) or 0,  # the input, for the gradient
    summary=lambda node: node.typed_params().kind,
    keywords=("layernorm rmsnorm ln normalization normalisation pre-norm post-norm prenorm "
              "postnorm sandwich"),
    recipe=Recipe("Norm", _args, defaults={"kind": "layernorm", "eps": 1e-5, "bias": True}),
))
