"""The forward pass step by step: every intermediate tensor of one text, in the order the model
computes it, each with a name, a one-line formula and its values (plain numpy).

Forward hooks on the model's blocks record what each block received and returned as the model
runs; each block is then opened up from its own weights (``tfstudio.nn`` classes, found with
``isinstance``, so generated attribute names do not matter):

- token embedding: the ids, the table rows E[id] (times sqrt(d) when scaled);
- positional encoding: the position vectors p and the sum x + p;
- norm: input and output;
- self-attention, for one chosen head: q, k, v (before and after the RoPE rotation), the scores
  q k^T / sqrt(d_head), the mask, the ALiBi bias, the softmax, the weighted sum of v; then the
  output projection of all heads; cross-attention the same with keys from the encoder;
- residual add; feed-forward: up projection, activation (gate for the GLU family), down
  projection; mixture of experts: router logits, chosen experts and their weights;
- recurrent layers: their hidden state per position;
- the head: logits, then at the chosen position the probabilities before and after
  temperature, top-k and top-p.

Every recomputed block output is checked against what the block really returned (``check``),
so the walk cannot drift from the model it explains.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at
from .attention import allowed_mask


@dataclass
class Step:
    """One intermediate tensor of the forward pass (batch row 0)."""

    name: str            # "layers.0.attn: scores"
    formula: str         # one line, e.g. "S = q k^T / sqrt(d_head)"
    value: np.ndarray
    block: str = ""      # the block it belongs to ("layers.0.attn"), "" for the sampling steps
    kind: str = ""       # what the block is ("attention", "feed_forward", ...)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)

    def to_dict(self, values: bool = True) -> dict:
        out = {"name": self.name, "formula": self.formula, "shape": list(self.shape),
               "block": self.block, "kind": self.kind}
        if values:
            out["values"] = json_values(self.value)
        return out


@dataclass
class Walk:
    steps: list[Step]
    tokens: dict[str, list[str]]     # per role, as ProbeInputs gives them
    ids: dict[str, list[int]]
    stream_role: str                 # the role whose positions the logits belong to
    position: int                    # the position whose next token the sampling steps show
    head: int
    logits: np.ndarray               # [T, V] the model's own output (batch row 0)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"no step named {name!r}")

    def to_dict(self, values: bool = True) -> dict:
        return {"tokens": self.tokens, "ids": self.ids, "stream_role": self.stream_role,
                "position": self.position, "head": self.head,
                "steps": [s.to_dict(values) for s in self.steps]}


def json_values(value: np.ndarray):
    """Nested lists for JSON; non-finite numbers (masked scores) become None (null)."""
    array = np.asarray(value)
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        obj = array.astype(object)
        obj[~np.isfinite(array)] = None
        return obj.tolist()
    return array.tolist()


# ---------------------------------------------------------------------------- recording
@dataclass
class Call:
    """One block's forward as it ran: its key, module, positional inputs and output."""

    key: tuple
    module: object
    args: tuple
    output: object


class CallRecorder:
    """Forward hooks on every leaf block (not the group copies) noting each call in order::

        with CallRecorder(model) as rec:
            model(ids)
        rec.calls  # [Call(("embed",), ...), Call(("pos",), ...), ...]
    """

    def __init__(self, model, include_groups: bool = False):
        from ..nn import GraphLayer

        self.calls: list[Call] = []
        self._handles = []
        self._targets = [(k, m) for k, m in model.blocks()
                         if include_groups or not isinstance(m, GraphLayer)]

    def __enter__(self) -> CallRecorder:
        for key, module in self._targets:
            self._handles.append(module.register_forward_hook(self._hook(key)))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _hook(self, key: tuple):
        def record(module, args, output):
            self.calls.append(Call(key, module, tuple(args), output))
        return record


