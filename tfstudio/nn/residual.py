"""The residual stream's joints: element-wise sums, and dropout."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel


class Add(Hooked):
    """y = in1 + in2 + ...: the residual connection (hook point: the sum)."""

    def __init__(self):
        super().__init__()
        self._declare("out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"out": HookLabel("residual add", "x + F(x)")}

    def forward(self, *streams: torch.Tensor) -> torch.Tensor:
        out = streams[0]
        for s in streams[1:]:
            out = out + s
        return self.hook_out(out) if self.hooked else out


class Dropout(nn.Module):
    """Zeroes a fraction ``p`` of activations while training, scaling the rest by 1/(1-p)."""

    def __init__(self, p: float = 0.1):
        super().__init__()
        self.p = float(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, self.p, self.training) if self.p > 0 else x

    def extra_repr(self) -> str:
        return f"p={self.p}"
