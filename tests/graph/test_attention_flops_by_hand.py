"""FLOPs per token of GQA, MQA and sliding-window attention, worked out by hand: the four
projections are 2 x their weights (K and V narrow with fewer K/V heads), and scoring plus mixing
cost 4 x (query heads x head size) per key a query sees, whatever the number of K/V heads."""
import pytest

from tfstudio.graph.cost import estimate_cost
from tfstudio.presets import load_preset


def keys_seen(context: int, window: int) -> float:
    """Average keys a causal query sees: query i (from 0) sees i + 1, or the last ``window``."""
    return sum(min(i + 1, window or context) for i in range(context)) / context


def by_hand(d: int, heads: int, kv_heads: int, context: int, window: int = 0) -> float:
    head = d // heads
    projections = d * heads * head + 2 * d * kv_heads * head + heads * head * d
    return 2.0 * projections + 4.0 * heads * head * keys_seen(context, window)


def with_attention(preset: str, **params):
    graph = load_preset(preset)
    graph.nodes["layers"].subgraph.nodes["attn"].params.update(params)
    return graph


@pytest.mark.parametrize("kv_heads", [4, 2, 1])  # MHA, GQA, MQA
@pytest.mark.parametrize("window", [0, 16])
def test_attention_flops_of_every_kind_by_hand(kv_heads, window):
    graph = with_attention("tiny-gpt", kv_heads=kv_heads, window=window, bias=False)
    flops = estimate_cost(graph, context_length=64).node_flops[(("layers",), "attn")]
    assert flops == pytest.approx(by_hand(64, 4, kv_heads, 64, window))


def test_fewer_kv_heads_save_only_projection_flops():
    """MQA against MHA at the same width: the K and V projections shrink from d x d to d x
    head size each; the scores, computed per query head, cost the same."""
    cost = {kv: estimate_cost(with_attention("tiny-gpt", kv_heads=kv, bias=False),
                              context_length=64).node_flops[(("layers",), "attn")]
            for kv in (4, 1)}
    assert cost[4] - cost[1] == 2 * 2 * 64 * (64 - 16)


def test_a_window_caps_the_keys_each_query_scores():
    graph = load_preset("tiny-mistral")  # GQA 4/2, window 16
    attn = graph.nodes["layers"].subgraph.nodes["attn"].params
    assert (attn["heads"], attn["kv_heads"], attn["window"]) == (4, 2, 16)
    flops = estimate_cost(graph, context_length=256).node_flops[(("layers",), "attn")]
    d = 64
    # by hand: 2 x (64x64 + 2 x 64x32 + 64x64) for the projections; 16 keys for all but the
    # first 15 queries, which see 1..15
    keys = (sum(range(1, 16)) + (256 - 15) * 16) / 256
    assert flops == pytest.approx(2 * (d * d + 2 * d * 32 + d * d) + 4 * d * keys)


def test_llama_8b_at_8192_tokens_costs_about_17_gflop_per_token():
    """Llama-3-8B's shape (32 layers, d 4096, 32 query heads on 8 K/V heads, SwiGLU 14336,
    vocabulary 128256): attention, FFN and head by hand; norms and adds are the small rest."""
    report = estimate_cost(load_preset("llama"), context_length=8192)
    d, f, vocab = 4096, 14336, 128256
    attention = by_hand(d, 32, 8, 8192)
    assert report.node_flops[(("layers",), "attn")] == pytest.approx(attention)
    total = 32 * (attention + 2 * 3 * d * f) + 2 * d * vocab
    assert report.flops_per_token == pytest.approx(total, rel=0.005)
    assert round(report.flops_per_token / 1e9, 1) == 17.2
