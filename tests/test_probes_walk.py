"""The walk's steps are the model's real intermediate tensors: each is checked against a
computation written out here from the weights, and the walk's logits against the model's."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tfstudio.probes import probe_inputs
from tfstudio.probes.walk import filtered_probabilities, forward_walk as walk
from tfstudio.train.sampling import apply_filters

from probe_models import TEXT, model_of

torch.set_num_threads(1)


def inputs_of(model, tokenizer, text=TEXT):
    return probe_inputs(model, tokenizer, text)


def block_inputs(model, inputs) -> dict[str, tuple]:
    """What each block received, keyed "layers.0.attn" (an independent forward hook)."""
    seen: dict[str, tuple] = {}
    handles = []
    for key, module in model.blocks():
        name = ".".join(map(str, key))

        def hook(mod, args, out, name=name):
            seen.setdefault(name, tuple(a.detach() for a in args if torch.is_tensor(a)))
        handles.append(module.register_forward_hook(hook))
    with torch.no_grad():
        model(*inputs.args)
    for h in handles:
        h.remove()
    return seen


def rotate(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE written out: pair (x_2k, x_2k+1) at position p turns by p * base^(-2k/d)."""
    T, d = x.shape
    out = x.clone()
    for p in range(T):
        for k in range(d // 2):
            a = p * base ** (-2 * k / d)
            e, o = x[p, 2 * k], x[p, 2 * k + 1]
            out[p, 2 * k] = e * math.cos(a) - o * math.sin(a)
            out[p, 2 * k + 1] = e * math.sin(a) + o * math.cos(a)
    return out


PRESETS = ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt", "tiny-mixtral", "tiny-mistral", "tiny-t5",
           "tiny-transformer", "tiny-lstm", "tiny-bert", "tiny-induction"]


@pytest.mark.parametrize("preset", PRESETS)
def test_walk_runs_and_its_logits_are_the_models(preset, tokenizer):
    model = model_of(preset, tokenizer)
    inputs = inputs_of(model, tokenizer)
    with torch.no_grad():
        expected = model(*inputs.args)[0].numpy()
    result = walk(model, inputs, head=1 if preset != "tiny-lstm" else 0)
    logits = [s for s in result.steps if s.name.endswith(": logits")]
    assert len(logits) == 1
    np.testing.assert_allclose(logits[0].value, expected, atol=1e-5, rtol=0)
    for s in result.steps:
        assert s.formula and s.shape == s.value.shape
    assert result.steps[0].name.endswith("token ids")
    # the order is the order of computation: ids first, probabilities last
    assert result.steps[-1].kind == "sampling"


@pytest.mark.parametrize("preset,position", [("tiny-gpt", "none"), ("tiny-llama", "rope"),
                                              ("tiny-alibi-gpt", "alibi")])
def test_scores_are_q_dot_k_over_sqrt_d_on_the_stated_head(preset, position, tokenizer):
    model = model_of(preset, tokenizer)
    inputs = inputs_of(model, tokenizer)
    x = block_inputs(model, inputs)["layers.1.attn"][0][0]
    attn = model.layers[1].attn
    H, KV, hd = attn.heads, attn.kv_heads, attn.head_dim
    head = 3
    kv_head = head // (H // KV)
    W, b = attn.qkv.weight.detach(), attn.qkv.bias
    b = b.detach() if b is not None else torch.zeros(W.shape[0])
    rows_q = slice(head * hd, (head + 1) * hd)
    rows_k = slice(H * hd + kv_head * hd, H * hd + (kv_head + 1) * hd)
    q, k = x @ W[rows_q].T + b[rows_q], x @ W[rows_k].T + b[rows_k]
    result = walk(model, inputs, head=head, layer=1)
    name = f"layers.1.attn: head {head}"
    np.testing.assert_allclose(result.step(f"{name}: q").value, q.numpy(), atol=1e-5)
    if position == "rope":
        q, k = rotate(q), rotate(k)
        np.testing.assert_allclose(result.step(f"{name}: q rotated (RoPE)").value, q.numpy(),
                                   atol=1e-5)
    scores = (q @ k.T / math.sqrt(hd)).numpy()
    np.testing.assert_allclose(result.step(f"{name}: scores").value, scores, atol=1e-5)
    # only layer 1 is opened up when a layer is chosen
    assert not [s for s in result.steps if s.name.startswith("layers.0.attn: head")]

    T = len(inputs.ids["tokens"])
    mask = result.step(f"{name}: mask").value
    np.testing.assert_array_equal(mask, np.tril(np.ones((T, T), dtype=bool)))
    total = scores.copy()
    if position == "alibi":
        slope = 2 ** (-8 * (head + 1) / H)
        distance = np.arange(T)[:, None] - np.arange(T)[None, :]
        bias = np.where(mask, -slope * distance, 0.0)
        np.testing.assert_allclose(result.step(f"{name}: ALiBi bias").value, bias, atol=1e-6)
        total = total + bias
    softmax = result.step(f"{name}: softmax").value
    np.testing.assert_allclose(softmax.sum(-1), 1.0, atol=1e-6)
    assert (softmax[~mask] == 0).all()
    e = np.where(mask, np.exp(total - total.max(-1, keepdims=True)), 0.0)
    np.testing.assert_allclose(softmax, e / e.sum(-1, keepdims=True), atol=1e-5)


