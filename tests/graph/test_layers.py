"""Quick switches on layers and models (attention kind, FFN kind, positional scheme) and the
one-line layer summary the editor shows on a group node."""
import pytest

import tfstudio  # noqa: F401
from tfstudio.graph import Node
from tfstudio.graph.cost import estimate_cost
from tfstudio.graph.switches import (gqa_kv_heads, layer_summary, set_attention_kind,
                                     set_ffn_kind, set_positional_scheme)
from tfstudio.graph.templates import layer_graph
from tfstudio.graph.validate import validate
from tfstudio.presets import load_preset


def with_layer(root, layer, group="layers"):
    out = root.clone()
    out.node(group).subgraph = layer
    return out


@pytest.mark.parametrize("heads, expected", [(12, 6), (8, 4), (32, 16), (25, 5), (9, 3),
                                             (3, 1), (1, 1)])
def test_gqa_kv_heads(heads, expected):
    kv = gqa_kv_heads(heads)
    assert kv == expected and heads % kv == 0


def test_attention_kinds_set_kv_heads_and_shrink_the_cache():
    root = load_preset("tiny-llama")  # 4 heads sharing 2 K/V heads
    layer = root.node("layers").subgraph
    caches = {}
    for kind, kv in (("mha", 4), ("gqa", 2), ("mqa", 1)):
        out = set_attention_kind(layer, kind)
        assert out.node("attn").params["kv_heads"] == kv
        model = with_layer(root, out)
        assert validate(model) == []
        caches[kind] = estimate_cost(model).kv_cache_bytes_per_token
    assert caches == {"mha": 2 * 2 * 4 * 16 * 2, "gqa": 2 * 2 * 2 * 16 * 2,
                      "mqa": 2 * 2 * 1 * 16 * 2}
    assert layer.node("attn").params["kv_heads"] == 2  # the input is left alone
    with pytest.raises(ValueError, match="attention kind must be one of mha, gqa, mqa"):
        set_attention_kind(layer, "flash")


def test_attention_kind_reaches_cross_attention_and_nested_groups():
    root = load_preset("tiny-t5")
    out = set_attention_kind(root, "mqa")
    kv = {(path, n.id): n.params["kv_heads"] for path, n in out.walk()
          if n.type in ("attention", "cross_attention")}
    assert set(kv.values()) == {1} and len(kv) == 3


def test_ffn_to_moe_and_back_keeps_id_width_and_activation():
    root = load_preset("tiny-llama")  # SwiGLU FFN, d_ff 176, no biases
    layer = root.node("layers").subgraph
    ffn = layer.node("ffn")
    moe_layer = set_ffn_kind(layer, "moe")
    moe = moe_layer.node("ffn")
    assert moe.type == "moe" and moe.pos == ffn.pos
    assert moe.params == {"d_ff": 176, "activation": "swiglu", "bias": False}
    assert moe_layer.edge_into("ffn", "x") == layer.edge_into("ffn", "x")
    model = with_layer(root, moe_layer)
    assert validate(model) == []
    d, f, experts = 64, 176, 4  # MoE defaults: 4 experts, top 2
    one = 3 * d * f
    grown = estimate_cost(model).total_params - estimate_cost(root).total_params
    assert grown == 2 * (d * experts + (experts - 1) * one)  # 2 layers: router + 3 more experts
    back = set_ffn_kind(moe_layer, "ffn")
    assert back.node("ffn") == ffn
    with pytest.raises(ValueError, match="ffn kind must be one of ffn, moe"):
        set_ffn_kind(layer, "dense")


def test_ffn_to_moe_keeps_a_gelu_activation_though_the_moe_default_differs():
    layer = load_preset("tiny-gpt").node("layers").subgraph
    del layer.node("ffn").params["activation"]  # left at the FFN's default, GELU
    assert set_ffn_kind(layer, "moe").node("ffn").params["activation"] == "gelu"


