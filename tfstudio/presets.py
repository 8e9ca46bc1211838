"""Named architectures, stored as graph files in ``resources/presets/``.

The JSON files are the presets; the definitions below are how they were made (run
``python -m tfstudio.presets`` to write them again; a test checks the two agree).
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from .graph import Graph, GraphFileError, load_graph_file, save_graph
from .graph.templates import (ModelBuilder, encoder_decoder, layer_graph, recurrent_lm,
                              transformer_lm)

PRESET_DIR = Path(__file__).resolve().parent.parent / "resources" / "presets"
DEFAULT_PRESET = "tiny-gpt"

_GPT2 = dict(vocab=50257, activation="gelu_tanh", pos_scheme="learned", placement="pre")
_LLAMA = dict(activation="swiglu", norm_kind="rmsnorm", placement="pre", pos_scheme="none",
              attn_position="rope", bias=False, tie=False, eps=1e-5)

DEFINITIONS = {
    "tiny-gpt": partial(
        transformer_lm, name="tiny-gpt",
        description="The default: a 2-layer GPT (pre-norm, learned positions, tied head) small "
                    "enough to train in seconds on a CPU.",
        vocab=256, d_model=64, layers=2, heads=4, d_ff=256, max_len=256, context=64),
    "gpt1": partial(
        transformer_lm, name="gpt1",
        description="GPT-1 (Radford et al. 2018): 12 post-norm layers, 768 wide, 12 heads, "
                    "learned positions (512), GELU, tied head; about 117M parameters.",
        vocab=40478, d_model=768, layers=12, heads=12, d_ff=3072, max_len=512,
        placement="post", activation="gelu"),
    "gpt2-small": partial(
        transformer_lm, name="gpt2-small",
        description="GPT-2 small: 12 pre-norm layers, 768 wide, 12 heads, 1024 learned "
                    "positions, tied head; 124M parameters.",
        d_model=768, layers=12, heads=12, d_ff=3072, max_len=1024, **_GPT2),
    "gpt2-xl": partial(
        transformer_lm, name="gpt2-xl",
        description="GPT-2 XL: 48 layers, 1600 wide, 25 heads of 64; about 1.56B parameters.",
        d_model=1600, layers=48, heads=25, d_ff=6400, max_len=1024, **_GPT2),
    "gpt3-175b": partial(
        transformer_lm, name="gpt3-175b",
        description="GPT-3 175B shape: 96 layers, 12288 wide, 96 heads, 2048 context. GPT-3 "
                    "alternated dense and banded attention; this preset keeps every layer dense "
                    "(see gpt3-style-local for the alternation).",
        d_model=12288, layers=96, heads=96, d_ff=49152, max_len=2048, **_GPT2),
    "gpt3-style-local": partial(
        transformer_lm, name="gpt3-style-local",
        description="GPT-3 Small's shape (12 x 768) with GPT-3's alternation of dense and "
                    "locally banded (sliding window 256) attention: one group holds a dense and "
                    "a local layer and repeats 6 times.",
        d_model=768, layers=12, heads=12, d_ff=3072, max_len=2048, window=256, local_every=2,
        **_GPT2),
    "alibi-gpt": partial(
        transformer_lm, name="alibi-gpt",
        description="GPT-2 small's shape with ALiBi instead of learned positions: no position "
                    "table, a per-head linear distance penalty on the scores, extrapolates past "
                    "the training length.",
        vocab=50257, d_model=768, layers=12, heads=12, d_ff=3072, pos_scheme="none",
        attn_position="alibi", max_len=1024, activation="gelu_tanh"),
    "llama": partial(
        transformer_lm, name="llama",
        description="Llama-3-8B shape: 32 layers, 4096 wide, 32 query heads sharing 8 K/V "
                    "heads (GQA), RoPE (base 500000), RMSNorm pre-norm, SwiGLU (14336), untied "
                    "head; about 8.0B parameters.",
        vocab=128256, d_model=4096, layers=32, heads=32, kv_heads=8, d_ff=14336,
        rope_base=500000.0, max_len=8192, **_LLAMA),
    "mistral": partial(
        transformer_lm, name="mistral",
        description="Mistral-7B shape: LLaMA-style blocks plus sliding-window attention (4096 "
                    "tokens); 32 layers, GQA 32/8; about 7.24B parameters.",
        vocab=32000, d_model=4096, layers=32, heads=32, kv_heads=8, d_ff=14336, window=4096,
        max_len=32768, context=8192, **_LLAMA),
    "mixtral": partial(
        transformer_lm, name="mixtral",
        description="Mixtral-8x7B shape: every FFN is a mixture of 8 SwiGLU experts, top-2 per "
                    "token; about 46.7B parameters, ~12.9B used per token.",
        vocab=32000, d_model=4096, layers=32, heads=32, kv_heads=8, d_ff=14336,
        rope_base=1e6, max_len=32768, context=8192, moe={"experts": 8, "top_k": 2}, **_LLAMA),
    "bert-base": partial(
        transformer_lm, name="bert-base", encoder=True,
        description="BERT-base: 12 bidirectional post-norm layers, 768 wide, learned positions "
                    "(512), embedding LayerNorm, masked-LM head. Leaves out BERT's token-type "
                    "embeddings, pooler and next-sentence head.",
        vocab=30522, d_model=768, layers=12, heads=12, d_ff=3072, max_len=512,
        placement="post", embed_norm=True, eps=1e-12),
    "transformer-base": partial(
        encoder_decoder, name="transformer-base",
        description="The original Transformer base (Vaswani et al. 2017): 6 encoder + 6 decoder "
                    "post-norm layers, 512 wide, 8 heads, ReLU FFN 2048, sinusoidal positions, "
                    "embeddings scaled by sqrt(d). The decoder's embedding is tied to its head; "
                    "the encoder keeps its own (the paper shared all three).",
        vocab=37000, d_model=512, encoder_layers=6, decoder_layers=6, heads=8, d_ff=2048,
        scale_embed=True),
    "t5-small": partial(
        encoder_decoder, name="t5-small",
        description="T5-small's shape: 6 + 6 layers, 512 wide, 8 heads, ReLU FFN 2048, RMSNorm "
                    "pre-norm, no biases, tied head. Departs from T5: ALiBi distance penalties "
                    "stand in for T5's learned relative-position buckets (for costing; to train "
                    "one, prefer tiny-t5's sinusoids: a bidirectional ALiBi penalty is "
                    "symmetric and cannot tell left from right), the encoder and decoder have "
                    "separate embeddings (T5 shares one), and the tied logits are not rescaled "
                    "by 1/sqrt(d).",
        vocab=32128, d_model=512, encoder_layers=6, decoder_layers=6, heads=8, d_ff=2048,
        norm_kind="rmsnorm", placement="pre", pos_scheme="none", attn_position="alibi",
        bias=False, eps=1e-6),
    "lstm-lm": partial(
        recurrent_lm, name="lstm-lm",
        description="A 2-layer LSTM language model, 256 wide: the baseline attention replaced.",
        vocab=256, d_model=256, hidden=256, layers=2, cell="lstm"),
}

_TINY = dict(vocab=256, d_model=64, heads=4, max_len=256, context=64)
DEFINITIONS.update({
    "tiny-llama": partial(
        transformer_lm, name="tiny-llama",
        description="A 2-layer LLaMA: RoPE, RMSNorm pre-norm, SwiGLU, GQA with 4 query heads "
                    "sharing 2 K/V heads.",
        layers=2, kv_heads=2, d_ff=176, **{**_LLAMA, "tie": True}, **_TINY),
    "tiny-mistral": partial(
        transformer_lm, name="tiny-mistral",
        description="tiny-llama plus a 16-token sliding attention window.",
        layers=2, kv_heads=2, d_ff=176, window=16, **{**_LLAMA, "tie": True}, **_TINY),
    "tiny-mixtral": partial(
        transformer_lm, name="tiny-mixtral",
        description="tiny-llama whose FFNs are mixtures of 4 SwiGLU experts, top-2 per token.",
        layers=2, kv_heads=2, d_ff=128, moe={"experts": 4, "top_k": 2},
        **{**_LLAMA, "tie": True}, **_TINY),
    "tiny-alibi-gpt": partial(
        transformer_lm, name="tiny-alibi-gpt",
        description="tiny-gpt with ALiBi in place of learned positions.",
        layers=2, d_ff=256, pos_scheme="none", attn_position="alibi", **_TINY),
    "tiny-gpt3-local": partial(
        transformer_lm, name="tiny-gpt3-local",
        description="4 layers alternating dense and 8-token banded attention.",
        layers=4, d_ff=256, window=8, local_every=2, **_TINY),
    "tiny-bert": partial(
        transformer_lm, name="tiny-bert", encoder=True,
        description="A 2-layer BERT: bidirectional post-norm encoder with a masked-LM head. "
                    "Positions come from ALiBi distances rather than BERT's learned table: at "
                    "this size a learned table leaves masked-LM training on a long plateau "
                    "(predicting letter frequencies) before attention finds the neighbours.",
        layers=2, d_ff=256, placement="post", embed_norm=True, pos_scheme="none",
        attn_position="alibi", **_TINY),
    "tiny-t5": partial(
        encoder_decoder, name="tiny-t5",
        description="A 2 + 2 layer encoder-decoder in T5's style (RMSNorm pre-norm, ReLU, no "
                    "biases) with sinusoidal positions and embeddings scaled by sqrt(d). Not "
                    "ALiBi: its bidirectional penalty is symmetric (|i - j|), so an encoder "
                    "using it cannot tell a string from its mirror image (T5's own buckets tell "
                    "left from right); with ALiBi this model was at 55% on task:reverse after "
                    "800 steps, with sinusoids at 99.9% after 400.",
        vocab=256, d_model=64, encoder_layers=2, decoder_layers=2, heads=4, d_ff=256,
        norm_kind="rmsnorm", placement="pre", pos_scheme="sinusoidal", scale_embed=True,
        bias=False, max_len=256, context=64),
    "tiny-transformer": partial(
        encoder_decoder, name="tiny-transformer",
        description="A 2 + 2 layer original-style Transformer: post-norm, sinusoidal, ReLU, "
                    "embeddings scaled by sqrt(d) so tokens are not drowned by the positions.",
        vocab=256, d_model=64, encoder_layers=2, decoder_layers=2, heads=4, d_ff=256,
        max_len=256, context=64, scale_embed=True),
    "tiny-lstm": partial(
        recurrent_lm, name="tiny-lstm", description="A 1-layer LSTM LM, 64 wide.",
        vocab=256, d_model=64, hidden=64, layers=1, cell="lstm", context=64),
})




def attention_only_lm(*, name: str, description: str, vocab: int, d_model: int, layers: int,
                      heads: int, position: str, context: int, pos_scheme: str = "none"
                      ) -> Graph:
    """A decoder of attention layers alone (no feed-forward): the setting in which induction
    heads were first described (Elhage et al. 2021, Olsson et al. 2022). ``position`` is the
    attention's (none, rope, alibi); ``pos_scheme`` an added position table (none, learned,
    sinusoidal)."""
    b = ModelBuilder({"name": name, "description": description, "family": "decoder",
                      "context_length": context})
    ids = b.add("tokens", "token_input", {"role": "tokens"})
    embed = b.add("embed", "token_embedding", {"vocab_size": vocab, "d_model": d_model},
                  [(ids, "ids", "ids")])
    if pos_scheme != "none":
        embed = b.add("pos", "positional_encoding", {"scheme": pos_scheme, "max_len": context},
                      [(embed, "y", "x")])
    attn = {"heads": heads, "kv_heads": heads, "causal": True, "bias": False,
            "position": position}
    b.add("layers", "group", {"repeat": layers}, [(embed, "y", "x")],
          layer_graph([("attention", attn)], "pre", {"kind": "layernorm"}),
          title="attention-only layer")
    norm = b.add("final_norm", "norm", {"kind": "layernorm"}, [("layers", "y", "x")])
    b.add("head", "lm_head", {"vocab_size": vocab, "tie": False}, [(norm, "y", "x")])
    return b.graph


# The recipe that forms its induction head (measured; see tests/probes/test_heads.py): 52 letters
# so a string rarely repeats a letter, lengths 8-24 so no fixed offset finds the earlier copy.
INDUCTION_CORPUS = ("task:induction:min_len=8,max_len=24,"
                    "letters=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

DEFINITIONS["tiny-induction"] = partial(
    attention_only_lm, name="tiny-induction",
    description="A 2-layer attention-only decoder (2 heads per layer, ALiBi) in which an "
                "induction head forms on a CPU: train it with --corpus " + INDUCTION_CORPUS
                + " --batch-size 64 --lr 1e-3 --steps 1000 (or 2000), then `tfstudio explain` "
                "shows a layer-1 head attending to the token after the current one's earlier "
                "occurrence.",
    vocab=256, d_model=64, layers=2, heads=2, position="alibi", context=64)


def fixed_window_lm(*, name: str, description: str, vocab: int, d_model: int, window: int,
                    context: int, activation: str = "tanh", tie: bool = False) -> Graph:
    """Bengio et al. (2003)'s neural LM: token vectors, the last ``window`` of them concatenated
    and projected (tanh), then the softmax over the vocabulary. No positions: the window's
    slots are its order."""
    b = ModelBuilder({"name": name, "description": description, "family": "decoder",
                      "context_length": context})
    ids = b.add("tokens", "token_input", {"role": "tokens"})
    embed = b.add("embed", "token_embedding", {"vocab_size": vocab, "d_model": d_model},
                  [(ids, "ids", "ids")])
    mixed = b.add("window", "fixed_window", {"window": window, "activation": activation},
                  [(embed, "y", "x")])
    b.add("head", "lm_head", {"vocab_size": vocab, "tie": tie}, [(mixed, "y", "x")])
    return b.graph


DEFINITIONS["tiny-window-lm"] = partial(
    fixed_window_lm, name="tiny-window-lm",
    description="Bengio et al. (2003)'s neural language model: each position sees the vectors "
                "of its last 4 tokens, concatenated and projected through tanh, and nothing "
                "older. The step between counting n-grams and recurrence.",
    vocab=256, d_model=64, window=4, context=64)


class PresetNotFound(GraphFileError):
    pass


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def load_preset(name: str) -> Graph:
    path = PRESET_DIR / f"{name}.json"
    if not path.exists():
        raise PresetNotFound(
            f"no preset named '{name}'. Available: {', '.join(preset_names())}")
    return load_graph_file(path)


def load_preset_or_file(name_or_path) -> Graph:
    text = str(name_or_path)
    if text.endswith(".json") or Path(text).exists():
        return load_graph_file(text)
    return load_preset(text)


def write_presets(directory: Path = PRESET_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in DEFINITIONS.items():
        path = directory / f"{name}.json"
        save_graph(build(), path)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_presets():
        print(p)