def test_sliding_window_mask_and_masked_weights_are_zero(tokenizer):
    model = model_of("tiny-mistral", tokenizer)
    text = "the window is sixteen tokens wide, so this is longer"
    inputs = inputs_of(model, tokenizer, text)
    result = walk(model, inputs, head=0, layer=0)
    T = len(inputs.ids["tokens"])
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    expected = (j <= i) & (i - j < 16)
    np.testing.assert_array_equal(result.step("layers.0.attn: head 0: mask").value, expected)
    softmax = result.step("layers.0.attn: head 0: softmax").value
    assert (softmax[~expected] == 0).all()
    np.testing.assert_allclose(softmax.sum(-1), 1.0, atol=1e-6)


def test_weighted_values_and_output_projection(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = inputs_of(model, tokenizer)
    x = block_inputs(model, inputs)["layers.0.attn"][0][0]
    attn = model.layers[0].attn
    H, hd = attn.heads, attn.head_dim
    qkv = (x @ attn.qkv.weight.T + attn.qkv.bias).detach()
    T = x.shape[0]
    outs = []
    for h in range(H):
        q, k, v = (qkv[:, (part * H + h) * hd:(part * H + h + 1) * hd] for part in range(3))
        s = q @ k.T / math.sqrt(hd) + torch.triu(torch.full((T, T), -math.inf), 1)
        outs.append(torch.softmax(s, -1) @ v)
    result = walk(model, inputs, head=2)
    np.testing.assert_allclose(result.step("layers.0.attn: head 2: weighted values").value,
                               outs[2].numpy(), atol=1e-5)
    y = torch.cat(outs, -1) @ attn.out.weight.T + attn.out.bias
    np.testing.assert_allclose(result.step("layers.0.attn: output projection").value,
                               y.detach().numpy(), atol=1e-5)


def test_feed_forward_steps(tokenizer):
    gpt, llama = model_of("tiny-gpt", tokenizer), model_of("tiny-llama", tokenizer)
    for model, gated in ((gpt, False), (llama, True)):
        inputs = inputs_of(model, tokenizer)
        x = block_inputs(model, inputs)["layers.0.ffn"][0][0]
        ffn = model.layers[0].ffn
        W, d_ff = ffn.up.weight.detach(), ffn.d_ff
        result = walk(model, inputs)
        if gated:  # SwiGLU: silu(x W_gate) * (x W_up), W_gate the first d_ff rows
            gate = x @ W[:d_ff].T
            up = x @ W[d_ff:].T
            g = gate * torch.sigmoid(gate)
            np.testing.assert_allclose(result.step("layers.0.ffn: gate").value, g.numpy(),
                                       atol=1e-5)
            h = g * up
        else:  # GELU (erf form) written out
            u = x @ W.T + ffn.up.bias.detach()
            h = 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))
            np.testing.assert_allclose(result.step("layers.0.ffn: activation").value,
                                       h.numpy(), atol=1e-5)
        np.testing.assert_allclose(result.step("layers.0.ffn: up projection").value,
                                   (up if gated else u).numpy(), atol=1e-5)
        down = h @ ffn.down.weight.detach().T
        if ffn.down.bias is not None:
            down = down + ffn.down.bias.detach()
        np.testing.assert_allclose(result.step("layers.0.ffn: down projection").value,
                                   down.numpy(), atol=1e-5)


def test_router_logits_and_chosen_experts(tokenizer):
    model = model_of("tiny-mixtral", tokenizer)
    inputs = inputs_of(model, tokenizer)
    x = block_inputs(model, inputs)["layers.1.moe"][0][0]
    moe = model.layers[1].moe
    logits = (x @ moe.router.weight.detach().T).numpy()
    result = walk(model, inputs)
    np.testing.assert_allclose(result.step("layers.1.moe: router logits").value, logits,
                               atol=1e-5)
    chosen = result.step("layers.1.moe: chosen experts").value
    np.testing.assert_array_equal(chosen, np.argsort(-logits, axis=-1, kind="stable")[:, :2])
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    top = np.take_along_axis(p, chosen, -1)
    np.testing.assert_allclose(result.step("layers.1.moe: expert weights").value,
                               top / top.sum(-1, keepdims=True), atol=1e-5)


