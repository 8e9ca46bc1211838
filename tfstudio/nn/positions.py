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
    """cos, sin of pos * base^(-2k/head_dim), each [T, head_dim/2]; ``scaling`` s stretches the
    context: linear divides pos by s, ntk (NTK-aware) raises base to base * s^(hd / (hd - 2))."""
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
    """RoPE as one complex multiply, as LLaMA: x's pairs [..., T, hd] times rotation [T, hd/2]."""
    pairs = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)))
    return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)


def alibi_slopes(heads: int) -> list[float]:
    """ALiBi's slopes (Press et al. 2022), m the largest power of two <= heads: 2^(-8/m), 2^(-16/m),
    ..., 2^(-8), then every other slope of 2m (2^(-4/m), 2^(-12/m), ...) until there are heads."""
    m = 2 ** (heads.bit_length() - 1)
    return ([2.0 ** (-8.0 * (i + 1) / m) for i in range(m)]
            + [2.0 ** (-4.0 * (2 * i + 1) / m) for i in range(heads - m)])
