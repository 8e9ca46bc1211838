"""The Hugging Face architectures tfstudio maps onto, both ways: which one a graph is (and, if
none, which nodes prevent it), the ``config.json`` it exports, and the graph an HF config
imports as. Pure Python (no torch, no transformers).

Supported: GPT-2, LLaMA, Mistral, Mixtral and BERT (masked LM) both ways; Qwen2 import only (its
Q/K/V projections have biases but its output projection has none, which tfstudio holds as a
zero bias; a tfstudio graph of that shape exports as LLaMA with attention_bias). Qwen3 does not
fit: it RMS-normalises q and k per head, a step tfstudio's attention block does not have.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from ..blocks.feedforward import moe_weighting
from ..graph import block_types as bt
from ..graph.kinds import (GATED, GEGLU, GELU, GELU_TANH, GLU, LAYERNORM, LEARNED, NO_POSITIONS,
                          POST, PRE, RELU, RMSNORM, ROPE, SILU, SWIGLU)
from ..graph.model import Graph
from ..graph.templates import transformer_lm
from .anatomy import Anatomy, At
from .errors import InteropError, Problem


@dataclass(frozen=True)
class Family:
    name: str
    model_type: str
    architecture: str
    auto_class: str          # the transformers Auto class that loads it


FAMILIES = {f.name: f for f in (
    Family("gpt2", "gpt2", "GPT2LMHeadModel", "AutoModelForCausalLM"),
    Family("llama", "llama", "LlamaForCausalLM", "AutoModelForCausalLM"),
    Family("mistral", "mistral", "MistralForCausalLM", "AutoModelForCausalLM"),
    Family("mixtral", "mixtral", "MixtralForCausalLM", "AutoModelForCausalLM"),
    Family("qwen2", "qwen2", "Qwen2ForCausalLM", "AutoModelForCausalLM"),  # import only
    Family("bert", "bert", "BertForMaskedLM", "AutoModelForMaskedLM"),
)}

# tfstudio activation <-> HF hidden_act. Gated kinds: HF's MLP computes act(gate) * up.
PLAIN_TO_HF = {RELU: "relu", GELU: "gelu", GELU_TANH: "gelu_new", SILU: "silu"}
GATED_TO_HF = {SWIGLU: "silu", GEGLU: "gelu", GLU: "sigmoid"}
HF_TO_PLAIN = {"relu": RELU, "gelu": GELU, "gelu_new": GELU_TANH,
               "gelu_pytorch_tanh": GELU_TANH, "silu": SILU, "swish": SILU}
HF_TO_GATED = {"silu": SWIGLU, "swish": SWIGLU, "gelu": GEGLU, "sigmoid": GLU}


# ================================================================================ export side
def choose_family(an: Anatomy) -> str:
    """The architecture a graph is closest to (its full check may still refuse it)."""
    if an.kind == "encoder":
        return "bert"
    if any(layer.ffn.node.type == bt.MOE for layer in an.layers):
        return "mixtral"
    if not an.layers:
        return "gpt2"
    first = an.layers[0]
    if first.attn.params.position == ROPE:
        return "mistral" if any(layer.attn.params.window for layer in an.layers) else "llama"
    llama_like = (first.norm1.params.kind == RMSNORM
                  or first.ffn.params.activation in GATED)
    return "llama" if llama_like else "gpt2"


def check(family: str, an: Anatomy) -> list[Problem]:
    """Every reason ``an`` does not map onto ``family`` exactly (empty: it maps)."""
    problems = _uniform(an)
    problems += _shared_norms(an)
    rules = _RULES[family]
    problems += rules(an)
    return problems


def _uniform(an: Anatomy) -> list[Problem]:
    """HF configs give every layer one shape: layers must agree on every setting but dropout."""
    problems, named = [], set()
    first = an.layers[0] if an.layers else None
    for i, layer in enumerate(an.layers[1:], 1):
        for mine, theirs in ((layer.attn, first.attn), (layer.ffn, first.ffn),
                             (layer.norm1, first.norm1), (layer.norm2, first.norm2)):
            diff = _difference(mine, theirs)
            where = (mine.groups, mine.node.id)
            if diff and where not in named:  # once per node, not once per copy
                named.add(where)
                problems.append(mine.problem(
                    f"layer {i} differs from layer 0 in {diff}; a Hugging Face config gives "
                    "every layer the same settings", "make the layers alike"))
    return problems


def _difference(a: At, b: At) -> str:
    if a.node.type != b.node.type:
        return f"block type ({a.node.type} vs {b.node.type})"
    pa, pb = a.params, b.params
    for key in sorted(pa):
        if key != "dropout" and pa[key] != pb.get(key):
            return f"{key} ({pa[key]!r} vs {pb.get(key)!r})"
    return ""


def _shared_norms(an: Anatomy) -> list[Problem]:
    norms = an.norms()
    if not norms:
        return []
    kind, eps = norms[0].params.kind, norms[0].params.eps
    return [n.problem(f"this norm ({n.params.kind}, eps {n.params.eps}) differs from the "
                      f"others ({kind}, eps {eps}); a Hugging Face config has one norm kind and "
                      "one eps", "give every norm the same kind and eps")
            for n in norms if (n.params.kind, n.params.eps) != (kind, eps)]


def _needs(at: At | None, ok: bool, message: str, fix: str = "") -> list[Problem]:
    return [] if ok or at is None else [at.problem(message, fix)]


def _common_decoder(an: Anatomy, name: str, norm_kind: str) -> list[Problem]:
    p: list[Problem] = []
    p += _needs(an.embed, not an.embed.params.scale,
                f"{name} does not scale embeddings by sqrt(d_model)", "turn 'scale' off")
    p += _needs(an.embed_norm, an.embed_norm is None,
                f"{name} has no norm right after the embedding", "remove this norm")
    p += _needs(an.layers[0].attn if an.layers else an.head, an.placement == PRE,
                f"{name} is pre-norm (x + F(Norm(x))) with a final norm",
                "switch the layers to pre-norm")
    p += _needs(an.head, an.placement != PRE or an.final_norm is not None,
                f"{name} normalises the stream once more before the head",
                "add a norm before the head")
    if an.layers:
        norm = an.layers[0].norm1
        p += _needs(norm, norm.params.kind == norm_kind, f"{name} uses {norm_kind}",
                    f"set every norm's kind to {norm_kind}")
    for layer in an.layers:
        attn = layer.attn.params
        p += _needs(layer.attn, attn.causal, f"{name} attention is causal", "turn causal on")
    p += _needs(an.head, not an.head.params.bias, f"{name}'s LM head has no bias",
                "turn the head's bias off")
    return p


def _gpt2_rules(an: Anatomy) -> list[Problem]:
    p = _common_decoder(an, "GPT-2", LAYERNORM)
    if an.positions is None:
        p.append(an.embed.problem("GPT-2 adds a learned position table after the embedding",
                                  "add a Positional encoding node with scheme 'learned'"))
    else:
        p += _needs(an.positions, an.positions.params.scheme == LEARNED,
                    f"GPT-2's positions are a learned table, not "
                    f"{an.positions.params.scheme}", "set the scheme to 'learned'")
    for layer in an.layers[:1]:
        a, f = layer.attn.params, layer.ffn.params
        p += _needs(layer.attn, a.kv_heads == a.heads,
                    "GPT-2 has as many K/V heads as query heads (no GQA/MQA)",
                    "set kv_heads equal to heads")
        p += _needs(layer.attn, a.position == "none",
                    f"GPT-2 attention has no {a['position']} positions", "set position to none")
        p += _needs(layer.attn, not a.window, "GPT-2 attention has no sliding window",
                    "set window to 0")
        p += _needs(layer.ffn, layer.ffn.node.type == bt.FEED_FORWARD
                    and f.activation in PLAIN_TO_HF,
                    "GPT-2's MLP is Linear -> relu/gelu/gelu_tanh/silu -> Linear (not gated)",
                    "pick a non-gated activation")
    return p


def _llama_like_rules(name: str, biases_allowed: bool, window_allowed: bool, moe: bool):
    def rules(an: Anatomy) -> list[Problem]:
        p = _common_decoder(an, name, RMSNORM)
        p += _needs(an.positions, an.positions is None or an.positions.params.scheme == "none",
                    f"{name} has no absolute positions (RoPE rotates q and k instead)",
                    "remove the positional encoding node")
        for layer in an.layers[:1]:
            a, f = layer.attn.params, layer.ffn.params
            p += _needs(layer.attn, a.position == ROPE,
                        f"{name} attention uses RoPE, not {a['position']}",
                        "set the attention's position to rope")
            p += _needs(layer.attn, window_allowed or not a.window,
                        f"{name} has no sliding window", "set window to 0 (or map to Mistral)")
            p += _needs(layer.attn, biases_allowed or not a.bias,
                        f"{name}'s attention projections have no bias", "turn bias off")
            wanted = bt.MOE if moe else bt.FEED_FORWARD
            p += _needs(layer.ffn, layer.ffn.node.type == wanted,
                        f"{name}'s MLP is a {'mixture of experts' if moe else 'single gated FFN'}",
                        f"use a {wanted.replace('_', '-')} block")
            p += _needs(layer.ffn, f.activation in GATED,
                        f"{name}'s MLP is gated (act(x W_gate) * x W_up)",
                        "pick swiglu, geglu or glu")
            p += _needs(layer.ffn, biases_allowed or not f.bias,
                        f"{name}'s MLP has no bias", "turn the FFN bias off")
            if moe:
                p += _needs(layer.ffn, not f.shared_expert,
                            f"{name} has no shared expert", "turn shared_expert off")
                p += _needs(layer.ffn, moe_weighting(f) == "renormalised",
                            f"{name} weights the chosen experts by their probabilities "
                            "renormalised over the chosen k, not by the router's probability "
                            "(Switch)", "set weighting to renormalised")
        return p
    return rules


def _bert_rules(an: Anatomy) -> list[Problem]:
    p: list[Problem] = []
    p += _needs(an.embed, not an.embed.params.scale,
                "BERT does not scale embeddings by sqrt(d_model)", "turn 'scale' off")
    if an.positions is None or an.positions.params.scheme != LEARNED:
        p.append((an.positions or an.embed).problem(
            "BERT adds a learned position table after the embedding",
            "add a Positional encoding node with scheme 'learned'"))
    if an.embed_norm is None:
        p.append(an.embed.problem("BERT normalises the embeddings (LayerNorm) before the first "
                                  "layer", "add a LayerNorm after the positions"))
    p += _needs(an.layers[0].attn if an.layers else an.head, an.placement == POST,
                "BERT is post-norm (Norm(x + F(x)))", "switch the layers to post-norm")
    if an.layers:
        norm = an.layers[0].norm1
        p += _needs(norm, norm.params.kind == LAYERNORM, "BERT uses layernorm",
                    "set every norm's kind to layernorm")
    for layer in an.layers[:1]:
        a, f = layer.attn.params, layer.ffn.params
        p += _needs(layer.attn, not a.causal, "BERT attention is bidirectional",
                    "turn causal off")
        p += _needs(layer.attn, a.kv_heads == a.heads,
                    "BERT has as many K/V heads as query heads", "set kv_heads equal to heads")
        p += _needs(layer.attn, a.position == "none" and not a.window,
                    "BERT attention has no RoPE/ALiBi and no window",
                    "set position to none and window to 0")
        p += _needs(layer.ffn, layer.ffn.node.type == bt.FEED_FORWARD and
                    f.activation == GELU,
                    "BERT's FFN uses exact GELU, and HF applies the same activation inside its "
                    "masked-LM head, where tfstudio always uses GELU", "set activation to gelu")
    p += _needs(an.head, an.head.params.transform,
                "BERT's masked-LM head has its dense + GELU + LayerNorm transform",
                "turn the head's transform on")
    return p


_RULES: dict[str, Callable[[Anatomy], list[Problem]]] = {
    "gpt2": _gpt2_rules,
    "llama": _llama_like_rules("LLaMA", biases_allowed=True, window_allowed=False, moe=False),
    "mistral": _llama_like_rules("Mistral", biases_allowed=False, window_allowed=True,
                                 moe=False),
    "mixtral": _llama_like_rules("Mixtral", biases_allowed=False, window_allowed=True, moe=True),
    "bert": _bert_rules,
}


def approximations(family: str, an: Anatomy) -> list[str]:
    """Differences too small to refuse over, said out loud."""
    notes = []
    if family == "bert" and an.layers:
        eps, head_eps = an.layers[0].norm1.params.eps, an.head.params.eps
        if eps != head_eps:
            notes.append(f"the masked-LM head's LayerNorm uses eps {head_eps} and the layers "
                         f"{eps}; HF BERT has one layer_norm_eps={eps} for all norms, so logits "
                         "differ slightly")
    return notes


def export_config(family: str, an: Anatomy, context: int) -> dict[str, Any]:
    """The ``config.json`` of ``an`` as ``family`` (after :func:`check` found no problem)."""
    fam = FAMILIES[family]
    cfg: dict[str, Any] = {"architectures": [fam.architecture], "model_type": fam.model_type,
                           "vocab_size": int(an.embed.params.vocab_size),
                           "tie_word_embeddings": bool(an.head.params.tie),
                           "torch_dtype": "float32", "bos_token_id": None, "eos_token_id": None,
                           "pad_token_id": None}
    if family == "gpt2":
        cfg.update(_gpt2_config(an))
    elif family == "bert":
        cfg.update(_bert_config(an))
    else:
        cfg.update(_llama_like_config(family, an, context))
    return cfg


def _gpt2_config(an: Anatomy) -> dict[str, Any]:
    layer, pos = an.layers[0], an.positions.params
    a, f = layer.attn.params, layer.ffn.params
    return dict(n_embd=int(an.embed.params.d_model), n_layer=len(an.layers),
                n_head=a.heads, n_inner=f.d_ff, n_positions=pos.max_len,
                n_ctx=pos.max_len, activation_function=PLAIN_TO_HF[f.activation],
                layer_norm_epsilon=layer.norm1.params.eps, attn_pdrop=a.dropout,
                resid_pdrop=f.dropout, embd_pdrop=pos.dropout, scale_attn_weights=True,
                scale_attn_by_inverse_layer_idx=False, reorder_and_upcast_attn=False)


def _bert_config(an: Anatomy) -> dict[str, Any]:
    layer, pos = an.layers[0], an.positions.params
    a, f = layer.attn.params, layer.ffn.params
    return dict(hidden_size=int(an.embed.params.d_model), num_hidden_layers=len(an.layers),
                num_attention_heads=a.heads, intermediate_size=f.d_ff,
                hidden_act=PLAIN_TO_HF[f.activation], hidden_dropout_prob=f.dropout,
                attention_probs_dropout_prob=a.dropout,
                max_position_embeddings=pos.max_len, type_vocab_size=2,
                layer_norm_eps=layer.norm1.params.eps,
                position_embedding_type="absolute", is_decoder=False)


def _llama_like_config(family: str, an: Anatomy, context: int) -> dict[str, Any]:
    """LLaMA, Mistral and Mixtral share these keys; each adds its own at the end."""
    layer = an.layers[0]
    a, f = layer.attn.params, layer.ffn.params
    d, heads = int(an.embed.params.d_model), a.heads
    cfg = dict(hidden_size=d, intermediate_size=f.d_ff, num_hidden_layers=len(an.layers),
               num_attention_heads=heads, num_key_value_heads=a.kv_heads,
               head_dim=d // heads, hidden_act=GATED_TO_HF[f.activation],
               max_position_embeddings=context, rms_norm_eps=layer.norm1.params.eps,
               attention_dropout=a.dropout, **_rope_config(a, d // heads))
    if family == "llama":
        cfg.update(attention_bias=bool(a.bias), mlp_bias=bool(f.bias))
    else:
        cfg["sliding_window"] = a.window or None
    if family == "mixtral":
        cfg.update(num_local_experts=f.experts, num_experts_per_tok=f.top_k,
                   router_aux_loss_coef=f.aux_loss_weight, router_jitter_noise=0.0,
                   output_router_logits=False)
    return cfg


def _rope_config(attn: dict, head_dim: int) -> dict[str, Any]:
    """Both spellings: ``rope_theta``/``rope_scaling`` (transformers 4.x) and
    ``rope_parameters`` (5.x)."""
    theta, factor = float(attn.rope_base), float(attn.rope_scaling)
    if attn.get("rope_scaling_type") == "ntk" and factor != 1.0:
        # NTK-aware scaling is a larger base with whole positions: exactly HF's default RoPE
        theta, factor = theta * factor ** (head_dim / (head_dim - 2)), 1.0
    if factor == 1.0:
        return {"rope_theta": theta, "rope_scaling": None,
                "rope_parameters": {"rope_type": "default", "rope_theta": theta}}
    return {"rope_theta": theta,
            "rope_scaling": {"rope_type": "linear", "type": "linear", "factor": factor},
            "rope_parameters": {"rope_type": "linear", "rope_theta": theta, "factor": factor}}


# ================================================================================ import side
# What transformers assumes when config.json leaves a field out.
DEFAULTS: dict[str, dict[str, Any]] = {
    "gpt2": {"n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
             "tie_word_embeddings": True, "n_positions": 1024, "scale_attn_weights": True,
             "scale_attn_by_inverse_layer_idx": False, "add_cross_attention": False,
             "attn_pdrop": 0.1, "resid_pdrop": 0.1, "embd_pdrop": 0.1},
    "llama": {"hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
              "rope_theta": 10000.0, "attention_bias": False, "mlp_bias": False,
              "max_position_embeddings": 2048, "attention_dropout": 0.0},
    "mistral": {"hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
                "rope_theta": 10000.0, "max_position_embeddings": 32768, "sliding_window": 4096,
                "attention_dropout": 0.0},
    "mixtral": {"hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
                "rope_theta": 1e6, "max_position_embeddings": 32768, "sliding_window": None,
                "num_local_experts": 8, "num_experts_per_tok": 2, "router_aux_loss_coef": 0.001,
                "attention_dropout": 0.0},
    "qwen2": {"hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
              "rope_theta": 10000.0, "max_position_embeddings": 32768,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28,
              "attention_dropout": 0.0},
    "bert": {"hidden_act": "gelu", "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
             "type_vocab_size": 2, "tie_word_embeddings": True,
             "position_embedding_type": "absolute", "is_decoder": False,
             "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1},
}
_NOT_FITTING = {
    "qwen3": "Qwen3 RMS-normalises q and k per head (q_norm, k_norm) before RoPE; tfstudio's "
             "attention block has no such step",
    "qwen3_moe": "Qwen3-MoE normalises q and k per head, which tfstudio's attention lacks",
    "t5": "T5's relative position buckets have no tfstudio block",
    "gemma": "Gemma scales embeddings and offsets its RMSNorm weights by one",
}


class HFConfig:
    """A config.json read with transformers' defaults for the fields it leaves out."""

    def __init__(self, data: dict[str, Any], source: str = "config.json"):
        self.data, self.source = data, source
        self.model_type = str(data.get("model_type", ""))
        if self.model_type not in DEFAULTS:
            why = _NOT_FITTING.get(self.model_type)
            supported = ", ".join(sorted(DEFAULTS))
            raise InteropError(
                f"{source}: model_type '{self.model_type or '?'}' cannot be imported"
                + (f": {why}" if why else "") + f". tfstudio imports {supported}")
        self.defaults = DEFAULTS[self.model_type]

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.data and self.data[key] is not None:
            return self.data[key]
        return self.defaults.get(key, default)

    def need(self, key: str) -> Any:
        value = self.get(key)
        if value is None:
            raise InteropError(f"{self.source}: '{key}' is missing; it is needed to build the "
                               f"{self.model_type} graph")
        return value

    def refuse(self, message: str) -> InteropError:
        return InteropError(f"{self.source}: {message}")


