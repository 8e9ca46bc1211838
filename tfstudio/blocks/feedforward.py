"""Position-wise feed-forward networks and the mixture of experts."""
from ..graph import block_types as bt
from ._common import (ACTIVATIONS, dropout_param, ffn_activations, ffn_matmul_weights,
                      ffn_params, same_as_input, width, x_in, y_out)
from ..graph.schema import BlockSpec, ParamSpec, Params, Recipe, Shapes, WidthFn, register

ACTIVATION = ParamSpec(
    "activation", "choice", "gelu",
    "relu/gelu/gelu_tanh/silu: Linear(d, d_ff) -> act -> Linear(d_ff, d). glu/geglu/swiglu: gated, "
    "act(x W) * (x V) -> Linear(d_ff, d), with a sigmoid, GELU or SiLU gate; SwiGLU is the "
    "LLaMA/Qwen default.", choices=ACTIVATIONS)
D_FF = ParamSpec("d_ff", "int", 512, "Width of the inner layer (classically 4 x d_model).",
                 minimum=1, label="d ff")
FFN_BIAS = ParamSpec("bias", "bool", True, "Add biases to the linear layers.")


def _ffn_args(params: Params, width: WidthFn) -> dict:
    return {"d_model": width(), **{k: params[k] for k in ("d_ff", "activation", "bias",
                                                          "dropout")}}


# how the chosen experts' outputs are weighted: "auto" (a block that never chose, as every
# graph saved before the choice existed) is the router's probability for top-1, the only
# weighting whose router the loss trains there, and renormalised over the chosen k otherwise
WEIGHTINGS = ("auto", "renormalised", "probability")
WEIGHTING_NAMES = {"renormalised": "Mixtral", "probability": "Switch"}


def moe_weighting(params: Params) -> str:
    """The weighting a mixture computes with: "renormalised" or "probability"."""
    if params.weighting != "auto":
        return params.weighting
    return "probability" if params.top_k == 1 else "renormalised"


def _moe_args(params: Params, width: WidthFn) -> dict:
    keys = ("experts", "top_k", "d_ff", "activation", "bias", "shared_expert", "aux_loss_weight")
    return {"d_model": width(), **{k: params[k] for k in keys},
            "weighting": moe_weighting(params)}


def _ffn_summary(node) -> str:
    p = node.typed_params()
    return f"{p.activation} · d_ff {p.d_ff}"


def _moe_summary(node) -> str:
    p = node.typed_params()
    return f"{p.experts}x top-{p.top_k} {WEIGHTING_NAMES[moe_weighting(p)]} · {p.activation}"


def _ffn_count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    return ffn_params(d, params.d_ff, params.activation, params.bias) if d else 0


def _ffn_flops(params: Params, shapes: Shapes, context: int) -> float:
    d = width(shapes.get("x"))
    return 2.0 * ffn_matmul_weights(d, params.d_ff, params.activation) if d else 0.0


def _ffn_activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    d = width(shapes.get("x"))
    return ffn_activations(d, params.d_ff, params.activation) if d else 0


FEED_FORWARD = register(BlockSpec(
    type=bt.FEED_FORWARD, family="feedforward", title="Feed-forward",
    description="The same two-layer network applied to every position independently; most of "
                "a transformer's parameters live here.",
    params=(D_FF, ACTIVATION, FFN_BIAS, dropout_param()),
    inputs=(x_in(),),
    outputs=(y_out(),),
    infer=same_as_input(),
    count_params=_ffn_count,
    flops=_ffn_flops,
    activations=_ffn_activations,
    summary=_ffn_summary,
    keywords="ffn mlp dense relu gelu silu swish glu geglu swiglu activation gated",
    recipe=Recipe("FeedForward", _ffn_args,
                  defaults={"activation": "gelu", "bias": True, "dropout": 0.0}),
))


def _moe_count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    if not d:
        return 0
    one = ffn_params(d, params.d_ff, params.activation, params.bias)
    return d * params.experts + one * (params.experts + int(params.shared_expert))


