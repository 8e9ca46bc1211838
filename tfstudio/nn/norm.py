"""Normalisation: LayerNorm and RMSNorm over the last (feature) dimension."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel


class Norm(Hooked):
    """LayerNorm or RMSNorm over the last dimension. ``layernorm``: (x - mean) / sqrt(var + eps)
    * weight [d] (+ bias [d], with ``bias``); ``rmsnorm``: x / sqrt(mean(x^2) + eps) * weight [d]
    (no mean, no bias)."""

    def __init__(self, d_model: int, kind: str = "layernorm", eps: float = 1e-5,
                 bias: bool = True):
        super().__init__()
        if kind not in ("layernorm", "rmsnorm"):
            raise ValueError(f"norm kind must be 'layernorm' or 'rmsnorm'; got '{kind}'")
        self.kind, self.eps, self.d_model = kind, float(eps), d_model
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = (nn.Parameter(torch.zeros(d_model))
                     if kind == "layernorm" and bias else None)
        self._declare("in", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"in": HookLabel("input", "x"),
                "out": HookLabel("output", "(x - mean(x)) / sqrt(var(x) + eps) * g"
                                 + (" + b" if self.bias is not None else "")
                                 if self.kind == "layernorm"
                                 else "x / sqrt(mean(x^2) + eps) * g")}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.hook_in(x) if self.hooked else x   # hooked 0: nothing listens, no point passed
        y = (F.layer_norm(x, (self.d_model,), self.weight, self.bias, self.eps)
             if self.kind == "layernorm" else F.rms_norm(x, (self.d_model,), self.weight, self.eps))
        return self.hook_out(y) if self.hooked else y

    def reset_parameters(self) -> None:
        nn.init.ones_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def extra_repr(self) -> str:
        return f"{self.kind}, {self.d_model}, eps={self.eps}"
