"""Position arithmetic shared by the blocks: sinusoidal tables, RoPE rotations, ALiBi slopes."""
import math

import torch


def sinusoidal_table(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """The sinusoidal position table, shape [len(positions), d].

    PE(pos, 2k) = sin(pos / 10000^(2k/d)), PE(pos, 2k+1) = cos(...). Computed on demand, so any
    length works; an odd width keeps the last sine column."""
    k = torch.arange(0, d_model, 2, device=positions.device, dtype=torch.float32)
    angles = positions.to(torch.float32)[:, None] * torch.exp(k * (-math.log(10000.0) / d_model))
    table = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    return table[:, :d_model]


def rope_angles(positions: torch.Tensor, head_dim: int, base: float, scaling: float,
                scaling_type: str = "linear"):
    """cos and sin of pos * w_k with w_k = base^(-2k/head_dim); each [T, head_dim/2]. ``scaling``
    s stretches the context: linear divides the positions by s; ntk (NTK-aware) keeps them and
    raises the base to base * s^(head_dim / (head_dim - 2))."""
    k = torch.arange(0, head_dim, 2, device=positions.device, dtype=torch.float32)
    if scaling_type == "ntk":
        if head_dim <= 2:
            raise ValueError("NTK-aware RoPE scaling needs a head size above 2")
        base, scaling = base * scaling ** (head_dim / (head_dim - 2)), 1.0
    inv_freq = base ** (-k / head_dim)
    angles = (positions.to(torch.float32) / scaling)[:, None] * inv_freq[None, :]
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (even, odd) feature pair of ``x`` [B, H, T, head_dim] by its angle.

    In real arithmetic (ONNX has no complex numbers; :func:`rotate_pairs` is the fast form)."""
    even, odd = x[..., 0::2].float(), x[..., 1::2].float()
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return rotated.flatten(-2).to(x.dtype)


def rotate_pairs(x: torch.Tensor, rotation: torch.Tensor) -> torch.Tensor:
    """RoPE as one complex multiply, as in Meta's LLaMA: each (even, odd) pair of ``x``
    [..., T, head_dim], read as a complex number, times ``rotation`` (cos + i sin) [T, hd/2]."""
    pairs = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)))
    return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)


def alibi_slopes(heads: int) -> list[float]:
    """ALiBi's per-head slopes (Press et al. 2022): for n a power of two, 2^(-8/n), 2^(-16/n),
    ..., 2^(-8); otherwise the paper's recipe: those of the closest smaller power of two m, then
    every other slope of 2m (its odd-numbered terms) until there are n."""
    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    if heads & (heads - 1) == 0:
        return power_of_two(heads)
    m = 2 ** int(math.floor(math.log2(heads)))
    return power_of_two(m) + power_of_two(2 * m)[0::2][: heads - m]
