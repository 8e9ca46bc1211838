"""The editor's layer and model switches leave graphs that validate (every wire on a real
port), keep what they do not switch, and pick K/V heads for any head count; the cost model
reads the graph's own context length. Written from survivors of the graph mutation sample."""
import pytest

from tfstudio.graph import validate
from tfstudio.graph.cost import estimate_cost, training_memory
from tfstudio.graph.switches import (POSITIONAL_SCHEMES, gqa_kv_heads, set_ffn_kind,
                                     set_positional_scheme)
from tfstudio.presets import load_preset


def errors(graph) -> list[str]:
    return [d.message for d in validate(graph) if d.severity == "error"]


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt"])
@pytest.mark.parametrize("scheme", POSITIONAL_SCHEMES)
def test_every_positional_scheme_from_every_start_validates(preset, scheme):
    """Adding a positional block (from RoPE/ALiBi) and splicing one out (from learned) both
    wire the stream through real ports."""
    graph = set_positional_scheme(load_preset(preset), scheme)
    assert errors(graph) == []


@pytest.mark.parametrize("heads, kv", [(2, 1), (4, 2), (6, 3), (8, 4), (3, 1), (7, 1), (9, 3),
                                       (15, 5), (25, 5)])
def test_gqa_kv_heads_is_the_divisor_nearest_half(heads, kv):
    """Half the heads when even; for odd counts the divisor nearest heads / 2 (fewer K/V
    heads on a tie), worked out by hand: 9 -> {1, 3, 9} -> 3; 15 -> {1, 3, 5, 15} -> 5."""
    assert gqa_kv_heads(heads) == kv


def test_ffn_switch_round_trip_keeps_width_and_activation():
    layer = load_preset("tiny-llama").nodes["layers"].subgraph
    ffn = layer.nodes["ffn"].params
    back = set_ffn_kind(set_ffn_kind(layer, "moe"), "ffn")
    again = next(n for n in back if n.type == "feed_forward").params
    assert (again["d_ff"], again["activation"]) == (ffn["d_ff"], ffn["activation"])
    moe = next(n for n in set_ffn_kind(layer, "moe") if n.type == "moe").params
    assert (moe["d_ff"], moe["activation"]) == (ffn["d_ff"], ffn["activation"])


def test_costs_are_at_the_graphs_own_context_length():
    graph = load_preset("tiny-gpt")  # context_length 64
    assert estimate_cost(graph).context_length == 64
    assert estimate_cost(graph).flops_per_token == estimate_cost(
        graph, context_length=64).flops_per_token != estimate_cost(
        graph, context_length=32).flops_per_token


def test_training_memory_of_one_token_sequences():
    one = training_memory(load_preset("tiny-gpt"), batch=2, seq_len=1)
    two = training_memory(load_preset("tiny-gpt"), batch=2, seq_len=2)
    assert 0 < one.total < two.total