def graph_from_config(cfg: HFConfig, name: str) -> tuple[Graph, list[str]]:
    """The tfstudio graph of an HF config, plus notes on what was adapted."""
    build = {"gpt2": _gpt2_graph, "bert": _bert_graph}.get(cfg.model_type, _llama_like_graph)
    return build(cfg, name)


def _description(cfg: HFConfig) -> str:
    return f"Imported from a Hugging Face {cfg.model_type} checkpoint."


def _gpt2_graph(cfg: HFConfig, name: str):
    d = int(cfg.need("n_embd"))
    act = cfg.get("activation_function")
    if act not in HF_TO_PLAIN:
        raise cfg.refuse(f"activation_function '{act}' has no tfstudio counterpart "
                         f"(known: {', '.join(HF_TO_PLAIN)})")
    if cfg.get("scale_attn_by_inverse_layer_idx") or not cfg.get("scale_attn_weights"):
        raise cfg.refuse("only GPT-2's standard 1/sqrt(head size) attention scaling imports")
    if cfg.get("add_cross_attention"):
        raise cfg.refuse("GPT-2 with cross-attention is an encoder-decoder part; not imported")
    graph = transformer_lm(
        name=name, description=_description(cfg), vocab=int(cfg.need("vocab_size")),
        d_model=d, layers=int(cfg.need("n_layer")), heads=int(cfg.need("n_head")),
        d_ff=int(cfg.get("n_inner") or 4 * d), activation=HF_TO_PLAIN[act],
        norm_kind=LAYERNORM, placement=PRE, pos_scheme=LEARNED,
        max_len=int(cfg.get("n_positions")), tie=bool(cfg.get("tie_word_embeddings")),
        bias=True, eps=float(cfg.get("layer_norm_epsilon")))
    _set(graph, bt.ATTENTION, dropout=float(cfg.get("attn_pdrop")))
    _set(graph, bt.FEED_FORWARD, dropout=float(cfg.get("resid_pdrop")))
    _set(graph, bt.POSITIONAL_ENCODING, dropout=float(cfg.get("embd_pdrop")))
    return graph, []


