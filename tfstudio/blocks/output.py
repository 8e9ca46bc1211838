"""Output heads: hidden stream to vocabulary logits."""
from ._common import width, x_in
from ..graph.schema import LOGITS, BlockSpec, ParamSpec, PortSpec, register

VOCAB = ParamSpec("vocab_size", "int", 256,
                  "Number of output classes; must equal the embedding's vocabulary.", minimum=2)
TIE = ParamSpec("tie", "bool", True,
                "Reuse the token embedding matrix as the output projection (weight tying), "
                "saving vocab x d_model parameters.")


def _infer(params, shapes):
    x = shapes.get("x")
    return {"logits": (x[0], x[1], params["vocab_size"])} if x else {}


def _lm_count(params, shapes):
    d = width(shapes.get("x"))
    if not d:
        return 0
    return (0 if params["tie"] else params["vocab_size"] * d) + (
        params["vocab_size"] if params["bias"] else 0)


def _mlm_count(params, shapes):
    d = width(shapes.get("x"))
    if not d:
        return 0
    transform = d * d + d + 2 * d if params["transform"] else 0
    return transform + _lm_count(params, shapes)


_LOGITS_OUT = (PortSpec("logits", LOGITS, "unnormalised scores over the vocabulary [B, T, V]"),)
_BIAS = ParamSpec("bias", "bool", False, "Add a learned bias per vocabulary entry.")

LM_HEAD = register(BlockSpec(
    type="lm_head", family="output", title="LM head",
    description="Projects each position to next-token logits; trained with the causal "
                "language-modelling loss (predict token t+1 from tokens <= t).",
    params=(VOCAB, TIE, _BIAS),
    inputs=(x_in("final hidden stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_lm_count,
))

MLM_HEAD = register(BlockSpec(
    type="mlm_head", family="output", title="Masked-LM head",
    description="Predicts the original token at masked positions (BERT's objective: 15% of "
                "tokens chosen; 80% replaced by [MASK], 10% random, 10% kept).",
    params=(VOCAB, TIE,
            ParamSpec("bias", "bool", True, _BIAS.description),
            ParamSpec("transform", "bool", True,
                      "Dense + GELU + LayerNorm before the projection, as in BERT.")),
    inputs=(x_in("final hidden stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_mlm_count,
))

SEQ2SEQ_HEAD = register(BlockSpec(
    type="seq2seq_head", family="output", title="Seq2seq decoder head",
    description="The decoder's output projection in an encoder-decoder; trained with teacher "
                "forcing (predict target token t+1 given the source and target tokens <= t).",
    params=(VOCAB, TIE, _BIAS),
    inputs=(x_in("final decoder stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_lm_count,
))

HEAD_TYPES = ("lm_head", "mlm_head", "seq2seq_head")
