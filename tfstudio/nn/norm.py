"""Normalisation: LayerNorm and RMSNorm over the last (feature) dimension."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import HookPoint


class Norm(nn.Module):
    """LayerNorm or RMSNorm over the last dimension.

    ``layernorm``: (x - mean) / sqrt(var + eps) * weight (+ bias).
    ``rmsnorm``: x / sqrt(mean(x^2) + eps) * weight (no mean, no bias).

    Parameters: ``weight`` [d] and, for a LayerNorm with ``bias``, ``bias`` [d]. Hook points:
    the input and the output."""

    hooked = False

    def __init__(self, d_model: int, kind: str = "layernorm", eps: float = 1e-5,
                 bias: bool = True):
        super().__init__()
        if kind not in ("layernorm", "rmsnorm"):
            raise ValueError(f"norm kind must be 'layernorm' or 'rmsnorm'; got '{kind}'")
        self.kind, self.eps, self.d_model = kind, float(eps), d_model
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = (nn.Parameter(torch.zeros(d_model))
                     if kind == "layernorm" and bias else None)

    def _hook_points(self) -> dict[str, HookPoint]:
        return {"in": HookPoint("input", "x"),
                "out": HookPoint("output", "(x - mean(x)) / sqrt(var(x) + eps) * g"
                                 + (" + b" if self.bias is not None else "")
                                 if self.kind == "layernorm"
                                 else "x / sqrt(mean(x^2) + eps) * g")}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.hooked:
            x = self.hook_in(x)
        if self.kind == "layernorm":
            y = F.layer_norm(x, (self.d_model,), self.weight, self.bias, self.eps)
        else:
            y = F.rms_norm(x, (self.d_model,), self.weight, self.eps)
        return self.hook_out(y) if self.hooked else y

    def reset_parameters(self) -> None:
        nn.init.ones_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def extra_repr(self) -> str:
        return f"{self.kind}, {self.d_model}, eps={self.eps}"
