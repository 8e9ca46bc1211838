"""Self-attention (MHA / GQA / MQA, causal or not, windowed, RoPE or ALiBi) and cross-attention."""
from ..graph import block_types as bt, kinds
from ._common import (attended_keys, divisors_near, dropout_param, nearest_divisor,
                      same_as_input, width, x_in, y_out)
from ..graph.schema import (MEMORY, MEMORY_CACHE, STREAM_CACHE, BlockSpec, ParamSpec, Params,
                            PortSpec, Recipe, WidthFn, register)

POSITIONS = (kinds.NO_POSITIONS, *kinds.IN_ATTENTION_SCHEMES)
ROPE_SCALING_TYPES = ("linear", "ntk")

HEADS = ParamSpec("heads", "int", 4,
                  "Number of query heads. Each head attends on its own slice of d_model "
                  "(head size = d_model / heads).", minimum=1)
KV_HEADS = ParamSpec("kv_heads", "int", 4,
                     "Number of key/value heads. Equal to heads: multi-head (MHA). 1: multi-query "
                     "(MQA). In between: grouped-query (GQA), each K/V head shared by "
                     "heads / kv_heads query heads, shrinking the KV cache.", minimum=1,
                     label="kv heads")
BIAS = ParamSpec("bias", "bool", True, "Add a bias to the Q, K, V and output projections.")


def attention_params(params, d: int) -> int:
    hd = d // params.heads
    q, kv = params.heads * hd, params.kv_heads * hd
    n = d * q + 2 * d * kv + q * d
    if params.bias:
        n += q + 2 * kv + d
    return n


def _count(params, shapes):
    d = width(shapes.get("x"))
    return attention_params(params, d) if d and params.heads else 0


def _widths(params, d: int) -> tuple[int, int]:
    """(query width, key/value width): heads x head size and kv_heads x head size."""
    hd = d // params.heads
    return params.heads * hd, params.kv_heads * hd


def _flops(params, shapes, context):
    """Q, K, V and output projections, then QK^T and attention x V over the keys each query
    sees on average (half the context when causal; at most the window)."""
    d = width(shapes.get("x"))
    if not d:
        return 0.0
    q, kv = _widths(params, d)
    keys = attended_keys(context, params.causal, params.window)
    return 2.0 * (d * q + 2 * d * kv + q * d) + 4.0 * q * keys


def _kv_bytes(params, shapes, bytes_per_value):
    """One key and one value vector per K/V head, kept for every generated token. Only causal
    attention generates token by token; a bidirectional encoder keeps no cache. A sliding
    window caps how many tokens are kept, not the size of each."""
    d = width(shapes.get("x"))
    if not d or not params.causal:
        return 0
    return 2 * _widths(params, d)[1] * bytes_per_value


def _activations(params, shapes, seq_len):
    """Input, q, k, v and the attention output (fused attention keeps no T x T matrix, only
    one softmax normaliser per head). ALiBi's float bias sends torch's attention down a path
    that keeps each head's row of softmax weights: measured on CPU, the saved tensors grew by
    about heads x T values per token (bench/bench_preflight_accuracy.py)."""
    d = width(shapes.get("x"))
    if not d:
        return 0
    q, kv = _widths(params, d)
    weights = params.heads * seq_len if params.position == "alibi" else 0
    return d + 2 * q + 2 * kv + params.heads + weights


def _check_heads(ctx, d: int | None, params) -> list:
    out = []
    heads, kv = params.heads, params.kv_heads
    if d and (d % heads or heads > d):
        near = divisors_near(d, heads)
        out.append(ctx.error(
            "heads_divide_d_model",
            f"d_model {d} does not split evenly into {heads} heads ({d} / {heads} = "
            f"{d / heads:.2f}); every head needs the same whole number of dimensions",
            f"set heads to a divisor of {d}, e.g. {' or '.join(map(str, near))}",
            fix=("heads", nearest_divisor(d, heads))))
    if heads % kv or kv > heads:
        out.append(ctx.error(
            "kv_heads_divide_heads",
            f"kv heads ({kv}) must divide heads ({heads}) so each K/V head serves the same "
            "number of query heads",
            f"set kv heads to a divisor of {heads}: 1 (MQA), {heads} (MHA) or one in between "
            f"(GQA), e.g. {' or '.join(map(str, divisors_near(heads, heads / 2)))}",
            fix=("kv_heads", nearest_divisor(heads, kv))))
    return out


def _check(node, shapes, ctx):
    params = node.typed_params()
    d = width(shapes.get("x"))
    out = _check_heads(ctx, d, params)
    if params.position == "rope" and d and d % params.heads == 0:
        hd = d // params.heads
        if hd % 2:
            out.append(ctx.error(
                "rope_odd_head_dim",
                f"RoPE rotates (even, odd) pairs of each head's dimensions, but the head size "
                f"is {d} / {params.heads} = {hd}, an odd number",
                "choose heads so that d_model / heads is even, or use ALiBi or absolute "
                "positions instead"))
        elif hd == 2 and params.rope_scaling_type == "ntk":
            out.append(ctx.error(
                "ntk_head_dim_too_small",
                "NTK-aware RoPE scaling raises the base to the power d_head / (d_head - 2), "
                "which a head size of 2 cannot take",
                "use fewer heads (a larger head size) or linear RoPE scaling"))
    return out


def _heads_label(params: Params) -> str:
    kv = f" / {params.kv_heads} kv" if params.kv_heads != params.heads else ""
    return f"{params.heads} heads{kv}"