def _bert_graph(cfg: HFConfig, name: str):
    act = cfg.get("hidden_act")
    if act != "gelu":
        raise cfg.refuse(f"hidden_act '{act}': HF BERT applies it in the masked-LM head too, "
                         "where tfstudio always uses GELU; only 'gelu' imports exactly")
    if cfg.get("position_embedding_type") != "absolute":
        raise cfg.refuse(f"position_embedding_type '{cfg.get('position_embedding_type')}' has "
                         "no tfstudio counterpart (absolute only)")
    if cfg.get("is_decoder") or cfg.get("add_cross_attention"):
        raise cfg.refuse("a decoder BERT (is_decoder / cross-attention) is not imported")
    eps = float(cfg.get("layer_norm_eps"))
    graph = transformer_lm(
        name=name, description=_description(cfg), encoder=True,
        vocab=int(cfg.need("vocab_size")), d_model=int(cfg.need("hidden_size")),
        layers=int(cfg.need("num_hidden_layers")), heads=int(cfg.need("num_attention_heads")),
        d_ff=int(cfg.need("intermediate_size")), activation=GELU, norm_kind=LAYERNORM,
        placement=POST, pos_scheme=LEARNED, max_len=int(cfg.get("max_position_embeddings")),
        tie=bool(cfg.get("tie_word_embeddings")), bias=True, embed_norm=True, eps=eps,
        mlm_transform=True)
    _set(graph, bt.ATTENTION, dropout=float(cfg.get("attention_probs_dropout_prob")))
    _set(graph, bt.FEED_FORWARD, dropout=float(cfg.get("hidden_dropout_prob")))
    notes = [("token-type (segment) embeddings: row 0 is folded into the position table, so "
              "logits match HF for token_type_ids = 0 (the default); other segments are dropped")]
    return graph, notes


