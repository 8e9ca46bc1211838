"""Attention weights per layer and head, read from the model's explicit path.

With ``capture`` set an attention module computes softmax(Q K^T / sqrt(d_head) + mask) V itself
and keeps the weights (tfstudio.nn.attention); its output equals the fast SDPA path's, which a
test checks. The mask that applied is read from the module too, so a heatmap can draw the
cells the model could not look at (the causal upper triangle, a sliding window) as masked,
not as zeros the model chose.
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
    with looking_at(model, capture=True):
        model(*inputs.args)
        return read_attention(model)


def read_attention(model) -> dict[str, AttentionMap]:
    """The weights the attention modules captured in the forward that just ran."""
    out = {}
    for key, module in model.attention_modules():
        weights = module.last_weights
        if weights is None:
            continue
        cross = not hasattr(module, "causal")
        q_len, k_len = weights.shape[-2], weights.shape[-1]
        q_role, k_role = stream_roles(model.graph, key, cross, model.input_roles[-1]) \
            if model.graph is not None else (model.input_roles[-1],) * 2
        out[key_name(key)] = AttentionMap(
            weights[0].float().cpu().numpy().copy(), allowed_mask(module, q_len, k_len),
            q_role, k_role, cross)
    return out


def allowed_mask(module, q_len: int, k_len: int) -> np.ndarray:
    """[q_len, k_len] bool: which keys each query may attend to, as the module masks them."""
    import torch

    if not hasattr(module, "_mask"):  # cross-attention: every source token is visible
        return np.ones((q_len, k_len), dtype=bool)
    probe = torch.zeros(1, dtype=torch.float32)  # only its device and dtype are read
    mask, is_causal = module._mask(q_len, k_len, 0, probe)
    if mask is None:
        full = np.ones((q_len, k_len), dtype=bool)
        return np.tril(full) if is_causal else full
    mask = mask.detach().cpu()
    allowed = mask if mask.dtype == torch.bool else torch.isfinite(mask)
    if allowed.dim() == 3:  # an ALiBi bias [heads, q, k]: the mask is the same for every head
        allowed = allowed[0]
    return allowed.numpy().astype(bool).copy()
