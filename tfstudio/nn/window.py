"""The fixed-window context of Bengio et al. (2003)'s neural probabilistic language model."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel

WINDOW_ACTIVATIONS = {"tanh": torch.tanh, "relu": F.relu, "gelu": F.gelu, "none": None}


class FixedWindow(Hooked):
    """y_t = act(W [x_(t-n+1); ...; x_(t-1); x_t] + b): the last ``window`` token vectors,
    concatenated oldest first, projected back to d_model.

    Position t sees tokens t-n+1..t and nothing else: no attention, no recurrent state, a fixed
    amount of history. Slots before the start of the sequence read ``padding``: zeros, or one
    learned vector per slot (``pad`` [window - 1, d_model]). With a decoding cache the last
    window - 1 inputs are carried over, so a sequence fed in pieces gives the same outputs."""

    def __init__(self, d_model: int, window: int = 4, padding: str = "zero",
                 activation: str = "tanh", bias: bool = True):
        super().__init__()
        if window < 1:
            raise ValueError(f"the window must hold at least one token; got {window}")
        if padding not in ("zero", "learned"):
            raise ValueError(f"padding must be zero or learned; got '{padding}'")
        if activation not in WINDOW_ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(WINDOW_ACTIVATIONS)}; "
                             f"got '{activation}'")
        self.window, self.padding, self.activation = window, padding, activation
        self.proj = nn.Linear(window * d_model, d_model, bias=bias)
        learned = padding == "learned" and window > 1
        self.pad = nn.Parameter(torch.randn(window - 1, d_model) * 0.02) if learned else None
        self._declare("windows", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        """What its points show (see :mod:`.hooks`)."""
        before = ("learned vectors before the start" if self.pad is not None
                  else "zeros before the start")
        act = "W w_t + b" if self.activation == "none" else f"{self.activation}(W w_t + b)"
        return {"windows": HookLabel("window", f"w_t = [x_(t-{self.window - 1}); ...; x_t] "
                                               f"({before})"),
                "out": HookLabel("output", f"y_t = {act}")}

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        batch, length, d = x.shape
        state = cache.state(self) if cache is not None else None
        past = state.get("past") if state is not None else None
        if past is None:  # the slots before the first token
            pad = self.pad if self.pad is not None else x.new_zeros(self.window - 1, d)
            past = pad.to(x.dtype).expand(batch, -1, -1)
        stream = torch.cat((past, x), dim=1)                      # [B, n - 1 + T, D]
        if state is not None:
            state["past"] = stream[:, stream.shape[1] - (self.window - 1):]
        # windows[b, t] = stream[b, t : t + n], oldest first, flattened to n * D: one shifted
        # slice per slot (Tensor.unfold has no ONNX export at a dynamic length)
        windows = torch.cat([stream[:, i:i + length] for i in range(self.window)], dim=-1)
        y = self.proj(self.hook_windows(windows) if self.hooked else windows)
        act = WINDOW_ACTIVATIONS[self.activation]
        y = act(y) if act is not None else y
        return self.hook_out(y) if self.hooked else y

    def extra_repr(self) -> str:
        return f"window={self.window}, padding={self.padding}, activation={self.activation}"