def _used_experts(params: Params) -> int:
    return min(params.top_k, params.experts) + int(params.shared_expert)


def _moe_flops(params: Params, shapes: Shapes, context: int) -> float:
    """The router's scores, then only the experts a token is sent to (top_k, plus the shared
    one): the parameters grow with E, the compute per token does not."""
    d = width(shapes.get("x"))
    if not d:
        return 0.0
    one = ffn_matmul_weights(d, params.d_ff, params.activation)
    return 2.0 * (d * params.experts + _used_experts(params) * one)


def _moe_activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    d = width(shapes.get("x"))
    if not d:
        return 0
    # the router's input and scores, then each chosen expert's own copy of its tokens
    one = ffn_activations(d, params.d_ff, params.activation)
    return d + params.experts + _used_experts(params) * one


def _moe_check(node, shapes: Shapes, ctx) -> list:
    params = node.typed_params()
    if params.top_k > params.experts:
        return [ctx.error(
            "top_k_exceeds_experts",
            f"top k is {params.top_k} but there are only {params.experts} experts; a "
            "token cannot be routed to more experts than exist",
            f"lower top k to at most {params.experts}, or add experts",
            fix=("top_k", params.experts))]
    if params.top_k == 1 and moe_weighting(params) == "renormalised" and params.experts > 1:
        return [ctx.warning(
            "router_without_gradient",
            "top-1 with renormalised weights: the chosen expert's weight is p / p = 1 for "
            "every token, so the router gets no gradient from the loss (only the auxiliary "
            "loss moves it) and never learns which expert suits a token",
            "set weighting to probability (Switch Transformer: the output is scaled by the "
            "router's probability) or auto, or raise top k to 2")]
    return []


MOE = register(BlockSpec(
    type=bt.MOE, family="feedforward", title="Mixture of experts",
    description="A router scores E expert FFNs per token, keeps the top-k, and mixes their "
                "outputs by the router's softmax weights (renormalised over the chosen ones, "
                "or as they are). More parameters, the same compute per token as top_k FFNs.",
    params=(
        ParamSpec("experts", "int", 4, "Number of expert FFNs (E).", minimum=1),
        ParamSpec("top_k", "int", 2, "Experts used per token.", minimum=1, label="top k"),
        D_FF,
        ParamSpec("activation", "choice", "swiglu", ACTIVATION.description, choices=ACTIVATIONS),
        ParamSpec("bias", "bool", False, "Add biases to the experts' linear layers."),
        ParamSpec("shared_expert", "bool", False,
                  "Add one expert that every token always uses (DeepSeek-style)."),
        ParamSpec("aux_loss_weight", "float", 0.01,
                  "Weight of the load-balancing loss (E * sum_i f_i * P_i) added to the "
                  "training loss so experts get used evenly.", minimum=0.0),
        ParamSpec("weighting", "choice", "auto",
                  "How the chosen experts' outputs are weighted. renormalised: the router's "
                  "probabilities divided by their sum over the chosen k (Mixtral; with top-1 "
                  "every weight is 1, so the router gets no gradient from the loss). "
                  "probability: the router's probability itself (Switch Transformer). auto: "
                  "probability for top-1, renormalised otherwise.", choices=WEIGHTINGS),
    ),
    inputs=(x_in(),),
    outputs=(y_out(),),
    infer=same_as_input(),
    count_params=_moe_count,
    flops=_moe_flops,
    activations=_moe_activations,
    check=_moe_check,
    summary=_moe_summary,
    keywords="moe experts router mixture routing top-k sparse switch mixtral weighting",
    recipe=Recipe("MixtureOfExperts", _moe_args, defaults={
        "experts": 4, "top_k": 2, "d_ff": 512, "activation": "swiglu", "bias": False,
        "shared_expert": False, "aux_loss_weight": 0.01, "weighting": "renormalised"}),
))
