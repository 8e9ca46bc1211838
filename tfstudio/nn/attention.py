"""Self-attention (MHA / GQA / MQA; causal or bidirectional; sliding window; RoPE or ALiBi) and
cross-attention.

One fused QKV projection, then softmax(Q K^T / sqrt(d_head) + mask) V in one place,
:meth:`_Attention._attend`: ``F.scaled_dot_product_attention`` with the mask (``is_causal=True``
and no mask tensor for plain causal attention, ``enable_gqa`` instead of repeating K/V), or,
while a probe listens at a point of the attention pattern (scores, mask, ALiBi bias, masked
scores, weights), the same mask applied step by step so the points see [B, H, Tq, Tk].

Hook points (:mod:`.hooks`), in the order computed: q, k, v, q and k after RoPE, scores, mask
(True = may attend), ALiBi bias, masked scores, weights, mixed heads (z = A v) and the output.

Weight layout: ``qkv.weight`` rows are [all query heads | key heads | value heads], each head
``head_dim = d_model // heads`` rows; ``out`` maps heads * head_dim back to d_model.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .hooks import Hooked, HookLabel
from .positions import alibi_slopes, rope_angles, rotate_pairs

PATTERN = ("scores", "mask", "bias", "masked", "weights")   # points only the explicit form passes
# enable_gqa arrived in torch 2.5; older versions repeat K/V instead
_SDPA_HAS_GQA = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)


class _Attention(Hooked):
    """What self- and cross-attention share: the head sizes and the attention call."""

    residual_branch = True  # its output projection writes into the residual stream

    def _setup(self, d_model: int, heads: int, kv_heads: int | None, dropout: float) -> None:
        kv_heads = kv_heads or heads
        if not 1 <= kv_heads <= heads <= d_model or heads % kv_heads:
            raise ValueError(f"heads ({heads}) must be a multiple of kv_heads ({kv_heads}) "
                             "(each K/V head serves an equal group of query heads) and at most "
                             f"d_model ({d_model}) (each head needs a dimension)")
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d_model // heads
        self.dropout = float(dropout)
        self._declare("q", "k", "v", "scores", "mask", "bias", "masked", "weights", "mixed",
                      "out")

    def _attention_points(self, mask: str, masked: str) -> dict[str, HookLabel]:
        """The points of the attention itself, from the scores on (``mask`` and ``masked``:
        the formulas of the mask and of the masked scores)."""
        return {"scores": HookLabel("scores", "S = q k^T / sqrt(d_head)", per="head"),
                "mask": HookLabel("mask", mask),
                "bias": HookLabel("ALiBi bias", "B[i, j] = -m_h |i - j| (m_h: this head's "
                                  "slope), -inf where masked", per="head"),
                "masked": HookLabel("masked scores", masked, per="head"),
                "weights": HookLabel("softmax", "A = softmax(masked scores) per row",
                                     per="head"),
                "mixed": HookLabel("weighted values", "z = A v", per="head"),
                "out": HookLabel("output projection", "y = concat(z_1..z_H) W_o")}

    def _attend(self, q, k, v, mask, is_causal: bool):
        """softmax(q k^T / sqrt(hd) + mask) v, q [B,H,Tq,hd], k/v [B,KV,Tk,hd], mask None, bool
        or ALiBi's [H,Tq,Tk]: fused, unless one listens at a point only the explicit form passes."""
        p, groups = (self.dropout if self.training else 0.0), self.heads // self.kv_heads
        fused = not (self.hooked and any(getattr(self, "hook_" + n).fns for n in PATTERN))
        if groups > 1 and not (fused and _SDPA_HAS_GQA):  # query head h reads K/V head h // groups
            k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
        if fused:
            gqa = {"enable_gqa": True} if k.shape[1] < q.shape[1] else {}
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                                  is_causal=is_causal, **gqa)
        if mask is None:   # every key, or (is_causal) key j <= query i
            mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device)
            mask = mask.tril() if is_causal else mask
        scores = self.hook_scores((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1])))
        alibi = mask.dtype != torch.bool   # a bias [H, Tq, Tk], -inf where masked
        self.hook_mask(torch.isfinite(mask[:1]) if alibi else mask[None])
        scores = self.hook_masked(scores + self.hook_bias(mask[None])[0] if alibi
                                  else scores.masked_fill(~mask, float("-inf")))
        weights = self.hook_weights(torch.softmax(scores.float(), dim=-1).to(q.dtype))
        return F.dropout(weights, p) @ v if p > 0 else weights @ v