def _llama_like_graph(cfg: HFConfig, name: str):
    d, heads = int(cfg.need("hidden_size")), int(cfg.need("num_attention_heads"))
    act = _read_gated_activation(cfg)
    _check_head_dim(cfg, d, heads)
    theta, factor = _read_rope(cfg)
    kind = cfg.model_type
    attn_bias = {"llama": bool(cfg.get("attention_bias")), "qwen2": True}.get(kind, False)
    graph = transformer_lm(
        name=name, description=_description(cfg), vocab=int(cfg.need("vocab_size")),
        d_model=d, layers=int(cfg.need("num_hidden_layers")), heads=heads,
        kv_heads=int(cfg.get("num_key_value_heads") or heads),
        d_ff=int(cfg.need("intermediate_size")), activation=act,
        norm_kind=RMSNORM, placement=PRE, pos_scheme=NO_POSITIONS, attn_position=ROPE,
        rope_base=theta, max_len=int(cfg.get("max_position_embeddings")),
        tie=bool(cfg.get("tie_word_embeddings")), bias=attn_bias, window=_read_window(cfg),
        moe=_read_experts(cfg), eps=float(cfg.get("rms_norm_eps")))
    _set(graph, bt.ATTENTION, rope_scaling=factor, dropout=float(cfg.get("attention_dropout")))
    _set(graph, bt.FEED_FORWARD, bias=kind == "llama" and bool(cfg.get("mlp_bias")))
    _set(graph, bt.LM_HEAD, bias=False)
    notes = []
    if kind == "qwen2":
        notes.append("Qwen2's o_proj has no bias; the tfstudio attention's output bias is set "
                     "to zero (it will train unless frozen)")
    return graph, notes


