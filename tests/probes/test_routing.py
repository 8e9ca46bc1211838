"""Expert routing (tfstudio/probes/routing.py): each block's load and assignments, counted here,
read during its own forward and from no attribute a forward leaves behind."""
from __future__ import annotations

import numpy as np
import torch
from probe_models import TEXT, block_of, model_of

from tfstudio.probes import expert_routing, probe_inputs

torch.set_num_threads(1)


def test_routing_gives_each_blocks_load_assignments_and_expert_count(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    routing = expert_routing(model, inputs)
    assert sorted(routing) == ["layers.0.moe", "layers.1.moe"]
    moe = block_of(model, "layers.0.moe")
    block = routing["layers.0.moe"]
    assert block["experts"] == moe.num_experts
    assert block["assignments"].dtype == np.int64
    T = len(inputs.ids[inputs.stream_role])
    counts = np.bincount(block["assignments"].ravel(), minlength=moe.num_experts)
    np.testing.assert_allclose(block["load"], counts / T, rtol=1e-6)  # shares, sum top_k


def test_routing_reads_its_own_forward_not_what_an_earlier_one_left(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    text, other = probe_inputs(model, tokenizer, TEXT), probe_inputs(model, tokenizer, "zz")
    alone = expert_routing(model, text)
    with torch.no_grad():
        model(*other.args)                     # a later forward on another text
    again = expert_routing(model, text)
    for block in alone:
        np.testing.assert_array_equal(again[block]["assignments"], alone[block]["assignments"])
    assert expert_routing(model, other)["layers.0.moe"]["assignments"].shape[0] == 2