def _summary(node) -> str:
    """'4 heads / 2 kv · causal · rope · window 64'"""
    p = node.typed_params()
    parts = [_heads_label(p), "causal" if p.causal else "bidirectional"]
    if p.position != "none":
        parts.append(p.position)
    if p.window:
        parts.append(f"window {p.window}")
    return " · ".join(parts)


def _head_args(params: Params, width: WidthFn) -> dict:
    """d_model and heads; kv_heads only when it differs (the module's default is heads)."""
    args = {"d_model": width(), "heads": params.heads}
    if params.kv_heads != params.heads:
        args["kv_heads"] = params.kv_heads
    return args


def _args(params: Params, width: WidthFn) -> dict:
    keys = ["causal", "window", "bias", "dropout", "position"]
    if params.position == "rope":
        keys += ["rope_base", "rope_scaling", "rope_scaling_type"]
    return {**_head_args(params, width), **{k: params[k] for k in keys}}


ATTENTION = register(BlockSpec(
    type=bt.ATTENTION, family="attention", title="Self-attention",
    description="softmax(Q K^T / sqrt(d_head)) V over the sequence itself, split into heads. "
                "Causal for decoders (a token sees only the past), bidirectional for encoders.",
    params=(
        HEADS, KV_HEADS,
        ParamSpec("causal", "bool", True,
                  "Mask future tokens (the upper triangle of the score matrix). Needed by any "
                  "model that predicts the next token."),
        ParamSpec("window", "int", 0,
                  "Sliding window: each token attends only to the last `window` tokens "
                  "(Mistral, GPT-3's banded layers). 0 attends to everything.", minimum=0),
        BIAS,
        dropout_param(),
        ParamSpec("position", "choice", "none",
                  "Position handling inside attention. rope: rotate q and k by position so "
                  "scores depend on the offset m-n. alibi: add -slope*|i-j| to the scores, one "
                  "slope per head. none: rely on absolute encodings.", choices=POSITIONS),
        ParamSpec("rope_base", "float", 10000.0,
                  "RoPE frequency base; pair k turns at base^(-2k/d_head) per position.",
                  minimum=1.0),
        ParamSpec("rope_scaling", "float", 1.0,
                  "RoPE context scaling factor s, e.g. L_test / L_train to stretch a trained "
                  "context; how it is applied is rope_scaling_type.", minimum=1.0),
        ParamSpec("rope_scaling_type", "choice", "linear",
                  "linear (position interpolation): positions are divided by s. ntk "
                  "(NTK-aware): positions stay whole and the base grows to "
                  "base * s^(d_head / (d_head - 2)), stretching the slow pairs most.",
                  choices=ROPE_SCALING_TYPES, label="rope scaling type"),
    ),
    inputs=(x_in(),),
    outputs=(y_out("attention output, projected back to d_model"),),
    infer=same_as_input(),
    count_params=_count,
    flops=_flops,
    kv_bytes=_kv_bytes,
    activations=_activations,
    check=_check,
    summary=_summary,
    keywords=("mha gqa mqa kv heads grouped query multi-query self attn causal bidirectional "
              "rope rotary alibi sliding window local"),
    recipe=Recipe("SelfAttention", _args, cache=STREAM_CACHE, defaults={
        "heads": 4, "causal": True, "window": 0, "bias": True, "dropout": 0.0,
        "position": "none", "rope_base": 10000.0, "rope_scaling": 1.0,
        "rope_scaling_type": "linear"}),
))


def _cross_count(params, shapes):
    d = width(shapes.get("x"))
    return attention_params(params, d) if d and params.heads else 0


def _cross_flops(params, shapes, context):
    """Per target token, taking the source as long as the context: K and V of the memory are
    projected once per source token, and every query sees every source token."""
    d = width(shapes.get("x"))
    if not d:
        return 0.0
    q, kv = _widths(params, d)
    return 2.0 * (d * q + 2 * d * kv + q * d) + 4.0 * q * context


def _cross_activations(params, shapes, seq_len):
    d = width(shapes.get("x"))
    if not d:
        return 0
    q, kv = _widths(params, d)
    return 2 * d + 2 * q + 2 * kv + params.heads


def _cross_check(node, shapes, ctx):
    params = node.typed_params()
    d, m = width(shapes.get("x")), width(shapes.get("memory"))
    out = _check_heads(ctx, d, params)
    if d and m and d != m:
        out.append(ctx.error(
            "cross_memory_width",
            f"the memory wired into '{node.id}' is {m} wide but its queries are {d} wide; "
            "keys and values are projected with the query's width",
            "give the encoder the same d_model as the decoder"))
    return out


def _cross_args(params: Params, width: WidthFn) -> dict:
    args = {**_head_args(params, width), "bias": params.bias, "dropout": params.dropout}
    if width("memory") != width():
        args["memory_dim"] = width("memory")
    return args


CROSS_ATTENTION = register(BlockSpec(
    type=bt.CROSS_ATTENTION, family="attention", title="Cross-attention",
    description="Queries from the decoder stream attend over the encoder's output (memory): "
                "how an encoder-decoder passes the source sentence to the decoder.",
    params=(HEADS, KV_HEADS, BIAS, dropout_param()),
    inputs=(x_in("decoder stream (queries)"),
            PortSpec("memory", MEMORY, "encoder output (keys and values)")),
    outputs=(y_out(),),
    infer=same_as_input(),
    count_params=_cross_count,
    flops=_cross_flops,
    activations=_cross_activations,
    check=_cross_check,
    summary=lambda node: _heads_label(node.typed_params()) + " · reads memory",
    keywords="cross xattn attn encoder decoder memory",
    recipe=Recipe("CrossAttention", _cross_args, cache=MEMORY_CACHE,
                  defaults={"heads": 4, "bias": True, "dropout": 0.0}),
))