def _check_head_dim(cfg: HFConfig, d: int, heads: int) -> None:
    head_dim = cfg.get("head_dim")
    if head_dim is not None and int(head_dim) * heads != d:
        raise cfg.refuse(f"head_dim {head_dim} x {heads} heads is not hidden_size {d}; "
                         "tfstudio's head size is always d_model / heads")


def _read_gated_activation(cfg: HFConfig) -> str:
    act = cfg.get("hidden_act")
    if act not in HF_TO_GATED:
        raise cfg.refuse(f"hidden_act '{act}' has no gated tfstudio counterpart "
                         f"(known: {', '.join(HF_TO_GATED)})")
    return HF_TO_GATED[act]


def _read_experts(cfg: HFConfig) -> dict[str, Any] | None:
    """Mixtral's mixture-of-experts settings (None for the dense families)."""
    if cfg.model_type != "mixtral":
        return None
    return {"experts": int(cfg.get("num_local_experts")),
            "top_k": int(cfg.get("num_experts_per_tok")),
            "aux_loss_weight": float(cfg.get("router_aux_loss_coef")),
            # transformers' Mixtral always divides the chosen k probabilities by their sum (it
            # has no norm_topk_prob switch; that flag is Qwen-MoE's, which tfstudio cannot hold)
            "weighting": "renormalised"}


