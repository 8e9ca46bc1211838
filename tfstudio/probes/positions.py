"""Positional information per scheme, read from the model's own modules.

- sinusoidal / learned (a PositionalEncoding block): ``table`` [L, d] is exactly what the block
  adds to a zero input at positions 0..L-1 (for a learned table: its trained rows), and
  ``similarity`` = table @ table.T, the dot product p_i . p_j of every pair of positions;
- rope (an attention block with position=rope): ``frequencies`` [head_dim/2], the angle each
  feature pair turns per position (w_k / scaling); ``offsets`` and ``scores``: the score
  q_m . k_n / head_dim of two all-ones vectors rotated to positions m and n, which depends on
  m - n only; ``similarity`` the same score for every (m, n);
- alibi (position=alibi): ``slopes`` [heads] and ``bias`` [heads, L, L], the bias the module adds
  to its attention scores (-inf where the causal mask applies); ``similarity`` its head mean.

Each scheme's entry also names the block it came from (``block``).
"""
from __future__ import annotations

import numpy as np

from ..graph.kinds import ABSOLUTE_SCHEMES, ALIBI, IN_ATTENTION_SCHEMES, LEARNED, ROPE, SINUSOIDAL
from ._util import key_name, looking_at


def position_data(model, length: int = 64, *, table_rows: int | None = None
                  ) -> dict[str, dict]:
    """{scheme: data} for every scheme the model uses (empty when it has no position
    information, as in a recurrent model or attention without positions). ``table_rows``: the
    rows of a learned table to read instead of ``length`` (at most the table's own)."""
    out: dict[str, dict] = {}
    with looking_at(model):
        for key, module in model.blocks():
            scheme = _scheme_of(module)
            if scheme is None or scheme in out:
                continue  # the first block of each scheme stands for the rest
            reader = {SINUSOIDAL: _table, LEARNED: _table, ROPE: _rope,
                      ALIBI: _alibi}[scheme]
            rows = table_rows if table_rows and scheme == LEARNED else length
            out[scheme] = {"block": key_name(key), **reader(module, rows)}
    return out


def _scheme_of(module) -> str | None:
    if type(module).__name__ == "PositionalEncoding" and module.scheme in ABSOLUTE_SCHEMES:
        return module.scheme
    position = getattr(module, "position", None)
    return position if position in IN_ATTENTION_SCHEMES else None


def _table(module, length: int) -> dict:
    import torch

    if module.scheme == LEARNED:
        length = min(length, module.max_len)
    device = _device_of(module)
    table = module(torch.zeros(1, length, module.d_model, device=device))[0].float().cpu()
    return {"table": table.numpy().copy(), "similarity": (table @ table.T).numpy().copy()}


def _device_of(module):
    import torch

    params = list(module.parameters())
    return params[0].device if params else torch.device("cpu")


def rope_score(module, q, k, m: int, n: int) -> float:
    """q . k after the module's RoPE rotation of q to position m and of k to position n
    (``q``, ``k``: [head_dim] tensors)."""
    import torch

    from ..nn.positions import apply_rope, rope_angles

    def rotate(v, pos: int):
        cos, sin = rope_angles(torch.tensor([pos]), module.head_dim, module.rope_base,
                               module.rope_scaling, module.rope_scaling_type)
        return apply_rope(v.float().view(1, 1, 1, -1), cos, sin).view(-1)

    return float(rotate(q, m) @ rotate(k, n))


def _rope(module, length: int) -> dict:
    import torch

    from ..nn.positions import apply_rope, rope_angles

    hd = module.head_dim
    positions = torch.arange(length)
    cos, sin = rope_angles(positions, hd, module.rope_base, module.rope_scaling,
                           module.rope_scaling_type)
    ones = torch.ones(1, 1, length, hd)
    rotated = apply_rope(ones, cos, sin)[0, 0]                        # [L, hd]
    similarity = (rotated @ rotated.T) / hd
    # rope_angles gives cos/sin of pos * w_k (as scaled); at position 1 that angle is the rate
    cos1, sin1 = rope_angles(torch.tensor([1]), hd, module.rope_base, module.rope_scaling,
                             module.rope_scaling_type)
    frequencies = torch.atan2(sin1, cos1)[0]
    return {"frequencies": frequencies.numpy().copy(), "offsets": np.arange(length),
            "scores": similarity[:, 0].numpy().copy(), "similarity": similarity.numpy().copy(),
            "base": float(module.rope_base), "scaling": float(module.rope_scaling),
            "scaling_type": module.rope_scaling_type}


def _alibi(module, length: int) -> dict:
    import torch

    from ..nn.positions import alibi_slopes

    probe = torch.zeros(1, dtype=torch.float32)
    bias, _ = module._mask(length, length, 0, probe)  # the module's own bias: [H, L, L]
    bias = bias.float().cpu()
    return {"slopes": np.asarray(alibi_slopes(module.heads), dtype=np.float64),
            "bias": bias.numpy().copy(), "similarity": bias.mean(0).numpy().copy(),
            "causal": bool(module.causal)}
