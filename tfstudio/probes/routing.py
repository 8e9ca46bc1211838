"""Mixture-of-experts routing: per MoE block, the share of tokens each expert received and the
experts each probe token was sent to (best first), from the forward that just ran."""
from __future__ import annotations

import numpy as np

from ._util import key_name


def expert_routing(model) -> dict[str, dict]:
    """{block: {"load": [E] (sums to top_k), "assignments": [T, k] expert ids}} after a forward
    on the probe text (batch row 0); empty when the model has no mixture of experts."""
    out = {}
    for key, module in model.blocks():
        load = getattr(module, "last_expert_load", None)
        chosen = getattr(module, "last_assignments", None)
        if load is None or chosen is None:
            continue
        out[key_name(key)] = {"load": load.float().cpu().numpy().copy(),
                              "assignments": chosen[0].cpu().numpy().astype(np.int64).copy(),
                              "experts": int(module.num_experts)}
    return out