def _read_rope(cfg: HFConfig) -> tuple[float, float]:
    params = cfg.get("rope_parameters") or {}
    scaling = cfg.get("rope_scaling") or {}
    theta = float(params.get("rope_theta") or cfg.get("rope_theta"))
    rope = params if params.get("rope_type") else scaling
    rope_type = rope.get("rope_type") or rope.get("type") or "default"
    if rope_type == "default":
        return theta, 1.0
    if rope_type == "linear":
        return theta, float(rope["factor"])
    raise cfg.refuse(f"RoPE scaling '{rope_type}' has no tfstudio counterpart (default and "
                     "linear only)")


def _read_window(cfg: HFConfig) -> int:
    window = cfg.get("sliding_window")
    if cfg.model_type in ("llama",):
        return 0
    if cfg.model_type == "qwen2":
        return _qwen2_window(cfg)
    return int(window or 0)


def _qwen2_window(cfg: HFConfig) -> int:
    """Qwen2's window, by transformers' rule: without ``use_sliding_window`` there is none;
    with it, ``layer_types`` (when given) says which layers slide, else the layers from
    ``max_window_layers`` on do. One window for all layers or none is imported; a real mix is
    refused (a tfstudio graph repeats one layer)."""
    # an explicit null means no window, unlike a missing key (transformers' default 4096)
    window = cfg.data.get("sliding_window", cfg.defaults["sliding_window"])
    if not cfg.get("use_sliding_window") or window is None:
        return 0
    layers = int(cfg.need("num_hidden_layers"))
    kinds = cfg.get("layer_types")
    if kinds is None:
        first = int(cfg.get("max_window_layers"))
        kinds = ["sliding_attention" if i >= first else "full_attention" for i in range(layers)]
    if (not isinstance(kinds, list) or len(kinds) != layers
            or not set(kinds) <= {"full_attention", "sliding_attention"}):
        raise cfg.refuse(f"layer_types must list 'full_attention' or 'sliding_attention' for "
                         f"each of the {layers} layers; got {kinds!r}")
    sliding = [i for i, kind in enumerate(kinds) if kind == "sliding_attention"]
    if not sliding:
        return 0
    if len(sliding) < layers:
        raise cfg.refuse(f"Qwen2 with a sliding window on {len(sliding)} of its {layers} layers "
                         "and full attention on the others is not imported: "
                         "a tfstudio graph repeats one layer; set max_window_layers to 0 (all "
                         "sliding) or to num_hidden_layers (none)")
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise cfg.refuse(f"sliding_window must be a positive whole number; got {window!r}")
    return window


def _set(graph: Graph, block_type: str, **params) -> None:
    for _, node in graph.walk():
        if node.type == block_type:
            node.params.update(params)
