"""The logit lens, the attention maps and the head scores read what the model computed at its hook
points, and what they read equals the model's own computation: the lens row after layer i is
the logits of the same weights cut to i + 1 layers (float64), and the attention weights times the
values reproduce the fused attention's output (float64), on learned, RoPE (linear and NTK),
ALiBi and windowed attention with every K/V layout and each norm placement."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.experiments.variants import apply_setting
from tfstudio.nn import SelfAttention
from tfstudio.presets import load_preset
from tfstudio.probes import attention_maps, head_scores, logit_lens, probe_inputs
from tfstudio.probes.roles import scores_from_weights
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
TEXT = "abcab cabca>bcabc"


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer("byte")


def _kv(graph, layout: str, scaling: str = ""):
    for _, node in graph.walk():
        if node.type == "attention":
            heads = node.param("heads")
            node.params["kv_heads"] = {"mha": heads, "gqa": max(heads // 2, 1), "mqa": 1}[layout]
            if scaling:
                node.params.update(position="rope", rope_scaling=4.0, rope_scaling_type=scaling)
    return graph


VARIANTS = {
    "tiny-gpt": lambda: load_preset("tiny-gpt"),
    "tiny-gpt post-norm": lambda: apply_setting(load_preset("tiny-gpt"), "norm", "post"),
    "tiny-gpt post-in-residual": lambda: apply_setting(load_preset("tiny-gpt"), "norm",
                                                       "post-in-residual"),
    "tiny-llama gqa ntk": lambda: _kv(load_preset("tiny-llama"), "gqa", "ntk"),
    "tiny-llama mqa linear": lambda: _kv(load_preset("tiny-llama"), "mqa", "linear"),
    "tiny-alibi-gpt gqa": lambda: _kv(load_preset("tiny-alibi-gpt"), "gqa"),
    "tiny-mistral": lambda: load_preset("tiny-mistral"),
}


def _model(graph, tokenizer, layers: int | None = None):
    graph = fit_graph_to_tokenizer(graph, tokenizer)
    if layers is not None:
        graph.nodes["layers"].params["repeat"] = layers
    torch.manual_seed(0)
    model = compile_graph(graph).eval()
    with torch.no_grad():   # biases off zero and norms off one: every term counts
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_lens_row_is_the_logits_of_the_model_cut_after_that_layer(variant, tokenizer):
    model = _model(VARIANTS[variant](), tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    lens = logit_lens(model, inputs, tokenizer, keep_logits=True)
    layers = len(model.layers)
    assert lens.layers[1:] == [f"layers.{i}" for i in range(layers)]
    state = model.state_dict()
    for kept in range(1, layers + 1):
        cut = _model(VARIANTS[variant](), tokenizer, layers=kept).double()
        cut.load_state_dict({k: v for k, v in state.items()
                             if not k.startswith("layers.") or int(k.split(".")[1]) < kept})
        with torch.no_grad():
            expected = cut(*inputs.args)[0].numpy()
        np.testing.assert_allclose(lens.logits[kept], expected, atol=2e-4, rtol=0,
                                   err_msg=f"{variant}: the row after layer {kept - 1}")
    with torch.no_grad():   # its last row is the model's own output, bit for bit
        np.testing.assert_array_equal(lens.logits[-1], model(*inputs.args)[0].numpy())


def _fused_attention(model, inputs):
    """Each self-attention block's input and output in a forward nobody listens to (the fused
    path), in float64."""
    seen, handles = {}, []
    for key, module in model.attention_modules():
        def keep(_m, args, out, key=key):
            seen[key] = (args[0][0].double(), out[0].double())
        handles.append(module.register_forward_hook(keep))
    with torch.no_grad():
        model(*inputs.args)
    for handle in handles:
        handle.remove()
    return seen


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@torch.no_grad()
def test_attention_weights_times_the_values_give_the_fused_output(variant, tokenizer):
    model = _model(VARIANTS[variant](), tokenizer)
    inputs = probe_inputs(model, tokenizer, TEXT)
    fused = _fused_attention(model, inputs)
    maps = attention_maps(model, inputs)
    checked = 0
    for key, module in model.attention_modules():
        if not isinstance(module, SelfAttention):
            continue
        x, y = fused[key]
        H, KV, hd = module.heads, module.kv_heads, module.head_dim
        w = module.qkv.weight.double()
        b = module.qkv.bias.double() if module.qkv.bias is not None else 0.0
        v = (x @ w.T + b)[:, (H + KV) * hd:].reshape(len(x), KV, hd)
        amap = maps[".".join(map(str, key))]
        weights = torch.from_numpy(amap.weights).double()          # [H, T, T]
        assert np.allclose(amap.weights.sum(-1), 1, atol=1e-5)
        assert not amap.weights[~np.broadcast_to(amap.allowed, amap.weights.shape)].any()
        z = torch.stack([weights[h] @ v[:, h // (H // KV)] for h in range(H)], 1)
        out = z.reshape(len(x), H * hd) @ module.out.weight.double().T
        if module.out.bias is not None:
            out = out + module.out.bias.double()
        np.testing.assert_allclose(out.numpy(), y.numpy(), atol=2e-5,
                                   err_msg=f"{variant} {key}")
        checked += 1
    assert checked == len(model.layers)


def test_head_scores_are_read_from_the_weights_the_model_applied(tokenizer):
    from tfstudio.probes.roles import repeated_sequence
    model = _model(_kv(load_preset("tiny-llama"), "gqa", "ntk"), tokenizer)
    pool = tokenizer.encode("abcdefghijkl")
    scores = head_scores(model, pool, length=6)
    ids = torch.tensor([repeated_sequence(pool, 6, 0)])   # the sequence head_scores reads
    entering, handles = {}, []
    for key, module in model.attention_modules():
        def keep(_m, args, _out, key=key):
            entering[key] = args[0][0]
        handles.append(module.register_forward_hook(keep))
    with torch.no_grad():
        model(ids)
    for handle in handles:
        handle.remove()
    assert sorted(scores) == [f"layers.{i}.attn" for i in range(len(model.layers))]
    for key, module in model.attention_modules():
        expected = scores_from_weights(_weights_float64(module, entering[key]), 6)
        for score in ("previous_token", "induction"):
            np.testing.assert_allclose(scores[".".join(map(str, key))][score],
                                       expected[score], atol=1e-5)


@torch.no_grad()
def _weights_float64(module, x):
    """softmax(q k^T / sqrt(d)) under the causal mask, q and k rotated by RoPE with the NTK
    base (base * s^(d / (d - 2))), all in float64 from the raw weights."""
    H, KV, hd = module.heads, module.kv_heads, module.head_dim
    x = x.double()
    w = module.qkv.weight.double()
    b = module.qkv.bias.double() if module.qkv.bias is not None else 0.0
    qkv = x @ w.T + b
    T = len(x)
    q = qkv[:, :H * hd].reshape(T, H, hd)
    k = qkv[:, H * hd:(H + KV) * hd].reshape(T, KV, hd)
    assert module.rope_scaling_type == "ntk"
    base = module.rope_base * module.rope_scaling ** (hd / (hd - 2))
    angle = torch.arange(T, dtype=torch.float64)[:, None] * \
        base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    turn = torch.polar(torch.ones_like(angle), angle)[:, None]

    def rotate(t):
        pairs = torch.view_as_complex(t.reshape(*t.shape[:-1], hd // 2, 2).contiguous())
        return torch.view_as_real(pairs * turn).reshape(t.shape)
    q, k = rotate(q), rotate(k)
    out = []
    for h in range(H):
        s = q[:, h] @ k[:, h // (H // KV)].T / hd ** 0.5
        s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        out.append(torch.softmax(s, -1))
    return torch.stack(out).numpy()
