"""Expert routing (tfstudio/probes/routing.py): each block's load and assignments, counted here."""
from __future__ import annotations

import numpy as np
import torch
from probe_models import TEXT, block_of, model_of

from tfstudio.probes import expert_routing, probe_inputs

torch.set_num_threads(1)


def test_routing_gives_each_blocks_load_assignments_and_expert_count(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    with torch.no_grad():
        model(*inputs.args)
    routing = expert_routing(model)
    assert sorted(routing) == ["layers.0.moe", "layers.1.moe"]
    moe = block_of(model, "layers.0.moe")
    block = routing["layers.0.moe"]
    assert block["experts"] == moe.num_experts
    assert block["assignments"].dtype == np.int64
    T = len(inputs.ids[inputs.stream_role])
    counts = np.bincount(block["assignments"].ravel(), minlength=moe.num_experts)
    np.testing.assert_allclose(block["load"], counts / T, rtol=1e-6)  # shares, sum top_k
