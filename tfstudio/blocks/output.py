"""Output heads: hidden stream to vocabulary logits."""
from ..graph import block_types as bt
from ._common import width, x_in
from ..graph.schema import (LOGITS, BlockSpec, ParamSpec, Params, PortSpec, Recipe, Shape, Shapes,
                            WidthFn, register)
from ..graph.streams import main_embedding, stream_blocks

VOCAB = ParamSpec("vocab_size", "int", 256,
                  "Number of output classes; must equal the embedding's vocabulary.", minimum=2)
TIE = ParamSpec("tie", "bool", True,
                "Reuse the token embedding matrix as the output projection (weight tying), "
                "saving vocab x d_model parameters.")


def _summary(node) -> str:
    p = node.typed_params()
    return f"{p.vocab_size} classes" + (" · tied" if p.tie else "")


def _lm_args(params: Params, width: WidthFn) -> dict:
    return {"d_model": width(), "vocab_size": params.vocab_size, "bias": params.bias}


def _mlm_args(params: Params, width: WidthFn) -> dict:
    return {**_lm_args(params, width), "transform": params.transform, "eps": params.eps}


_LM_RECIPE = Recipe("LMHead", _lm_args, defaults={"bias": False})


def _infer(params: Params, shapes: Shapes) -> dict[str, Shape]:
    x = shapes.get("x")
    return {"logits": (x[0], x[1], params.vocab_size)} if x else {}


def _lm_count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    if not d:
        return 0
    return (0 if params.tie else params.vocab_size * d) + (
        params.vocab_size if params.bias else 0)


def _mlm_count(params: Params, shapes: Shapes) -> int:
    d = width(shapes.get("x"))
    if not d:
        return 0
    transform = d * d + d + 2 * d if params.transform else 0
    return transform + _lm_count(params, shapes)


def _lm_flops(params: Params, shapes: Shapes, context: int) -> float:
    d = width(shapes.get("x"))
    return 2.0 * d * params.vocab_size if d else 0.0


def _mlm_flops(params: Params, shapes: Shapes, context: int) -> float:
    d = width(shapes.get("x"))
    return _lm_flops(params, shapes, context) + (2.0 * d * d if d and params.transform else 0)


def _lm_activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    """The input, the logits and their log-softmax for the cross-entropy: per token,
    usually the largest single tensor of a small model."""
    d = width(shapes.get("x"))
    return d + 2 * params.vocab_size if d else 0


def _mlm_activations(params: Params, shapes: Shapes, seq_len: int) -> float:
    d = width(shapes.get("x"))
    extra = 3 * d if d and params.transform else 0  # dense out, GELU out, LayerNorm in
    return _lm_activations(params, shapes, seq_len) + extra


def _check_embedding(node, shapes: Shapes, ctx) -> list:
    """Vocabulary and tying against the embedding at the start of this head's stream."""
    params, out = node.typed_params(), []
    emb_id = main_embedding(ctx.graph, node.id)
    if emb_id is None:
        if params.tie:
            out.append(ctx.error(
                "tie_without_embedding",
                f"'{node.id}' is tied to the token embedding, but no token embedding starts "
                "the stream that reaches it, so there is no matrix to share",
                "wire the head to a stream that starts at a Token embedding, or turn off tie"))
        return out
    emb = ctx.graph.node(emb_id).typed_params()
    if emb.vocab_size != params.vocab_size:
        out.append(ctx.error(
            "vocab_mismatch",
            f"the head predicts {params.vocab_size} tokens but the embedding '{emb_id}' "
            f"reads {emb.vocab_size}; the targets are the same token ids as the input",
            "set both vocab sizes to the tokenizer's vocabulary"))
    d = width(shapes.get("x"))
    if params.tie and d and d != emb.d_model:
        out.append(ctx.error(
            "tie_shape_mismatch",
            f"'{node.id}' is tied to '{emb_id}', whose matrix is {emb.vocab_size} x "
            f"{emb.d_model}, but the stream reaching the head is {d} wide",
            f"make the last block before the head output {emb.d_model} wide, or turn off "
            "tie"))
    return out


