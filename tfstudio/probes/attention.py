"""Attention weights per layer and head, read at the attention blocks' hook points.

Listening at an attention block's "weights" point (:mod:`tfstudio.nn.hooks`) makes it compute
softmax(Q K^T / sqrt(d_head) + mask) V explicitly (its output equals the fused SDPA path's,
which a test checks), and the point sees the weights it applied. Its "mask" point sees which
keys each query was allowed to attend to, so a heatmap can draw the cells the model could not
look at (the causal upper triangle, a sliding window) as masked, not as zeros the model chose.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at
from .roles import stream_roles


@dataclass
class AttentionMap:
    weights: np.ndarray   # [heads, queries, keys] float32; each row sums to 1
    allowed: np.ndarray   # [queries, keys] bool; False where the mask forbids attending
    query_role: str       # which tokens label the rows ("tokens", "source", "target")
    key_role: str         # ... and the columns
    cross: bool           # cross-attention (keys from the encoder)

    def to_dict(self) -> dict:
        return {"weights": self.weights, "allowed": self.allowed, "query_role": self.query_role,
                "key_role": self.key_role, "cross": self.cross}

    @classmethod
    def from_dict(cls, data: dict) -> AttentionMap:
        return cls(np.asarray(data["weights"]), np.asarray(data["allowed"], dtype=bool),
                   str(data["query_role"]), str(data["key_role"]), bool(data["cross"]))


def attention_maps(model, inputs) -> dict[str, AttentionMap]:
    """Run ``inputs`` (a :class:`~tfstudio.probes.ProbeInputs`) and return the weights of every
    attention block, keyed "layers.0.attn" (batch row 0)."""
    from ..nn import attached

    reader = AttentionReader(model)
    with looking_at(model), attached(model, reader, names=reader.names):
        model(*inputs.args)
    return reader.maps()


class AttentionReader:
    """A hook function (for :class:`tfstudio.nn.attached`, with ``names=reader.names``) that
    keeps what every attention block computed at its "weights" and "mask" hook points: the
    softmax the model applied and which keys each query was allowed to see. Listening at those
    points makes the block take its explicit path (the fused one has no weights to show)."""

    def __init__(self, model):
        self.model = model
        modules = {id(m): k for k, m in model.attention_modules()}
        self.owner = {name: modules[id(m)] for name, m in model.named_modules()
                      if id(m) in modules}
        self.names = {f"{name}.hook_{p}" for name in self.owner for p in ("weights", "mask")}
        self.seen: dict[tuple, dict[str, object]] = {}   # block key -> point -> tensor

    def __call__(self, name: str, _point, tensor) -> None:
        owner, _, point = name.rpartition(".")
        self.seen.setdefault(self.owner[owner], {})[point] = tensor[0].detach()

    def maps(self) -> dict[str, AttentionMap]:
        """The maps of the forward that ran, in the model's block order."""
        model, out = self.model, {}
        for key, module in model.attention_modules():
            seen = self.seen.get(key, {})
            if "hook_weights" not in seen:
                continue
            cross = not hasattr(module, "causal")
            q_role, k_role = stream_roles(model.graph, key, cross, model.input_roles[-1]) \
                if model.graph is not None else (model.input_roles[-1],) * 2
            allowed = seen["hook_mask"].cpu().numpy().astype(bool).copy()
            out[key_name(key)] = AttentionMap(
                seen["hook_weights"].float().cpu().numpy().copy(), allowed, q_role, k_role,
                cross)
        return out