def test_cross_attention_queries_from_target_keys_from_source(tokenizer):
    model = model_of("tiny-t5", tokenizer)
    inputs = inputs_of(model, tokenizer, "abcdefgh>hgfe")
    seen = block_inputs(model, inputs)
    x, memory = (t[0] for t in seen["decoder.0.cross"])
    cross = model.decoder[0].cross
    hd, H = cross.head_dim, cross.heads
    q = x @ cross.q.weight.detach()[hd:2 * hd].T
    k = memory @ cross.kv.weight.detach()[hd:2 * hd].T
    result = walk(model, inputs, head=1)
    scores = result.step("decoder.0.cross: head 1: scores").value
    S, T = len(inputs.ids["source"]), len(inputs.ids["target"])
    assert scores.shape == (T, S)
    np.testing.assert_allclose(scores, (q @ k.T / math.sqrt(hd)).numpy(), atol=1e-5)
    np.testing.assert_allclose(result.step("decoder.0.cross: head 1: softmax").value.sum(-1),
                               1.0, atol=1e-6)
    # the encoder ran first: its steps come before the decoder's
    names = [s.name for s in result.steps]
    assert names.index("encoder.1.attn: output projection") < names.index(
        "decoder.0.attn: output projection")
    assert H == 4


def test_lstm_hidden_state_written_out(tokenizer):
    model = model_of("tiny-lstm", tokenizer)
    inputs = inputs_of(model, tokenizer)
    x = block_inputs(model, inputs)["rnn"][0][0]
    rnn = model.rnn.rnn
    w_ih, w_hh = rnn.weight_ih_l0.detach(), rnn.weight_hh_l0.detach()
    b = (rnn.bias_ih_l0 + rnn.bias_hh_l0).detach()
    h = c = torch.zeros(rnn.hidden_size)
    states = []
    for t in range(x.shape[0]):
        i, f, g, o = (x[t] @ w_ih.T + h @ w_hh.T + b).chunk(4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states.append(h)
    result = walk(model, inputs)
    np.testing.assert_allclose(result.step("rnn: hidden state").value,
                               torch.stack(states).numpy(), atol=1e-5)


def test_embedding_and_positions(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = inputs_of(model, tokenizer)
    ids = inputs.ids["tokens"]
    result = walk(model, inputs)
    np.testing.assert_array_equal(result.step("embed: token ids").value, ids)
    E = model.embed.weight.detach().numpy()
    np.testing.assert_array_equal(result.step("embed: embedding").value, E[ids])
    P = model.pos.table.weight.detach().numpy()[:len(ids)]
    np.testing.assert_allclose(result.step("pos: position vectors").value, P, atol=1e-6)
    np.testing.assert_allclose(result.step("pos: embedding + position").value, E[ids] + P,
                               atol=1e-6)


@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 0, 1.0), (0.7, 5, 1.0),
                                                     (1.3, 0, 0.8), (0.5, 10, 0.6),
                                                     (0.0, 0, 1.0)])
def test_sampling_probabilities_match_the_sampler(temperature, top_k, top_p):
    logits = torch.randn(300, generator=torch.Generator().manual_seed(3)) * 3
    expected = torch.softmax(apply_filters(logits, temperature, top_k, top_p), -1).numpy()
    got = filtered_probabilities(logits.numpy(), temperature, top_k, top_p)
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_walk_probabilities_at_the_chosen_position(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = inputs_of(model, tokenizer)
    with torch.no_grad():
        row = model(*inputs.args)[0, 4]
    result = walk(model, inputs, position=4, temperature=0.5, top_k=3)
    probs = [s for s in result.steps if s.kind == "sampling"]
    np.testing.assert_allclose(probs[0].value, torch.softmax(row, -1).numpy(), atol=1e-6)
    np.testing.assert_allclose(probs[1].value, torch.softmax(row / 0.5, -1).numpy(), atol=1e-6)
    assert (probs[-1].value > 0).sum() == 3


def test_bad_head_and_position_are_refused(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    inputs = inputs_of(model, tokenizer)
    with pytest.raises(ValueError, match="head 9 does not exist"):
        walk(model, inputs, head=9)
    with pytest.raises(ValueError, match="position 99 is outside"):
        walk(model, inputs, position=99)


def test_walk_leaves_the_model_as_it_was(tokenizer):
    model = model_of("tiny-gpt", tokenizer).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    walk(model, inputs_of(model, tokenizer))
    assert model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not any(m._forward_hooks for m in model.modules())
