"""The torch blocks against formulas, published values and hand-written second implementations."""
import ast
import math
import sys
from pathlib import Path

import pytest
import torch

from tfstudio.graph.schema import get_spec
from tfstudio.nn import (CrossAttention, DecodingCache, FeedForward, MixtureOfExperts, Norm,
                         PositionalEncoding, Recurrent, SelfAttention, TokenEmbedding,
                         alibi_slopes, apply_rope, attached, rope_angles, sinusoidal_table)
from tfstudio.nn.heads import LMHead, MLMHead


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


# ---------------------------------------------------------------- positions
def test_sinusoidal_values_at_position_2_width_8():
    # reference values from PE(pos,2k)=sin(pos/10000^(2k/d)), PE(pos,2k+1)=cos(...)
    expected = [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000]
    row = sinusoidal_table(torch.tensor([2]), 8)[0]
    assert row.tolist() == pytest.approx(expected, abs=1e-4)


def test_sinusoidal_encoding_is_added_from_the_cache_offset():
    pe = PositionalEncoding(8, "sinusoidal")
    x = torch.zeros(1, 3, 8)
    cache = DecodingCache()
    cache.offset = 2
    out = pe(x, cache)
    assert out[0, 0].tolist() == pytest.approx(
        [math.sin(2), math.cos(2), math.sin(2 / 10), math.cos(2 / 10), math.sin(2 / 100),
         math.cos(2 / 100), math.sin(2 / 1000), math.cos(2 / 1000)], abs=1e-6)


def test_learned_positions_refuse_positions_past_the_table():
    pe = PositionalEncoding(4, "learned", max_len=5)
    with pytest.raises(ValueError, match="max_len=5"):
        pe(torch.zeros(1, 6, 4))


def _rope_complex(x, pos, base):
    """Second implementation: each (even, odd) pair as a complex number times e^(i pos w_k)."""
    hd = x.shape[-1]
    w = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    z = torch.complex(x[..., 0::2].double(), x[..., 1::2].double()) * torch.polar(
        torch.ones_like(w), pos * w)
    return torch.stack((z.real, z.imag), -1).flatten(-2)


def test_rope_matches_complex_rotation_and_scores_depend_only_on_the_offset():
    hd, base = 16, 10000.0
    q, k = torch.randn(hd), torch.randn(hd)

    def rot(v, pos, scaling=1.0):
        cos, sin = rope_angles(torch.tensor([pos]), hd, base, scaling)
        return apply_rope(v.view(1, 1, 1, hd), cos, sin).view(hd)

    assert torch.allclose(rot(q, 7).double(), _rope_complex(q, 7, base), atol=1e-5)
    score = lambda m, n: float(rot(q, m) @ rot(k, n))  # noqa: E731
    assert score(5, 2) == pytest.approx(score(13, 10), abs=1e-4)
    assert score(5, 2) == pytest.approx(score(3, 0), abs=1e-4)
    assert score(5, 2) != pytest.approx(score(5, 3), abs=1e-3)
    # linear scaling s: position p behaves like p / s
    assert torch.allclose(rot(q, 8, scaling=2.0), rot(q, 4), atol=1e-6)


def test_alibi_slopes_follow_the_paper():
    assert alibi_slopes(8) == [2.0 ** -i for i in range(1, 9)]
    # 6 heads: slopes of 4 heads, then every other slope of 8 heads (Press et al., get_slopes)
    assert alibi_slopes(6) == pytest.approx([2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3])


# ---------------------------------------------------------------- norms, FFN
def test_layernorm_and_rmsnorm_match_their_formulas():
    x = torch.randn(2, 5, 12)
    ln = Norm(12, "layernorm", eps=1e-5)
    rms = Norm(12, "rmsnorm", eps=1e-6)
    with torch.no_grad():
        for m in (ln, rms):
            m.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-1, 1)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    assert torch.allclose(ln(x), (x - mean) / torch.sqrt(var + 1e-5) * ln.weight + ln.bias,
                          atol=1e-5)
    rms_expected = x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-6) * rms.weight
    assert torch.allclose(rms(x), rms_expected, atol=1e-5)
    assert rms.bias is None