class SelfAttention(_Attention):
    """Attention of a sequence over itself: ``window`` > 0 lets token i see keys j with
    i - j < window (itself included); ``position``: none, rope or alibi."""

    def __init__(self, d_model: int, heads: int = 4, kv_heads: int | None = None,
                 causal: bool = True, window: int = 0, bias: bool = True, dropout: float = 0.0,
                 position: str = "none", rope_base: float = 10000.0, rope_scaling: float = 1.0,
                 rope_scaling_type: str = "linear"):
        super().__init__()
        self._setup(d_model, heads, kv_heads, dropout)
        head_dim, kv_heads = self.head_dim, self.kv_heads
        if position not in ("none", "rope", "alibi"):
            raise ValueError(f"attention position must be none, rope or alibi; got '{position}'")
        if position == "rope" and head_dim % 2:
            raise ValueError(f"RoPE turns feature pairs: d_model / heads ({head_dim}) must be even")
        if rope_scaling_type not in ("linear", "ntk"):
            raise ValueError(f"rope_scaling_type must be linear or ntk; got '{rope_scaling_type}'")
        self._declare("q_rotated", "k_rotated")
        self.causal, self.window, self.position = bool(causal), int(window), position
        self.rope_base, self.rope_scaling = float(rope_base), float(rope_scaling)
        self.rope_scaling_type = rope_scaling_type
        self._rotations = None  # ((device, inference mode), cos + i sin of positions 0..N-1)
        self.qkv = nn.Linear(d_model, (heads + 2 * kv_heads) * head_dim, bias=bias)
        self.out = nn.Linear(heads * head_dim, d_model, bias=bias)

    def residual_projections(self) -> list[nn.Linear]:
        return [self.out]

    def _hook_labels(self) -> dict[str, HookLabel]:
        """What its points show (see :mod:`.hooks`)."""
        scaled = {"linear": f" / {self.rope_scaling:g}",
                  "ntk": f", base NTK-scaled by {self.rope_scaling:g}"}[self.rope_scaling_type]
        turn = ("pair (2i, 2i+1) at position t turned by t * base^(-2i/d_head)"
                + (scaled if self.rope_scaling != 1 else ""))
        mask = ("M[i, j] = query i may attend to key j" + (" (causal)" if self.causal else "")
                + (f" (window {self.window})" if self.window else ""))
        bias = " + B" if self.position == "alibi" else ""
        points = {"q": HookLabel("q", "q = x W_q (this head's rows of qkv)", per="head"),
                  "k": HookLabel("k", "k = x W_k (K/V head {kv_head})", per="kv_head"),
                  "v": HookLabel("v", "v = x W_v (K/V head {kv_head})", per="kv_head"),
                  "q_rotated": HookLabel("q rotated (RoPE)", turn, per="head"),
                  "k_rotated": HookLabel("k rotated (RoPE)", turn, per="kv_head"),
                  **self._attention_points(mask, f"S{bias}, -inf where M is False")}
        points["weights"].formula = f"A = softmax(S{bias}, masked -inf) per row"
        if self.position == "alibi":
            points["bias"].formulas = tuple(f"B[i, j] = -{m:.4g} * |i - j| (this head's slope)"
                                            for m in alibi_slopes(self.heads))
        return points

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        B, T, _ = x.shape
        H, KV, hd = self.heads, self.kv_heads, self.head_dim
        q, k, v = self.qkv(x).split((H * hd, KV * hd, KV * hd), dim=-1)
        q, k, v = (t.view(B, T, -1, hd).transpose(1, 2) for t in (q, k, v))   # [B, heads, T, hd]
        if self.hooked:   # 0: nothing listens, so no point is passed
            q, k, v = self.hook_q(q), self.hook_k(k), self.hook_v(v)
        start = 0
        if cache is not None:
            if not self.causal:
                raise ValueError("incremental decoding needs causal attention; this attention "
                                 "is bidirectional, so run the whole sequence without a cache")
            start = cache.offset
        if self.position == "rope":
            q, k = self._rope(q, k, start)
            if self.hooked:
                q, k = self.hook_q_rotated(q), self.hook_k_rotated(k)
        if cache is not None:
            k, v = self._extend_cache(cache.state(self), k, v)
        mask, is_causal = self._mask(T, k.shape[2], start, q)
        y = self._attend(q, k, v, mask, is_causal)
        y = self.out((self.hook_mixed(y) if self.hooked else y).transpose(1, 2).reshape(B, T, -1))
        return self.hook_out(y) if self.hooked else y

    def _rope(self, q, k, start: int):
        """q, k turned by RoPE at positions start.. (ONNX export: a real form; no complex there)"""
        rotation = self._rotation(start + q.shape[2], q.device)[start:]
        return rotate_pairs(q, rotation), rotate_pairs(k, rotation)

    def _rotation(self, length: int, device) -> torch.Tensor:
        """RoPE's cos + i sin for positions 0..length-1, kept (doubled for a longer sequence)."""
        key = (device, torch.is_inference_mode_enabled())  # inference tensors cannot train
        kept = self._rotations if self._rotations and self._rotations[0] == key else None
        if kept is None or len(kept[1]) < length:
            size = max(length, 2 * len(kept[1])) if kept else length
            cos, sin = rope_angles(torch.arange(size, device=device), self.head_dim,
                                   self.rope_base, self.rope_scaling, self.rope_scaling_type)
            self._rotations = (key, torch.complex(cos, sin))
        return self._rotations[1][:length]

    def _extend_cache(self, state: dict, k, v):
        if "k" in state:
            k, v = torch.cat((state["k"], k), dim=2), torch.cat((state["v"], v), dim=2)
        state["k"], state["v"] = k, v
        if self.window:  # later queries never look further back than window - 1 keys
            drop = max(k.shape[2] - (self.window - 1), 0)
            state["k"], state["v"] = k[:, :, drop:], v[:, :, drop:]
        return k, v

    def _mask(self, q_len: int, k_len: int, start: int, q: torch.Tensor):
        """(mask, is_causal) for queries at start.. and the last k_len keys ending with them."""
        # a window wider than every query-key distance here (at most k_len - 1) changes nothing
        window = self.window if 0 < self.window < k_len else 0
        if self.position != "alibi" and not window:
            if not self.causal:
                return None, False
            if q_len == k_len:
                return None, True           # the fast path: no mask tensor at all
            if q_len == 1:
                return None, False          # one new token sees every cached key
        key_start = start + q_len - k_len
        q_pos = torch.arange(start, start + q_len, device=q.device)
        k_pos = torch.arange(key_start, key_start + k_len, device=q.device)
        offset = q_pos[:, None] - k_pos[None, :]             # i - j
        distance = offset if self.causal else offset.abs()
        allowed = offset >= 0 if self.causal else torch.ones_like(offset, dtype=torch.bool)
        if window:
            allowed = allowed & (distance < window)
        if self.position != "alibi":
            return allowed, False
        slopes = torch.tensor(alibi_slopes(self.heads), device=q.device, dtype=torch.float32)
        bias = -slopes[:, None, None] * distance.to(torch.float32)
        return bias.masked_fill(~allowed, float("-inf")).to(q.dtype), False

    def extra_repr(self) -> str:
        kind = "causal" if self.causal else "bidirectional"
        extra = f", window={self.window}" if self.window else ""
        return (f"heads={self.heads}, kv_heads={self.kv_heads}, head_dim={self.head_dim}, "
                f"{kind}, position={self.position}{extra}")


