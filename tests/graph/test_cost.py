"""The cost model against published parameter counts and hand-derived formulas."""
import pytest

import tfstudio  # noqa: F401
from tfstudio.graph import Edge
from tfstudio.graph.cost import estimate_cost, dtype_bytes, training_memory
from tfstudio.graph.switches import set_attention_kind
from tfstudio.graph.templates import transformer_lm
from tfstudio.presets import load_preset


# ----------------------------------------------------------------------- parameters
@pytest.mark.parametrize("name, published", [
    ("gpt2-small", 124_439_808),        # Hugging Face gpt2
    ("gpt2-xl", 1_557_611_200),         # Hugging Face gpt2-xl
    ("llama", 8_030_261_248),           # Meta-Llama-3-8B
    ("mistral", 7_241_732_096),         # Mistral-7B-v0.1
    ("mixtral", 46_702_792_704),        # Mixtral-8x7B-v0.1
])
def test_published_totals_exactly(name, published):
    assert estimate_cost(load_preset(name)).total_params == published


def test_gpt1_is_the_published_117m():
    total = estimate_cost(load_preset("gpt1")).total_params
    v, p, d, layers = 40478, 512, 768, 12
    # per post-norm layer: attention 4d^2+4d, MLP 8d^2+5d, two LayerNorms 4d; no final norm
    assert total == v * d + p * d + layers * (12 * d * d + 13 * d)
    assert 116e6 < total < 117.5e6


def test_gpt3_175b_within_one_percent():
    total = estimate_cost(load_preset("gpt3-175b")).total_params
    assert abs(total - 175e9) / 175e9 < 0.01


def test_gpt2_hand_formula_and_the_tied_head_counted_once():
    r = estimate_cost(load_preset("gpt2-small"))
    v, p, d, layers = 50257, 1024, 768, 12
    assert r.total_params == v * d + p * d + layers * (12 * d * d + 13 * d) + 2 * d
    assert r.node_params[((), "head")] == 0  # its matrix is the embedding's
    assert r.embedding_params == v * d + p * d
    assert r.non_embedding_params == layers * (12 * d * d + 13 * d) + 2 * d
    untied = load_preset("gpt2-small")
    untied.node("head").params["tie"] = False
    assert estimate_cost(untied).total_params == r.total_params + v * d


def test_node_params_at_every_depth_and_groups_times_repeat():
    r = estimate_cost(load_preset("tiny-gpt"))  # d 64, 4 heads, d_ff 256, 2 layers
    d, f = 64, 256
    inner = {"attn": 4 * d * d + 4 * d, "ffn": 2 * d * f + f + d, "norm_attn": 2 * d,
             "norm_ffn": 2 * d, "add_attn": 0, "add_ffn": 0, "inputs": 0, "outputs": 0}
    for node_id, expected in inner.items():
        assert r.node_params[(("layers",), node_id)] == expected
    assert r.node_params[((), "layers")] == 2 * sum(inner.values())
    top = [v for (path, _), v in r.node_params.items() if path == ()]
    assert sum(top) == r.total_params


def test_moe_parameters_and_gqa_shapes():
    r = estimate_cost(load_preset("tiny-mixtral"))  # d 64, 4 heads / 2 kv heads, 4 experts d_ff 128
    d, hd, e, f = 64, 16, 4, 128
    assert r.node_params[(("layers",), "attn")] == d * d + 2 * d * (2 * hd) + d * d
    assert r.node_params[(("layers",), "moe")] == d * e + e * 3 * d * f


# ----------------------------------------------------------------------- FLOPs
def test_gpt2_flops_match_kaplan():
    """Kaplan et al. (2020), C_forward = 2 N + 2 n_layer n_ctx d_attn, N non-embedding
    parameters without biases and norms (12 n_layer d^2); it leaves out the de-embedding."""
    r = estimate_cost(load_preset("gpt2-small"))
    d, layers, ctx, vocab = 768, 12, 1024, 50257
    assert r.context_length == ctx
    head = r.node_flops[((), "head")]
    assert head == 2 * d * vocab
    kaplan = 2 * (12 * layers * d * d) + 2 * layers * ctx * d
    assert abs((r.flops_per_token - head) - kaplan) / kaplan < 0.02


def test_bidirectional_attention_sees_the_whole_context():
    r = estimate_cost(load_preset("tiny-bert"), context_length=64)  # d 64, d_ff 256, 2 layers
    d, f, t, v = 64, 256, 64, 256
    per_layer = 2 * (4 * d * d) + 2 * 2 * t * d + 2 * (2 * d * f)
    head = 2 * d * d + 2 * d * v  # BERT's transform, then the projection
    assert r.flops_per_token == 2 * per_layer + head


def mean_keys(t, window=0, causal=True):
    """Brute force: how many keys each query may see, averaged over the sequence."""
    total = 0
    for i in range(t):
        for j in range(t):
            visible = j <= i if causal else True
            if window:
                visible = visible and abs(i - j) < window
            total += visible
    return total / t


def test_causal_and_windowed_attention_flops_by_brute_force():
    base = dict(name="t", description="", vocab=64, d_model=32, layers=1, heads=4, d_ff=64,
                max_len=64)
    for causal_model, window in ((True, 0), (True, 8), (False, 0), (False, 8)):
        g = transformer_lm(encoder=not causal_model, window=window, **base)
        score = estimate_cost(g, context_length=40).node_flops[(("layers",), "attn")]
        projections = 2 * 4 * 32 * 32
        assert score - projections == pytest.approx(
            4 * 32 * mean_keys(40, window, causal_model)), (causal_model, window)