def _check_causal(node, shapes: Shapes, ctx) -> list:
    """A next-token head must not let a position see the token it is asked to predict."""
    return [ctx.error(
        "decoder_not_causal",
        f"'{node.id}' predicts the next token, but the attention '{block.id}' it reads is not "
        "causal: every position sees the token it must predict, so the model learns to copy "
        "and cannot generate",
        f"turn on 'causal' in '{block.id}'", node_id=block.id, inside=path,
        fix=("causal", True))
        for path, block in stream_blocks(ctx.graph, node.id)
        if block.type == bt.ATTENTION and not block.typed_params().causal]


def _check_bidirectional(node, shapes: Shapes, ctx) -> list:
    """A masked-LM head fills in blanks from both sides; causal attention hides the right."""
    return [ctx.warning(
        "encoder_causal",
        f"'{node.id}' predicts masked tokens from their context on both sides, but the "
        f"attention '{block.id}' is causal and only lets a position see what is left of it",
        f"turn off 'causal' in '{block.id}'", node_id=block.id, inside=path)
        for path, block in stream_blocks(ctx.graph, node.id)
        if block.type == bt.ATTENTION and block.typed_params().causal]


def _lm_check(node, shapes: Shapes, ctx) -> list:
    return _check_embedding(node, shapes, ctx) + _check_causal(node, shapes, ctx)


def _mlm_check(node, shapes: Shapes, ctx) -> list:
    return _check_embedding(node, shapes, ctx) + _check_bidirectional(node, shapes, ctx)


_LOGITS_OUT = (PortSpec("logits", LOGITS, "unnormalised scores over the vocabulary [B, T, V]"),)
_BIAS = ParamSpec("bias", "bool", False, "Add a learned bias per vocabulary entry.")

LM_HEAD = register(BlockSpec(
    type=bt.LM_HEAD, family="output", title="LM head",
    description="Projects each position to next-token logits; trained with the causal "
                "language-modelling loss (predict token t+1 from tokens <= t).",
    params=(VOCAB, TIE, _BIAS),
    inputs=(x_in("final hidden stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_lm_count,
    flops=_lm_flops,
    activations=_lm_activations,
    check=_lm_check,
    summary=_summary,
    keywords="logits output unembed",
    recipe=_LM_RECIPE,
))

MLM_HEAD = register(BlockSpec(
    type=bt.MLM_HEAD, family="output", title="Masked-LM head",
    description="Predicts the original token at masked positions (BERT's objective: 15% of "
                "tokens chosen; 80% replaced by [MASK], 10% random, 10% kept).",
    params=(VOCAB, TIE,
            ParamSpec("bias", "bool", True, _BIAS.description),
            ParamSpec("transform", "bool", True,
                      "Dense + GELU + LayerNorm before the projection, as in BERT."),
            ParamSpec("eps", "float", 1e-5, "The transform's LayerNorm epsilon (BERT: 1e-12).",
                      minimum=0.0)),
    inputs=(x_in("final hidden stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_mlm_count,
    flops=_mlm_flops,
    activations=_mlm_activations,
    check=_mlm_check,
    summary=_summary,
    keywords="bert masked logits output",
    recipe=Recipe("MLMHead", _mlm_args, defaults={"bias": True, "transform": True,
                                                  "eps": 1e-5}),
))

SEQ2SEQ_HEAD = register(BlockSpec(
    type=bt.SEQ2SEQ_HEAD, family="output", title="Seq2seq decoder head",
    description="The decoder's output projection in an encoder-decoder; trained with teacher "
                "forcing (predict target token t+1 given the source and target tokens <= t).",
    params=(VOCAB, TIE, _BIAS),
    inputs=(x_in("final decoder stream"),),
    outputs=_LOGITS_OUT,
    infer=_infer,
    count_params=_lm_count,
    flops=_lm_flops,
    activations=_lm_activations,
    check=_lm_check,
    summary=_summary,
    keywords="logits output decoder t5 translation",
    recipe=_LM_RECIPE,
))

HEAD_TYPES = bt.HEAD_TYPES