def test_positional_scheme_rope_removes_the_table_and_sets_attention():
    root = load_preset("tiny-gpt")  # learned table of 256 x 64
    out = set_positional_scheme(root, "rope")
    assert not [n for _, n in out.walk() if n.type == "positional_encoding"]
    assert out.edge_into("layers", "x").src == "embed"
    assert out.node("layers").subgraph.node("attn").params["position"] == "rope"
    assert estimate_cost(root).total_params - estimate_cost(out).total_params == 256 * 64
    assert validate(out) == []
    assert root.node("pos").params["scheme"] == "learned"  # the input is left alone


def test_positional_scheme_learned_inserts_a_table_sized_to_the_context():
    root = load_preset("tiny-llama")  # RoPE, no positional-encoding block, context 64
    out = set_positional_scheme(root, "learned")
    assert out.edge_into("pos", "x").src == "embed"
    assert out.edge_into("layers", "x").src == "pos"
    assert out.node("pos").params == {"scheme": "learned", "max_len": 64}
    assert list(out.nodes).index("pos") == list(out.nodes).index("embed") + 1
    assert out.node("layers").subgraph.node("attn").params["position"] == "none"
    assert estimate_cost(out).total_params - estimate_cost(root).total_params == 64 * 64
    assert validate(out) == []


def test_positional_scheme_on_an_encoder_decoder_changes_both_streams():
    root = load_preset("tiny-transformer")  # sinusoidal on source and target
    alibi = set_positional_scheme(root, "alibi")
    attn = [n for _, n in alibi.walk() if n.type == "attention"]
    assert len(attn) == 2 and all(n.params["position"] == "alibi" for n in attn)
    assert alibi.edge_into("encoder", "x").src == "src_embed"
    learned = set_positional_scheme(alibi, "learned")
    tables = {n.id for n in learned if n.type == "positional_encoding"}
    assert tables == {"src_pos", "tgt_pos"}
    assert validate(learned) == []
    sinus = set_positional_scheme(root, "sinusoidal")
    assert sinus == root  # already so: nothing changes
    with pytest.raises(ValueError, match="positional scheme must be one of"):
        set_positional_scheme(root, "relative")


def test_positional_scheme_none():
    out = set_positional_scheme(load_preset("tiny-alibi-gpt"), "none")
    assert out.node("layers").subgraph.node("attn").params["position"] == "none"
    assert validate(out) == []


def group(layer, repeat=1):
    return Node("layers", "group", {"repeat": repeat}, subgraph=layer)


def test_layer_summary_names_attention_ffn_and_placement():
    layer = layer_graph([("attention", {"heads": 8, "kv_heads": 2}),
                         ("feed_forward", {"d_ff": 64, "activation": "swiglu"})], "pre",
                        {"kind": "rmsnorm"})
    assert layer_summary(group(layer)) == "GQA 8/2 · SwiGLU FFN · pre-norm"
    post = layer_graph([("attention", {"heads": 12, "kv_heads": 12}),
                        ("feed_forward", {"activation": "gelu"})], "post")
    assert layer_summary(group(post)) == "MHA 12 · GELU FFN · post-norm"
    mqa = layer_graph([("attention", {"heads": 8, "kv_heads": 1, "window": 128}),
                       ("moe", {"experts": 8, "top_k": 2})], "sandwich")
    assert layer_summary(group(mqa)) == "MQA 8/1 (window 128) · MoE 8x top-2 SwiGLU · " \
                                        "sandwich norm"


def test_layer_summary_of_presets():
    t5 = load_preset("tiny-t5")
    assert layer_summary(t5.node("encoder")) == "MHA 4 (bidirectional) · ReLU FFN · pre-norm"
    t5 = set_positional_scheme(t5, "alibi")  # tiny-t5 used ALiBi until it learned reverse
    assert layer_summary(t5.node("decoder")) == \
        "MHA 4 (ALiBi) · cross MHA 4 · ReLU FFN · pre-norm"
    assert layer_summary(t5.node("encoder")) == "MHA 4 (ALiBi, bidirectional) · ReLU FFN · pre-norm"
    assert layer_summary(Node("g", "group")) == "empty group"
