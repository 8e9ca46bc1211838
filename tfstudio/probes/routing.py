"""Mixture-of-experts routing: per MoE block, the experts each probe token was sent to (best
first) and the share of tokens each expert received, read at the block's "choices" hook point
(:mod:`tfstudio.nn.hooks`) during the probe's own forward."""
from __future__ import annotations

import numpy as np

from ._util import key_name, looking_at


def expert_routing(model, inputs) -> dict[str, dict]:
    """Run ``inputs`` (a :class:`~tfstudio.probes.ProbeInputs`) and return, per MoE block,
    {"load": [E] (sums to top_k), "assignments": [T, k] expert ids, "experts": E} (batch row
    0); empty when the model has no mixture of experts."""
    from ..nn import attached

    reader = RoutingReader(model)
    with looking_at(model), attached(model, reader, names=reader.names):
        model(*inputs.args)
    return reader.routing()


class RoutingReader:
    """A hook function (for :class:`tfstudio.nn.attached`, with ``names=reader.names``) that
    keeps the experts every MoE block chose ([B, T, k], at its "choices" point)."""

    def __init__(self, model):
        self.blocks = {id(m): (k, m) for k, m in model.blocks() if hasattr(m, "num_experts")}
        self.owner = {f"{name}.hook_choices": self.blocks[id(m)]
                      for name, m in model.named_modules() if id(m) in self.blocks}
        self.names = set(self.owner)
        self.chosen: dict[str, np.ndarray] = {}

    def __call__(self, name: str, _point, tensor) -> None:
        self.chosen[name] = tensor[0].detach().cpu().numpy().astype(np.int64).copy()

    def routing(self) -> dict[str, dict]:
        """What the forward that ran chose; an expert's load is the share of tokens that chose
        it (each token chooses top_k, so the loads sum to top_k)."""
        out = {}
        for name, (key, module) in self.owner.items():
            chosen = self.chosen.get(name)
            if chosen is None:
                continue
            counts = np.bincount(chosen.ravel(), minlength=module.num_experts)
            out[key_name(key)] = {"load": (counts / max(len(chosen), 1)).astype(np.float32),
                                  "assignments": chosen, "experts": int(module.num_experts)}
        return out