class CrossAttention(_Attention):
    """Queries from the stream ``x``, keys and values from ``memory`` (the encoder output).

    No mask. With a decoding cache the projected memory is computed once and reused."""

    def __init__(self, d_model: int, heads: int = 4, kv_heads: int | None = None,
                 bias: bool = True, dropout: float = 0.0, memory_dim: int | None = None):
        super().__init__()
        self._setup(d_model, heads, kv_heads, dropout)
        head_dim, kv_heads = self.head_dim, self.kv_heads
        self.q = nn.Linear(d_model, heads * head_dim, bias=bias)
        self.kv = nn.Linear(memory_dim or d_model, 2 * kv_heads * head_dim, bias=bias)
        self.out = nn.Linear(heads * head_dim, d_model, bias=bias)

    def residual_projections(self) -> list[nn.Linear]:
        return [self.out]

    def _hook_labels(self) -> dict[str, HookLabel]:
        """What its points show (see :mod:`.hooks`)."""
        points = {"q": HookLabel("q", "q = x W_q (queries from the target)", per="head"),
                  "k": HookLabel("k", "k = memory W_k (keys from the source, K/V head "
                                 "{kv_head})", per="kv_head"),
                  "v": HookLabel("v", "v = memory W_v (values from the source)",
                                 per="kv_head"),
                  **self._attention_points("every query may attend to every source token",
                                           "S (no mask)")}
        points["weights"].formula = "A = softmax(S) per row (no mask)"
        return points

    def forward(self, x: torch.Tensor, memory: torch.Tensor, cache=None) -> torch.Tensor:
        B, T, _ = x.shape
        H, KV, hd = self.heads, self.kv_heads, self.head_dim
        q = self.q(x).view(B, T, H, hd).transpose(1, 2)
        state = cache.state(self) if cache is not None else None
        if state is not None and "k" in state:
            k, v = state["k"], state["v"]
        else:
            S = memory.shape[1]
            k, v = self.kv(memory).split(KV * hd, dim=-1)
            k = k.reshape(B, S, KV, hd).transpose(1, 2)
            v = v.reshape(B, S, KV, hd).transpose(1, 2)
            if state is not None:
                state["k"], state["v"] = k, v
        if self.hooked:   # 0: nothing listens, so no point is passed
            q, k, v = self.hook_q(q), self.hook_k(k), self.hook_v(v)
        y = self._attend(q, k, v, None, False)
        y = self.out((self.hook_mixed(y) if self.hooked else y).transpose(1, 2).reshape(B, T, -1))
        return self.hook_out(y) if self.hooked else y

    def extra_repr(self) -> str:
        return f"heads={self.heads}, kv_heads={self.kv_heads}, head_dim={self.head_dim}"