@pytest.mark.parametrize("activation,act,gated", [
    ("relu", torch.relu, False),
    ("gelu", lambda h: 0.5 * h * (1 + torch.erf(h / math.sqrt(2))), False),
    ("gelu_tanh", lambda h: 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi)
                                                      * (h + 0.044715 * h ** 3))), False),
    ("silu", lambda h: h * torch.sigmoid(h), False),
    ("glu", torch.sigmoid, True),
    ("geglu", lambda h: 0.5 * h * (1 + torch.erf(h / math.sqrt(2))), True),
    ("swiglu", lambda h: h * torch.sigmoid(h), True),
])
def test_feed_forward_activations(activation, act, gated):
    ffn = FeedForward(8, 16, activation, bias=True)
    x = torch.randn(2, 3, 8)
    w, b = ffn.up.weight, ffn.up.bias
    if gated:
        gate = x @ w[:16].T + b[:16]
        up = x @ w[16:].T + b[16:]
        inner = act(gate) * up
    else:
        inner = act(x @ w.T + b)
    expected = inner @ ffn.down.weight.T + ffn.down.bias
    assert torch.allclose(ffn(x), expected, atol=1e-5)


# ---------------------------------------------------------------- attention
def hand_attention(x, qkv_w, qkv_b, out_w, out_b, heads, kv_heads, mask=None):
    """Second implementation: per-head loops, explicit softmax."""
    B, T, d = x.shape
    hd = d // heads
    proj = x @ qkv_w.T + (qkv_b if qkv_b is not None else 0)
    q, k, v = proj[..., :heads * hd], proj[..., heads * hd:(heads + kv_heads) * hd], \
        proj[..., (heads + kv_heads) * hd:]
    outs = []
    for h in range(heads):
        g = h // (heads // kv_heads)
        qh, kh, vh = q[..., h * hd:(h + 1) * hd], k[..., g * hd:(g + 1) * hd], \
            v[..., g * hd:(g + 1) * hd]
        scores = qh @ kh.transpose(1, 2) / math.sqrt(hd)
        if mask is not None:
            scores = scores + mask[h] if mask.dim() == 3 else scores + mask
        outs.append(torch.softmax(scores, -1) @ vh)
    return torch.cat(outs, -1) @ out_w.T + (out_b if out_b is not None else 0)


def causal_mask(T):
    return torch.full((T, T), float("-inf")).triu(1)


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_attention_equals_hand_written_multi_head_attention(kv_heads):
    attn = SelfAttention(32, heads=4, kv_heads=kv_heads, causal=True, bias=True)
    with torch.no_grad():
        attn.qkv.bias.normal_()
        attn.out.bias.normal_()
    x = torch.randn(2, 7, 32)
    expected = hand_attention(x, attn.qkv.weight, attn.qkv.bias, attn.out.weight, attn.out.bias,
                              4, kv_heads, causal_mask(7))
    assert torch.allclose(attn(x), expected, atol=1e-5)


def test_alibi_attention_equals_hand_written_bias():
    attn = SelfAttention(32, heads=4, causal=False, position="alibi", bias=False)
    x = torch.randn(1, 6, 32)
    i = torch.arange(6)
    dist = (i[:, None] - i[None, :]).abs().float()
    bias = torch.stack([-s * dist for s in [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8]])
    expected = hand_attention(x, attn.qkv.weight, None, attn.out.weight, None, 4, 4, bias)
    assert torch.allclose(attn(x), expected, atol=1e-5)


