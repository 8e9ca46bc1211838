"""Self-attention (MHA / GQA / MQA, causal or not, windowed, RoPE or ALiBi) and cross-attention."""
from ._common import dropout_param, same_as_input, width, x_in, y_out
from ..graph.schema import MEMORY, BlockSpec, ParamSpec, PortSpec, register

POSITIONS = ("none", "rope", "alibi")

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
    hd = d // params["heads"]
    q, kv = params["heads"] * hd, params["kv_heads"] * hd
    n = d * q + 2 * d * kv + q * d
    if params["bias"]:
        n += q + 2 * kv + d
    return n


def _count(params, shapes):
    d = width(shapes.get("x"))
    return attention_params(params, d) if d and params["heads"] else 0


ATTENTION = register(BlockSpec(
    type="attention", family="attention", title="Self-attention",
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
                  "Linear RoPE scaling (position interpolation): positions are divided by this "
                  "factor, e.g. L_test / L_train to stretch a trained context.", minimum=1.0),
    ),
    inputs=(x_in(),),
    outputs=(y_out("attention output, projected back to d_model"),),
    infer=same_as_input(),
    count_params=_count,
))


def _cross_count(params, shapes):
    d = width(shapes.get("x"))
    return attention_params(params, d) if d and params["heads"] else 0


CROSS_ATTENTION = register(BlockSpec(
    type="cross_attention", family="attention", title="Cross-attention",
    description="Queries from the decoder stream attend over the encoder's output (memory): "
                "how an encoder-decoder passes the source sentence to the decoder.",
    params=(HEADS, KV_HEADS, BIAS, dropout_param()),
    inputs=(x_in("decoder stream (queries)"),
            PortSpec("memory", MEMORY, "encoder output (keys and values)")),
    outputs=(y_out(),),
    infer=same_as_input(),
    count_params=_cross_count,
))
