"""Token embeddings and absolute positional encodings."""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel
from .positions import sinusoidal_table


class TokenEmbedding(Hooked, nn.Embedding):
    """Token id -> learned vector (``weight`` [vocab, d]); optionally times sqrt(d_model)."""

    def __init__(self, vocab_size: int, d_model: int, scale: bool = False):
        super().__init__(vocab_size, d_model)
        self.scale = bool(scale)
        self._declare("ids", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"ids": HookLabel("token ids", "id_t = tokenizer(text)_t"),
                "out": HookLabel("embedding", "x_t = E[id_t]"
                                 + (" * sqrt(d)" if self.scale else ""))}

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.dim() != 2:
            raise ValueError(f"token ids must be shaped [batch, length]; got {tuple(ids.shape)}")
        try:
            y = F.embedding(ids, self.weight)
        except IndexError:
            raise ValueError(f"a token id is outside the vocabulary (0..{self.num_embeddings - 1})"
                             "; make the embedding's vocab_size match the tokenizer") from None
        y = y * math.sqrt(self.embedding_dim) if self.scale else y
        if self.hooked:   # 0: nothing listens, no point is passed
            self.hook_ids(ids)
            y = self.hook_out(y)
        return y

    def extra_repr(self) -> str:
        return super().extra_repr() + (", scale=sqrt(d)" if self.scale else "")


class PositionalEncoding(Hooked):
    """Adds absolute position information, then dropout.

    ``sinusoidal`` (fixed), ``learned`` (a max_len x d table, parameter ``table.weight``) or
    ``none``. With a decoding cache the chunk starts at position ``cache.offset``. Hook points:
    the position vectors added, and the sum."""

    def __init__(self, d_model: int, scheme: str = "sinusoidal", max_len: int = 1024,
                 dropout: float = 0.0):
        super().__init__()
        if scheme not in ("none", "sinusoidal", "learned"):
            raise ValueError("positional scheme must be none, sinusoidal or learned; "
                             f"got '{scheme}'")
        self.d_model, self.scheme, self.max_len, self.dropout = d_model, scheme, max_len, dropout
        self.table = nn.Embedding(max_len, d_model) if scheme == "learned" else None
        self._declare("positions", "out")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"positions": HookLabel("position vectors", "p_t = P[t] (learned table)"
                                       if self.scheme == "learned" else
                                       "p_(t,2k) = sin(t / 10000^(2k/d)), "
                                       "p_(t,2k+1) = cos(...)"),
                "out": HookLabel("embedding + position", "x_t + p_t")}

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        start = cache.offset if cache is not None else 0
        length = x.shape[1]
        if self.scheme == "learned":
            if start + length > self.max_len:
                raise ValueError(
                    f"position {start + length - 1} is past the learned position table "
                    f"(max_len={self.max_len}); shorten the sequence, raise max_len, or use "
                    "sinusoidal, RoPE or ALiBi positions")
            p = self.table.weight[start:start + length]
        elif self.scheme == "sinusoidal":
            positions = torch.arange(start, start + length, device=x.device)
            p = sinusoidal_table(positions, self.d_model).to(x.dtype)
        else:
            return F.dropout(x, self.dropout, self.training) if self.dropout > 0 else x
        x = self.hook_out(x + self.hook_positions(p[None])) if self.hooked else x + p
        return F.dropout(x, self.dropout, self.training) if self.dropout > 0 else x

    def extra_repr(self) -> str:
        return f"{self.scheme}, d_model={self.d_model}, max_len={self.max_len}"
