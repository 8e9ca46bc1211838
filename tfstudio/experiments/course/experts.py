"""Which tokens each expert takes: a trained mixture of experts run over validation text, the
router's choices counted per layer and expert.

For every token the router of each MoE layer picks ``top_k`` experts (read at the layer's
"choices" hook point); an expert's tokens are the ids it was picked for. Its share is its count
over all picks of that layer, and each of its top tokens says how many of that token's
occurrences it took.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class ExpertTokens:
    """One expert of one layer: its share of the layer's picks and its commonest tokens as
    (token id, times this expert took it, times the token occurred)."""
    expert: int
    share: float
    top: tuple[tuple[int, int, int], ...]


def tokens_by_expert(ids: np.ndarray, assignments: np.ndarray, experts: int, top: int = 5
                     ) -> list[ExpertTokens]:
    """Per expert, from token ``ids`` [N] and the experts chosen for each [N, k]."""
    ids = np.asarray(ids).reshape(-1)
    chosen = np.asarray(assignments).reshape(len(ids), -1)
    seen = Counter(ids.tolist())
    total = chosen.size
    out = []
    for e in range(experts):
        taken = Counter(ids[(chosen == e).any(axis=1)].tolist())
        picks = int((chosen == e).sum())
        ranked = sorted(taken.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        out.append(ExpertTokens(e, picks / total if total else 0.0,
                                tuple((t, n, seen[t]) for t, n in ranked)))
    return out


def route(model, ids: Sequence[int], window: int, windows: int = 16) -> dict[str, tuple]:
    """Run ``model`` over up to ``windows`` consecutive windows of ``window`` tokens of
    ``ids`` and return, per MoE layer (its module name), (token ids [N], chosen experts [N, k],
    number of experts)."""
    import torch

    from ...nn import attached
    from ...nn.feedforward import MixtureOfExperts

    moes = {name: m for name, m in model.named_modules() if isinstance(m, MixtureOfExperts)}
    if not moes:
        raise ValueError("the model has no mixture-of-experts layer whose routing could be read")
    count = min(windows, len(ids) // window)
    if count < 1:
        raise ValueError(f"{len(ids)} tokens do not fill one window of {window}")
    batch = torch.tensor(np.asarray(ids[:count * window], dtype=np.int64).reshape(count, window))
    batch = batch.to(next(model.parameters()).device)
    chosen = {}

    def keep(name, _point, tensor):   # [B, T, k] at "<moe>.hook_choices"
        chosen[name.rpartition(".")[0]] = tensor.reshape(-1, tensor.shape[-1]).cpu().numpy()
    model.eval()
    with torch.no_grad(), attached(model, keep, names={f"{n}.hook_choices" for n in moes}):
        model(batch)
    flat = batch.reshape(-1).cpu().numpy()
    return {name: (flat, chosen[name], m.num_experts) for name, m in moes.items()}


def expert_tokens(model, ids: Sequence[int], window: int, top: int = 5
                  ) -> dict[str, list[ExpertTokens]]:
    """:func:`tokens_by_expert` for every MoE layer of ``model`` over ``ids``."""
    return {name: tokens_by_expert(tokens, chosen, experts, top)
            for name, (tokens, chosen, experts) in route(model, ids, window).items()}