def test_moe_flops_count_only_the_chosen_experts():
    r = estimate_cost(load_preset("tiny-mixtral"))
    d, e, k, f = 64, 4, 2, 128
    assert r.node_flops[(("layers",), "moe")] == 2 * d * e + k * 2 * 3 * d * f
    g = load_preset("tiny-mixtral")
    g.node("layers").subgraph.node("moe").params["experts"] = 8
    more = estimate_cost(g).node_flops[(("layers",), "moe")]
    assert more - r.node_flops[(("layers",), "moe")] == 2 * d * 4  # only the router grows


def test_flops_grow_with_the_context_only_through_attention():
    g = load_preset("tiny-gpt")
    short, long = estimate_cost(g, context_length=32), estimate_cost(g, context_length=64)
    # causal: each query sees (T+1)/2 keys; QK^T and AV cost 2 * d each per key, 2 layers
    assert long.flops_per_token - short.flops_per_token == pytest.approx(
        2 * 4 * 64 * ((64 + 1) / 2 - (32 + 1) / 2))


# ----------------------------------------------------------------------- KV cache
def test_kv_cache_per_token():
    assert estimate_cost(load_preset("llama")).kv_cache_bytes_per_token == 2 * 32 * 8 * 128 * 2
    assert estimate_cost(load_preset("gpt2-small")).kv_cache_bytes_per_token == 2 * 12 * 12 * 64 * 2
    fp32 = estimate_cost(load_preset("gpt2-small"), dtype="float32").kv_cache_bytes_per_token
    assert fp32 == 2 * 12 * 12 * 64 * 4
    # a sliding window caps the number of cached tokens, not the size of each
    assert (estimate_cost(load_preset("tiny-mistral")).kv_cache_bytes_per_token
            == estimate_cost(load_preset("tiny-llama")).kv_cache_bytes_per_token == 2 * 2 * 2 * 16 * 2)
    assert estimate_cost(load_preset("bert-base")).kv_cache_bytes_per_token == 0
    # encoder-decoder: only the decoder's causal self-attention caches per generated token
    assert estimate_cost(load_preset("t5-small")).kv_cache_bytes_per_token == 6 * 2 * 512 * 2


def test_mqa_and_gqa_shrink_the_kv_cache():
    g = load_preset("gpt2-small")
    mha = estimate_cost(g).kv_cache_bytes_per_token
    layer = g.node("layers").subgraph
    for kind, kv_heads in (("mqa", 1), ("gqa", 6)):
        g.node("layers").subgraph = set_attention_kind(layer, kind)
        assert estimate_cost(g).kv_cache_bytes_per_token * 12 == mha * kv_heads


# ----------------------------------------------------------------------- memory
def test_training_memory_of_tiny_gpt_by_hand():
    g = load_preset("tiny-gpt")  # d 64, 4 heads, d_ff 256, 2 layers, vocab 256
    d, h, f, v, layers = 64, 4, 256, 256, 2
    batch, seq = 3, 32
    params = estimate_cost(g).total_params
    per_token = layers * (d                       # pre-norm input
                          + d + 2 * d + 2 * d + h  # attention: x, q and out, k and v, softmax sums
                          + d                      # second pre-norm
                          + d + 2 * f)             # FFN: input, pre- and post-activation
    per_token += d + (d + 2 * v)                   # final norm; head input, logits, log-softmax
    m = training_memory(g, batch=batch, seq_len=seq)
    assert m.weights == m.gradients == params * 4
    assert m.optimizer == params * 8
    assert m.activations == per_token * batch * seq * 4
    assert m.total == m.weights + m.gradients + m.optimizer + m.activations
    half = training_memory(g, batch=batch, seq_len=seq, dtype="bf16")
    assert half.weights == params * 2 and half.optimizer == params * 8  # AdamW stays fp32
    assert half.activations * 2 == m.activations
    double = training_memory(g, batch=2 * batch, seq_len=seq)
    assert double.activations == 2 * m.activations and double.weights == m.weights


def test_training_memory_refuses_nonsense():
    with pytest.raises(ValueError, match="at least 1"):
        training_memory(load_preset("tiny-gpt"), batch=0, seq_len=8)


def test_dtypes_and_contexts():
    assert dtype_bytes("bf16") == dtype_bytes("torch.bfloat16") == 2
    assert dtype_bytes("float32") == 4
    with pytest.raises(ValueError, match="unknown dtype 'float13'; use one of"):
        estimate_cost(load_preset("tiny-gpt"), dtype="float13")
    with pytest.raises(ValueError, match="positive whole number"):
        estimate_cost(load_preset("tiny-gpt"), context_length=0)
    g = load_preset("tiny-gpt")
    del g.meta["context_length"]
    assert estimate_cost(g).context_length == 1024  # documented default


def test_a_broken_graph_is_costed_without_raising():
    g = load_preset("tiny-gpt")
    g.add_edge(Edge("final_norm", "y", "pos", "x"))  # a cycle: no shapes anywhere
    r = estimate_cost(g)
    # only the embedding table, whose size needs no shapes, can be counted
    assert r.total_params == 256 * 64 and r.flops_per_token == 0
