"""The positions probe reads the model's own RoPE settings: with a non-default base (and
scaling) its frequencies and scores follow the RoPE formula for that base, computed here."""
import numpy as np
import pytest
import torch

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.graph import Document, SetParam
from tfstudio.probes.positions import position_data


def llama_with(rope_base: float, rope_scaling: float = 1.0):
    doc = Document(tfstudio.load_graph("tiny-llama"))
    doc.execute(SetParam(("layers",), "attn", "rope_base", rope_base))
    if rope_scaling != 1.0:
        doc.execute(SetParam(("layers",), "attn", "rope_scaling", rope_scaling))
    return compile_graph(doc.root)


@pytest.mark.parametrize("base, scaling", [(100.0, 1.0), (10000.0, 1.0), (37.0, 1.0),
                                           (500.0, 2.0)])
def test_rope_probe_follows_the_configured_base(base, scaling):
    length = 24
    rope = position_data(llama_with(base, scaling), length)["rope"]
    head_dim = 2 * len(rope["frequencies"])
    assert head_dim == 16  # tiny-llama: 64 wide, 4 heads
    # w_k = base^(-2k/d) / scaling, the angle feature pair k turns per position
    w = base ** (-np.arange(0, head_dim, 2) / head_dim) / scaling
    np.testing.assert_allclose(rope["frequencies"], w, rtol=1e-5)
    # all-ones q and k rotated to m and n: each pair contributes 2 cos((m - n) w_k); / head_dim
    m = np.arange(length)
    scores = np.cos(np.outer(m, w)).mean(axis=1)
    np.testing.assert_allclose(rope["scores"], scores, atol=1e-5)
    similarity = np.cos((m[:, None, None] - m[None, :, None]) * w).mean(-1)
    np.testing.assert_allclose(rope["similarity"], similarity, atol=1e-5)
    assert rope["base"] == base and rope["scaling"] == scaling


def test_a_smaller_base_turns_faster():
    slow = position_data(llama_with(10000.0), 8)["rope"]["frequencies"]
    fast = position_data(llama_with(100.0), 8)["rope"]["frequencies"]
    assert slow[0] == pytest.approx(fast[0])      # pair 0 turns 1 radian per step either way
    assert np.all(fast[1:] > slow[1:])


# ---------------------------------------------------------------- found by mutation testing

def test_rope_offsets_are_the_positions():
    rope = position_data(llama_with(100.0), 12)["rope"]
    np.testing.assert_array_equal(rope["offsets"], np.arange(12))


def test_learned_table_default_length_and_its_limit():
    torch.manual_seed(0)
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))  # learned positions, 256 rows
    assert position_data(model)["learned"]["table"].shape == (64, 64)   # default length 64
    long = position_data(model, 1000)["learned"]
    assert long["table"].shape == (256, 64) and long["similarity"].shape == (256, 256)
    np.testing.assert_allclose(long["similarity"], long["table"] @ long["table"].T,
                               rtol=1e-5, atol=1e-6)


def test_alibi_bias_and_slopes_by_hand():
    model = compile_graph(tfstudio.load_graph("tiny-alibi-gpt"))
    length = 6
    alibi = position_data(model, length)["alibi"]
    heads = len(alibi["slopes"])
    assert heads == 4
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)   # the ALiBi paper's sequence
    np.testing.assert_allclose(alibi["slopes"], slopes)
    i, j = np.arange(length)[:, None], np.arange(length)[None, :]
    bias = np.where(j <= i, -slopes[:, None, None] * (i - j), -np.inf)  # causal: no future
    np.testing.assert_allclose(alibi["bias"], bias, rtol=1e-6)
    np.testing.assert_allclose(alibi["similarity"], bias.mean(0), rtol=1e-6)
    assert alibi["causal"] is True