VARIANTS = {
    "causal": dict(causal=True),
    "windowed": dict(causal=True, window=3),
    "alibi": dict(causal=True, position="alibi"),
    "rope": dict(causal=True, position="rope"),
    "bidirectional": dict(causal=False),
    "bidirectional-window-alibi": dict(causal=False, window=2, position="alibi"),
    "gqa": dict(causal=True, kv_heads=2),
    "mqa-rope-window": dict(causal=True, kv_heads=1, position="rope", window=4),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fast_path_equals_the_explicit_path_a_weights_listener_takes(variant):
    attn = SelfAttention(32, heads=4, **VARIANTS[variant])
    x = torch.randn(2, 9, 32)
    fast = attn(x)
    seen = []
    with attached(attn, lambda _n, _p, w: seen.append(w.detach()), names={"hook_weights"}):
        slow = attn(x)
    assert torch.allclose(fast, slow, atol=1e-5)
    [w] = seen
    assert w.shape == (2, 4, 9, 9)
    assert torch.allclose(w.sum(-1), torch.ones(2, 4, 9), atol=1e-5)
    i = torch.arange(9)
    offset = i[:, None] - i[None, :]
    if attn.causal:
        assert (w[..., offset < 0] == 0).all()
    if attn.window:
        assert (w[..., offset.abs() >= attn.window] == 0).all()


def test_cached_attention_equals_full_attention_on_both_paths():
    for explicit in (False, True):
        attn = SelfAttention(32, heads=4, kv_heads=2, position="rope", window=5).eval()
        listening = attached(attn, lambda *_: None,
                             names={"hook_weights"} if explicit else set())
        x = torch.randn(1, 12, 32)
        cache, outs = DecodingCache(), []
        with listening:
            full = attn(x)
            for a, b in [(0, 4), (4, 5), (5, 12)]:
                outs.append(attn(x[:, a:b], cache))
                cache.offset = b
        assert torch.allclose(torch.cat(outs, 1), full, atol=1e-5)
        assert cache.state(attn)["k"].shape[2] == 4  # only window - 1 keys are kept


def test_bidirectional_attention_refuses_a_cache():
    attn = SelfAttention(16, heads=2, causal=False)
    with pytest.raises(ValueError, match="causal"):
        attn(torch.randn(1, 3, 16), DecodingCache())


@pytest.mark.parametrize("block", [SelfAttention, CrossAttention])
@pytest.mark.parametrize("d_model, heads, kv_heads", [(16, 0, 0), (16, 4, 3), (16, 2, 4),
                                                      (2, 4, 4)])
def test_heads_that_cannot_share_the_width_are_refused(block, d_model, heads, kv_heads):
    """No heads, key/value heads that do not divide the query heads (nor fewer of them), more
    heads than dimensions."""
    with pytest.raises(ValueError, match=rf"heads \({heads}\) must be a multiple of kv_heads"):
        block(d_model, heads=heads, kv_heads=kv_heads)
    assert block(16, heads=4, kv_heads=2).head_dim == 4


def test_cross_attention_equals_hand_written_and_caches_the_memory():
    cross = CrossAttention(16, heads=4, kv_heads=2, bias=False)
    x, memory = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    hd = 4
    q = x @ cross.q.weight.T
    k, v = (memory @ cross.kv.weight.T).split(2 * hd, -1)
    outs = []
    for h in range(4):
        g = h // 2
        s = q[..., h * hd:(h + 1) * hd] @ k[..., g * hd:(g + 1) * hd].transpose(1, 2) / 2.0
        outs.append(torch.softmax(s, -1) @ v[..., g * hd:(g + 1) * hd])
    expected = torch.cat(outs, -1) @ cross.out.weight.T
    assert torch.allclose(cross(x, memory), expected, atol=1e-5)
    cache = DecodingCache()
    cross(x, memory, cache)
    assert torch.allclose(cross(x, torch.zeros_like(memory), cache), expected, atol=1e-5)


# ---------------------------------------------------------------- mixture of experts
def test_one_expert_top_1_equals_that_feed_forward():
    moe = MixtureOfExperts(8, experts=1, top_k=1, d_ff=16, activation="swiglu", bias=True)
    x = torch.randn(2, 5, 8)
    assert torch.allclose(moe(x), moe.experts[0](x), atol=1e-6)


def test_moe_equals_a_per_token_loop():
    moe = MixtureOfExperts(8, experts=4, top_k=2, d_ff=16, activation="gelu",
                           shared_expert=True)
    x = torch.randn(2, 6, 8)
    out = moe(x)
    expected = torch.empty_like(x)
    for b in range(2):
        for t in range(6):
            tok = x[b, t]
            logits = moe.router.weight @ tok
            chosen = torch.topk(logits, 2).indices          # same order as the probabilities
            weights = torch.softmax(logits[chosen], 0)       # softmax over the chosen two
            y = sum(w * moe.experts[int(e)](tok.view(1, 1, 8)).view(8)
                    for w, e in zip(weights, chosen))
            expected[b, t] = y + moe.shared(tok.view(1, 1, 8)).view(8)
    assert torch.allclose(out, expected, atol=1e-5)
    assert torch.allclose(moe.last_expert_load.sum(), torch.tensor(2.0))  # each token: 2
    chosen = []
    with attached(moe, lambda _n, _p, top_i: chosen.append(top_i), names={"hook_choices"}):
        moe(x)
    assert chosen[0].shape == (2, 6, 2)      # [B, T, k], the same experts as the loop chose
    assert chosen[0][1, 3].tolist() == torch.topk(moe.router.weight @ x[1, 3], 2).indices.tolist()


def test_moe_aux_loss_is_the_switch_transformer_formula():
    moe = MixtureOfExperts(8, experts=4, top_k=2, d_ff=16, aux_loss_weight=0.5)
    x = torch.randn(3, 7, 8)
    moe(x)
    probs = torch.softmax(x.reshape(-1, 8) @ moe.router.weight.T, -1)
    chosen = probs.topk(2, -1).indices
    f = torch.stack([(chosen == e).any(-1).float().mean() for e in range(4)])  # token share
    expected = 0.5 * 4 * (f * probs.mean(0)).sum()
    assert moe.aux_loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert moe.aux_loss.requires_grad
    assert torch.allclose(moe.last_expert_load, f)
    # a router that cannot tell experts apart gives P_i = 1/E, so the loss is weight * top_k
    with torch.no_grad():
        moe.router.weight.zero_()
    moe(x)
    assert moe.aux_loss.item() == pytest.approx(0.5 * 2, rel=1e-6)


def test_moe_refuses_top_k_above_experts():
    with pytest.raises(ValueError, match="top_k"):
        MixtureOfExperts(8, experts=2, top_k=3)


# ---------------------------------------------------------------- parameter counts vs schema
def hook(block_type, params, shapes):
    spec = get_spec(block_type)
    merged = {**spec.defaults(), **params}
    return spec.count_params(merged, shapes)


X = {"x": ("B", "T", 48)}
COUNT_CASES = [
    (SelfAttention(48, heads=6, kv_heads=6, bias=True), "attention",
     {"heads": 6, "kv_heads": 6, "bias": True}, X),
    (SelfAttention(48, heads=8, kv_heads=2, bias=False), "attention",
     {"heads": 8, "kv_heads": 2, "bias": False}, X),
    (CrossAttention(48, heads=4, kv_heads=1, bias=True), "cross_attention",
     {"heads": 4, "kv_heads": 1, "bias": True}, {**X, "memory": ("B", "S", 48)}),
    *[(FeedForward(48, 80, act, bias), "feed_forward",
       {"d_ff": 80, "activation": act, "bias": bias}, X)
      for act in ("relu", "gelu_tanh", "swiglu", "glu") for bias in (True, False)],
    (MixtureOfExperts(48, 4, 2, 32, "swiglu", False, True), "moe",
     {"experts": 4, "top_k": 2, "d_ff": 32, "activation": "swiglu", "bias": False,
      "shared_expert": True}, X),
    (MixtureOfExperts(48, 3, 1, 32, "relu", True, False), "moe",
     {"experts": 3, "top_k": 1, "d_ff": 32, "activation": "relu", "bias": True}, X),
    (Norm(48, "layernorm", bias=True), "norm", {"kind": "layernorm", "bias": True}, X),
    (Norm(48, "layernorm", bias=False), "norm", {"kind": "layernorm", "bias": False}, X),
    (Norm(48, "rmsnorm", bias=True), "norm", {"kind": "rmsnorm", "bias": True}, X),
    (PositionalEncoding(48, "learned", max_len=30), "positional_encoding",
     {"scheme": "learned", "max_len": 30}, X),
    (PositionalEncoding(48, "sinusoidal"), "positional_encoding", {"scheme": "sinusoidal"}, X),
    (TokenEmbedding(100, 48), "token_embedding", {"vocab_size": 100, "d_model": 48},
     {"ids": ("B", "T")}),
    (LMHead(48, 100, bias=True), "lm_head", {"vocab_size": 100, "tie": False, "bias": True}, X),
    (MLMHead(48, 100, bias=True), "mlm_head", {"vocab_size": 100, "tie": False}, X),
    (MLMHead(48, 100, bias=False, transform=False), "mlm_head",
     {"vocab_size": 100, "tie": False, "bias": False, "transform": False}, X),
    *[(Recurrent(48, cell, 24, layers), "rnn",
       {"cell": cell, "hidden_size": 24, "layers": layers}, X)
      for cell in ("rnn", "lstm", "gru") for layers in (1, 2)],
]


@pytest.mark.parametrize("module,block_type,params,shapes", COUNT_CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(COUNT_CASES)])
def test_module_parameters_equal_the_schema_hook(module, block_type, params, shapes):
    assert n_params(module) == hook(block_type, params, shapes)


def test_tied_head_owns_no_projection_weight():
    emb, head = TokenEmbedding(100, 48), MLMHead(48, 100, bias=True)
    head.tie_to(emb)
    assert head.proj.weight is emb.weight
    own = sum(p.numel() for p in head.parameters() if p is not emb.weight)
    assert own == hook("mlm_head", {"vocab_size": 100, "tie": True}, X)
    with pytest.raises(ValueError, match="untie"):
        LMHead(32, 100).tie_to(emb)


# ---------------------------------------------------------------- standalone-ready sources
def test_nn_modules_import_only_torch_math_and_the_standard_library():
    allowed = {"torch", "math"} | set(sys.stdlib_module_names)
    for path in Path(__import__("tfstudio.nn").nn.__file__).parent.glob("*.py"):
        for stmt in ast.walk(ast.parse(path.read_text())):
            if isinstance(stmt, ast.Import):
                roots = [a.name.split(".")[0] for a in stmt.names]
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0:
                roots = [stmt.module.split(".")[0]]
            else:
                continue
            assert set(roots) <= allowed, f"{path.name} imports {roots}"
