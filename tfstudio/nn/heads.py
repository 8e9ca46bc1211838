"""Output heads: the hidden stream to vocabulary logits."""
import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel


class LMHead(Hooked):
    """logits = x W^T (+ b) (``proj``); :meth:`tie_to` makes it share an embedding's Parameter."""

    def __init__(self, d_model: int, vocab_size: int, bias: bool = False):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab_size, bias=bias)
        self.tied = False
        self._declare("logits")

    def tie_to(self, embedding: nn.Embedding) -> None:
        if tuple(embedding.weight.shape) != tuple(self.proj.weight.shape):
            raise ValueError(f"cannot tie a head of shape {tuple(self.proj.weight.shape)} (vocab x "
                             f"d_model) to an embedding of shape {tuple(embedding.weight.shape)}; "
                             "make vocab_size and d_model equal, or untie the head")
        self.proj.weight = embedding.weight
        self.tied = True

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"logits": HookLabel("logits", "l = x W_vocab^T"
                                    + (" (tied to the embedding)" if self.tied else ""))}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.proj(x)
        return self.hook_logits(logits) if self.hooked else logits


class MLMHead(LMHead):
    """BERT's masked-LM head: ``dense`` Linear(d, d) -> GELU -> ``norm`` LayerNorm -> ``proj``.
    Without ``transform`` it is a plain projection. Hook points: the transform, the logits."""

    def __init__(self, d_model: int, vocab_size: int, bias: bool = True, transform: bool = True,
                 eps: float = 1e-5):
        super().__init__(d_model, vocab_size, bias)
        self.dense = nn.Linear(d_model, d_model) if transform else None
        self.norm = nn.LayerNorm(d_model, eps=eps) if transform else None
        self._declare("transform")

    def _hook_labels(self) -> dict[str, HookLabel]:
        return {"transform": HookLabel("transform", "LayerNorm(gelu(x W_dense + b))"),
                **super()._hook_labels()}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dense is not None:
            x = self.norm(F.gelu(self.dense(x)))
            x = self.hook_transform(x) if self.hooked else x
        logits = self.proj(x)
        return self.hook_logits(logits) if self.hooked else logits
