"""The positions probe (tfstudio/probes/positions.py): RoPE with NTK scaling, learned tables."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from probe_models import edited, model_of

from tfstudio.data import build_tokenizer

torch.set_num_threads(1)


def llama_rope(**params):
    def edit(graph):
        graph.nodes["layers"].subgraph.nodes["attn"].params.update(params)
    return edited("tiny-llama", build_tokenizer("byte"), edit)


def test_the_rope_probe_follows_ntk_scaling():
    from tfstudio.probes import position_data, rope_score
    model = llama_rope(rope_base=500.0, rope_scaling=2.0, rope_scaling_type="ntk")
    rope = position_data(model, 12)["rope"]
    hd = 2 * len(rope["frequencies"])
    # NTK-aware: positions kept, the base raised to base * s^(d / (d - 2))
    base = 500.0 * 2.0 ** (hd / (hd - 2))
    w = base ** (-np.arange(0, hd, 2) / hd)
    np.testing.assert_allclose(rope["frequencies"], w, rtol=1e-5)
    assert rope["scaling_type"] == "ntk" and rope["scaling"] == 2.0
    # two all-ones vectors at positions m and n: sum_k 2 cos((m - n) w_k) / d
    np.testing.assert_allclose(rope["scores"], [2 * np.cos(m * w).sum() / hd for m in range(12)],
                               rtol=1e-4, atol=1e-5)
    module = next(m for _, m in model.attention_modules())
    q = torch.ones(hd)
    assert rope_score(module, q, q, 5, 2) == pytest.approx(2 * np.cos(3 * w).sum(), rel=1e-4)


def test_only_a_learned_table_reads_the_rows_asked_for(gpt, tokenizer):
    from tfstudio.probes import position_data
    model, _ = gpt
    learned = position_data(model, 8, table_rows=20)["learned"]
    assert learned["table"].shape == (20, 64) and learned["similarity"].shape == (20, 20)
    assert position_data(model, 8)["learned"]["table"].shape == (8, 64)
    t5 = model_of("tiny-t5", tokenizer)
    sinusoidal = position_data(t5, 8, table_rows=20)["sinusoidal"]
    assert sinusoidal["table"].shape == (8, 64)      # a formula has no rows of its own