# ---------------------------------------------------------------------------- the walk
def forward_walk(model, inputs, *, position: int = -1, head: int = 0,
                 layer: int | None = None, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 1.0) -> Walk:
    """Every step of ``model`` on ``inputs`` (a :class:`~tfstudio.probes.ProbeInputs`).

    ``head`` is the head whose attention is opened up (in every attention block, or only in
    layer ``layer``: the copy index of the block's outermost group); ``position`` (negative
    counts from the end) is where the probabilities are shown."""
    import torch

    with looking_at(model), CallRecorder(model) as recorder:
        logits = model(*inputs.args)
    length = logits.shape[1]
    if not -length <= position < length:
        raise ValueError(f"position {position} is outside the text's {length} tokens "
                         f"(0..{length - 1}, or negative from the end)")
    position %= length
    opener = _BlockOpener(head, layer, position, (temperature, top_k, top_p))
    steps: list[Step] = []
    with torch.no_grad():
        for call in recorder.calls:
            steps.extend(opener.open(call))
    final = logits[0].float().cpu().numpy().copy()
    return Walk(steps, inputs.tokens, inputs.ids, inputs.stream_role, position, head, final)


def _np(tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy().copy()


def _layer_of(key: tuple) -> int | None:
    return next((k for k in key if isinstance(k, int)), None)


class _BlockOpener:
    """Turns one recorded block call into its steps."""

    def __init__(self, head: int, layer: int | None, position: int, sampling: tuple):
        self.head, self.layer, self.position, self.sampling = head, layer, position, sampling

    def open(self, call: Call) -> list[Step]:
        from .. import nn as blocks

        m = call.module
        for cls, method in ((blocks.TokenEmbedding, self._embedding),
                            (blocks.PositionalEncoding, self._positions),
                            (blocks.Norm, self._norm),
                            (blocks.SelfAttention, self._self_attention),
                            (blocks.CrossAttention, self._cross_attention),
                            (blocks.Add, self._add),
                            (blocks.MixtureOfExperts, self._moe),
                            (blocks.FeedForward, self._feed_forward),
                            (blocks.Recurrent, self._recurrent),
                            (blocks.FixedWindow, self._window),
                            (blocks.LMHead, self._lm_head),
                            (blocks.Dropout, lambda c, n: [])):
            if isinstance(m, cls):
                return method(call, key_name(call.key))
        out = call.output[0] if isinstance(call.output, (tuple, list)) else call.output
        return [Step(f"{key_name(call.key)}: output", f"y = {type(m).__name__}(x)",
                     _np(out[0]), key_name(call.key), type(m).__name__)]

    # -------------------------------------------------------------- embeddings
    def _embedding(self, call: Call, name: str) -> list[Step]:
        m, ids = call.module, call.args[0][0]
        rows = m.weight[ids]
        formula = "x_t = E[id_t]" + (" * sqrt(d)" if m.scale else "")
        y = rows * math.sqrt(m.embedding_dim) if m.scale else rows
        check(y, call.output[0], name)
        return [Step(f"{name}: token ids", "id_t = tokenizer(text)_t",
                     ids.detach().cpu().numpy().astype(np.int64), name, "token_embedding"),
                Step(f"{name}: embedding", formula, _np(y), name, "token_embedding")]

    def _positions(self, call: Call, name: str) -> list[Step]:
        m, x = call.module, call.args[0][0]
        y = call.output[0]
        if m.scheme == "none":
            return []
        p = y - x  # exactly what the block added (no dropout in eval mode)
        formula = ("p_t = P[t] (learned table)" if m.scheme == "learned" else
                   "p_(t,2k) = sin(t / 10000^(2k/d)), p_(t,2k+1) = cos(...)")
        return [Step(f"{name}: position vectors", formula, _np(p), name, "positional_encoding"),
                Step(f"{name}: embedding + position", "x_t + p_t", _np(y), name,
                     "positional_encoding")]

    def _norm(self, call: Call, name: str) -> list[Step]:
        m, x = call.module, call.args[0][0].float()
        if m.kind == "layernorm":
            mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
            y = (x - mu) / (var + m.eps).sqrt() * m.weight
            y = y + m.bias if m.bias is not None else y
            formula = "(x - mean(x)) / sqrt(var(x) + eps) * g + b"
        else:
            y = x / (x.pow(2).mean(-1, keepdim=True) + m.eps).sqrt() * m.weight
            formula = "x / sqrt(mean(x^2) + eps) * g"
        check(y, call.output[0], name)
        return [Step(f"{name}: input", "x", _np(x), name, "norm"),
                Step(f"{name}: output", formula, _np(y), name, "norm")]

    # -------------------------------------------------------------- attention
    def _detail(self, call: Call) -> bool:
        return self.layer is None or _layer_of(call.key) == self.layer

    def _self_attention(self, call: Call, name: str) -> list[Step]:
        import torch

        from ..nn.positions import apply_rope, rope_angles

        m, x = call.module, call.args[0][0]
        T, H, KV, hd = x.shape[0], m.heads, m.kv_heads, m.head_dim
        q, k, v = (x @ m.qkv.weight.T + (m.qkv.bias if m.qkv.bias is not None else 0)).split(
            (H * hd, KV * hd, KV * hd), dim=-1)
        q, k, v = (t.view(T, -1, hd).transpose(0, 1) for t in (q, k, v))   # [heads, T, hd]
        steps = []
        h = self._pick_head(m, name)
        g = h // (H // KV)  # the K/V head this query head reads (grouped-query attention)
        detail = self._detail(call)
        label = f"{name}: head {h}"
        if detail:
            steps += [Step(f"{label}: q", "q = x W_q (this head's rows of qkv)", _np(q[h]),
                           name, "attention"),
                      Step(f"{label}: k", f"k = x W_k (K/V head {g})", _np(k[g]), name,
                           "attention"),
                      Step(f"{label}: v", f"v = x W_v (K/V head {g})", _np(v[g]), name,
                           "attention")]
        if m.position == "rope":
            cos, sin = rope_angles(torch.arange(T, device=x.device), hd, m.rope_base,
                                   m.rope_scaling)
            q = apply_rope(q[None], cos, sin)[0]
            k = apply_rope(k[None], cos, sin)[0]
            if detail:
                formula = "pair (2i, 2i+1) at position t turned by t * base^(-2i/d_head)"
                steps += [Step(f"{label}: q rotated (RoPE)", formula, _np(q[h]), name,
                               "attention"),
                          Step(f"{label}: k rotated (RoPE)", formula, _np(k[g]), name,
                               "attention")]
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)                 # [H, T, T]
        allowed = torch.as_tensor(allowed_mask(m, T, T), device=x.device)
        bias = None
        if m.position == "alibi":
            bias, _ = m._mask(T, T, 0, q)
            bias = torch.where(allowed, bias.float(), torch.zeros((), device=x.device))
        masked = (scores + bias if bias is not None else scores).masked_fill(~allowed,
                                                                              float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        mixed = weights @ v                                               # [H, T, hd]
        if detail:
            steps.append(Step(f"{label}: scores", "S = q k^T / sqrt(d_head)", _np(scores[h]),
                              name, "attention"))
            steps.append(Step(f"{label}: mask", "M[i, j] = query i may attend to key j"
                              + (" (causal)" if m.causal else "")
                              + (f" (window {m.window})" if m.window else ""),
                              allowed.cpu().numpy().copy(), name, "attention"))
            if bias is not None:
                steps.append(Step(f"{label}: ALiBi bias", f"B[i, j] = -{_slope(m, h):.4g} * "
                                  "|i - j| (this head's slope)", _np(bias[h]), name,
                                  "attention"))
            steps += [Step(f"{label}: softmax", "A = softmax(S" + (" + B" if bias is not None
                                                                  else "")
                           + ", masked -inf) per row", _np(weights[h]), name, "attention"),
                      Step(f"{label}: weighted values", "z = A v", _np(mixed[h]), name,
                           "attention")]
        steps.append(self._projection(call, name, m, mixed))
        return steps

    def _cross_attention(self, call: Call, name: str) -> list[Step]:
        m, x, memory = call.module, call.args[0][0], call.args[1][0]
        T, S, H, KV, hd = x.shape[0], memory.shape[0], m.heads, m.kv_heads, m.head_dim
        q = (x @ m.q.weight.T + (m.q.bias if m.q.bias is not None else 0)).view(T, H, hd)
        kv = memory @ m.kv.weight.T + (m.kv.bias if m.kv.bias is not None else 0)
        k, v = (t.reshape(S, KV, hd).transpose(0, 1) for t in kv.split(KV * hd, dim=-1))
        q = q.transpose(0, 1)
        h = self._pick_head(m, name)
        g = h // (H // KV)
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        weights = scores.softmax(-1)
        mixed = weights @ v
        steps = []
        if self._detail(call):
            label = f"{name}: head {h}"
            steps += [Step(f"{label}: q", "q = x W_q (queries from the target)", _np(q[h]),
                           name, "cross_attention"),
                      Step(f"{label}: k", f"k = memory W_k (keys from the source, K/V head "
                           f"{g})", _np(k[h]), name, "cross_attention"),
                      Step(f"{label}: v", "v = memory W_v (values from the source)",
                           _np(v[h]), name, "cross_attention"),
                      Step(f"{label}: scores", "S = q k^T / sqrt(d_head)", _np(scores[h]),
                           name, "cross_attention"),
                      Step(f"{label}: softmax", "A = softmax(S) per row (no mask)",
                           _np(weights[h]), name, "cross_attention"),
                      Step(f"{label}: weighted values", "z = A v", _np(mixed[h]), name,
                           "cross_attention")]
        steps.append(self._projection(call, name, m, mixed))
        return steps

    def _pick_head(self, module, name: str) -> int:
        if not 0 <= self.head < module.heads:
            raise ValueError(f"head {self.head} does not exist in {name} (it has "
                             f"{module.heads} heads: 0..{module.heads - 1})")
        return self.head

    @staticmethod
    def _projection(call: Call, name: str, m, mixed) -> Step:
        H, T, hd = mixed.shape
        y = mixed.transpose(0, 1).reshape(T, H * hd) @ m.out.weight.T
        y = y + m.out.bias if m.out.bias is not None else y
        check(y, call.output[0], name)
        return Step(f"{name}: output projection", "y = concat(z_1..z_H) W_o", _np(y), name,
                    "attention")

    # -------------------------------------------------------------- the rest of a block
    def _add(self, call: Call, name: str) -> list[Step]:
        y = call.args[0][0]
        for branch in call.args[1:]:
            y = y + branch[0]
        check(y, call.output[0], name)
        return [Step(f"{name}: residual add", "x + F(x)", _np(y), name, "add")]

    def _feed_forward(self, call: Call, name: str, prefix: str = "") -> list[Step]:
        from ..nn.feedforward import ACTIVATIONS, GATES

        m, x = call.module, call.args[0][0]
        label = f"{name}: {prefix}"
        up_b = " + b" if m.up.bias is not None else ""
        down_b = " + b" if m.down.bias is not None else ""
        h = x @ m.up.weight.T + (m.up.bias if m.up.bias is not None else 0)
        steps = []
        if m.gated:
            gate, up = h.split(m.d_ff, dim=-1)
            act = GATES[m.activation](gate)
            h = act * up
            steps += [Step(f"{label}up projection", f"u = x W_up{up_b}", _np(up), name,
                           "feed_forward"),
                      Step(f"{label}gate", f"g = {_GATE_NAMES[m.activation]}(x W_gate)",
                           _np(act), name, "feed_forward"),
                      Step(f"{label}gated", "h = g * u", _np(h), name, "feed_forward")]
        else:
            steps.append(Step(f"{label}up projection", f"u = x W_up{up_b}", _np(h), name,
                              "feed_forward"))
            h = ACTIVATIONS[m.activation](h)
            steps.append(Step(f"{label}activation", f"h = {m.activation}(u)", _np(h), name,
                              "feed_forward"))
        y = h @ m.down.weight.T + (m.down.bias if m.down.bias is not None else 0)
        if not prefix:
            check(y, call.output[0], name)
        steps.append(Step(f"{label}down projection", f"y = h W_down{down_b}", _np(y), name,
                          "feed_forward"))
        return steps

    def _moe(self, call: Call, name: str) -> list[Step]:
        import torch

        m, x = call.module, call.args[0][0]
        logits = x @ m.router.weight.T
        probs = torch.softmax(logits.float(), dim=-1)
        top_p, top_i = probs.topk(m.top_k, dim=-1)
        weights = top_p / top_p.sum(-1, keepdim=True)
        y = torch.zeros_like(x)
        for slot in range(m.top_k):
            for e, expert in enumerate(m.experts):
                chosen = top_i[:, slot] == e
                if chosen.any():
                    y[chosen] += expert(x[chosen]) * weights[chosen, slot, None]
        if m.shared is not None:
            y = y + m.shared(x)
        check(y, call.output[0], name)
        steps = [Step(f"{name}: router logits", "r = x W_router", _np(logits), name, "moe"),
                 Step(f"{name}: router probabilities", "softmax(r)", _np(probs), name, "moe"),
                 Step(f"{name}: chosen experts", f"the top {m.top_k} experts per token",
                      top_i.cpu().numpy().astype(np.int64), name, "moe"),
                 Step(f"{name}: expert weights", "w = p_chosen / sum(p_chosen)",
                      _np(weights), name, "moe")]
        # the expert the chosen position sent its token to first, opened up
        first = int(top_i[self.position if self.position < x.shape[0] else -1, 0])
        inner = Call(call.key, m.experts[first], (x[None],), None)
        steps += self._feed_forward(inner, name, prefix=f"expert {first}: ")
        steps.append(Step(f"{name}: mixture output", "y = sum_k w_k FFN_(e_k)(x)"
                          + (" + FFN_shared(x)" if m.shared is not None else ""), _np(y), name,
                          "moe"))
        return steps

    def _recurrent(self, call: Call, name: str) -> list[Step]:
        m, y = call.module, call.output[0]
        formula = {"lstm": "h_t = o_t * tanh(c_t), c_t = f_t * c_(t-1) + i_t * g_t",
                   "gru": "h_t = (1 - z_t) * n_t + z_t * h_(t-1)",
                   "rnn": "h_t = tanh(x_t W_ih + h_(t-1) W_hh + b)"}[m.cell]
        return [Step(f"{name}: input", "x", _np(call.args[0][0]), name, "rnn"),
                Step(f"{name}: hidden state", formula, _np(y), name, "rnn")]

    def _window(self, call: Call, name: str) -> list[Step]:
        import torch

        m, x = call.module, call.args[0][0]
        n, d = m.window, x.shape[-1]
        pad = m.pad if m.pad is not None else x.new_zeros(n - 1, d)
        stream = torch.cat((pad.to(x.dtype), x))    # the slots before the first token first
        w = torch.stack([stream[t:t + n].reshape(-1) for t in range(x.shape[0])])
        act = {"tanh": torch.tanh, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
               "none": lambda v: v}[m.activation]
        y = act(m.proj(w))
        check(y, call.output[0], name)
        before = "zeros" if m.pad is None else "learned vectors"
        return [Step(f"{name}: window", f"w_t = [x_(t-{n - 1}); ...; x_t] ({before} before "
                     "the start)", _np(w), name, "fixed_window"),
                Step(f"{name}: output", f"y_t = {m.activation}(W w_t + b)", _np(y), name,
                     "fixed_window")]

    # -------------------------------------------------------------- the output
    def _lm_head(self, call: Call, name: str) -> list[Step]:
        import torch.nn.functional as F

        m, x = call.module, call.args[0][0]
        steps = []
        if getattr(m, "dense", None) is not None:  # a masked-LM head's transform
            x = F.gelu(x @ m.dense.weight.T + m.dense.bias)
            x = m.norm(x)
            steps.append(Step(f"{name}: transform", "LayerNorm(gelu(x W_dense + b))", _np(x),
                              name, "head"))
        logits = x @ m.proj.weight.T + (m.proj.bias if m.proj.bias is not None else 0)
        check(logits, call.output[0], name)
        steps.append(Step(f"{name}: logits", "l = x W_vocab^T" + (" (tied to the embedding)"
                                                                 if m.tied else ""),
                          _np(logits), name, "head"))
        row = _np(logits)[self.position].astype(np.float64)
        temperature, top_k, top_p = self.sampling
        at = f"position {self.position}"
        steps.append(Step(f"probabilities at {at}", "p = softmax(l)", softmax(row), "",
                          "sampling"))
        if temperature > 0:
            steps.append(Step(f"probabilities at {at} after temperature {temperature:g}",
                              f"softmax(l / {temperature:g})", softmax(row / temperature), "",
                              "sampling"))
        final = filtered_probabilities(row, temperature, top_k, top_p)
        steps.append(Step(f"probabilities at {at} after top-k {top_k} and top-p {top_p:g}",
                          "keep the k likeliest, then the smallest set reaching p; renormalise",
                          final, "", "sampling"))
        return steps


_GATE_NAMES = {"glu": "sigmoid", "geglu": "gelu", "swiglu": "silu"}


def _slope(module, head: int) -> float:
    from ..nn.positions import alibi_slopes

    return alibi_slopes(module.heads)[head]


def check(recomputed, actual, name: str, tol: float = 1e-4) -> None:
    """The walk's own computation of a block must match what the block returned."""
    a = recomputed.detach().float()
    b = actual.detach().float()
    scale = 1.0 + float(b.abs().max()) if b.numel() else 1.0
    if a.shape != b.shape or float((a - b).abs().max()) > tol * scale:
        raise RuntimeError(f"the walk's computation of {name} disagrees with the model's; "
                           "the block may have changed without the walk following it")


# ---------------------------------------------------------------------------- sampling
def softmax(row: np.ndarray) -> np.ndarray:
    z = row - row.max()
    e = np.exp(z)
    return e / e.sum()


def filtered_probabilities(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0,
                           top_p: float = 1.0) -> np.ndarray:
    """The distribution sampling draws from: temperature (0: greedy), then top-k (0: all),
    then top-p (the smallest set of likeliest tokens whose mass reaches p), renormalised."""
    if temperature < 0 or not 0 < top_p <= 1 or top_k < 0:
        raise ValueError("temperature must be >= 0, top_k >= 0 and top_p in (0, 1]")
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        out = np.zeros_like(logits)
        out[int(np.argmax(logits))] = 1.0
        return out
    p = softmax(logits / temperature)
    keep = np.ones(p.shape, dtype=bool)
    if 0 < top_k < p.size:
        keep &= p >= np.sort(p)[-top_k]
    if top_p < 1:
        order = np.argsort(-np.where(keep, p, 0.0), kind="stable")
        q = np.where(keep, p, 0.0)[order]
        q = q / q.sum()
        before = np.cumsum(q) - q
        nucleus = np.zeros_like(keep)
        nucleus[order] = before < top_p
        keep &= nucleus
    out = np.where(keep, p, 0.0)
    return out / out.sum()
