"""The walk's steps are the model's real intermediate tensors: each is checked against a
computation written out here from the weights, and the walk's logits against the model's."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from probe_models import HEAD, TEXT, TOKENS, block_of, edited, graph_file, model_of

from tfstudio.probes import probe_inputs
from tfstudio.probes.walk import filtered_probabilities
from tfstudio.probes.walk import forward_walk as walk
from tfstudio.train.sampling import apply_filters

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
        bias = np.where(mask, -slope * distance, -np.inf)   # as the model adds it
        np.testing.assert_allclose(result.step(f"{name}: ALiBi bias").value, bias, atol=1e-6)
        total = total + np.where(mask, bias, 0.0)
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


# ---------------------------------------------------------------- the edges of each case
torch.set_num_threads(1)


def test_filtered_probabilities_by_hand():
    from tfstudio.probes.walk import filtered_probabilities
    logits = np.log([0.5, 0.3, 0.2])
    np.testing.assert_allclose(filtered_probabilities(logits), [0.5, 0.3, 0.2])  # defaults
    assert filtered_probabilities(logits.astype(np.float32)).dtype == np.float64
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=1), [1, 0, 0])
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=2), [0.625, 0.375, 0])
    # top-p: mass before each token 0, 0.5, 0.8; kept while it is under p (0.5 exactly: one)
    np.testing.assert_allclose(filtered_probabilities(logits, top_p=0.5), [1, 0, 0])
    np.testing.assert_allclose(filtered_probabilities(logits, top_p=0.51), [0.625, 0.375, 0])
    # top-p after top-k renormalised: 0.625, 0.375 -> under 0.6 only the first
    np.testing.assert_allclose(filtered_probabilities(logits, top_k=2, top_p=0.6), [1, 0, 0])
    # top-p 1 filters nothing, not even a token too unlikely to move the cumulative sum
    tiny = filtered_probabilities(np.array([0.0, -50.0]))
    assert tiny[1] == pytest.approx(np.exp(-50.0), rel=1e-9, abs=0)
    # temperature 0: the likeliest token only; 2: softmax(l / 2)
    np.testing.assert_allclose(filtered_probabilities(logits[::-1], temperature=0), [0, 0, 1])
    halved = np.sqrt([0.5, 0.3, 0.2])
    np.testing.assert_allclose(filtered_probabilities(logits, temperature=2),
                               halved / halved.sum())
    np.testing.assert_allclose(filtered_probabilities(logits, temperature=0.5),
                               np.array([0.25, 0.09, 0.04]) / 0.38)
    # the nucleus follows the probabilities, not the token order
    np.testing.assert_allclose(filtered_probabilities(np.log([0.2, 0.5, 0.3]), top_p=0.5),
                               [0, 1, 0])
    # ties: the nucleus takes the lowest ids first, among ties of several sizes
    mixed = np.log(np.random.default_rng(0).choice([1.0, 2.0, 3.0], size=100))
    p = np.exp(mixed) / np.exp(mixed).sum()
    order = sorted(range(100), key=lambda i: (-p[i], i))       # likeliest, then lowest id
    mass = np.cumsum(p[order]) - p[order]
    chosen = [i for i, m in zip(order, mass) if m < 0.3]
    expected = np.zeros(100)
    expected[chosen] = p[chosen] / p[chosen].sum()
    np.testing.assert_allclose(filtered_probabilities(mixed, top_p=0.3), expected)
    tied = filtered_probabilities(np.zeros(40), top_p=0.1)
    np.testing.assert_allclose(tied, [0.25] * 4 + [0] * 36)
    for bad in ({"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -1}):
        with pytest.raises(ValueError) as caught:
            filtered_probabilities(logits, **bad)
        assert str(caught.value) == "temperature must be >= 0, top_k >= 0 and top_p in (0, 1]"


def test_softmax_of_large_logits():
    from tfstudio.probes.walk import softmax
    np.testing.assert_allclose(softmax(np.array([1000.0, 1000.0 - np.log(3)])), [0.75, 0.25])


def test_the_walk_defaults_positions_and_heads(gpt, tokenizer):
    from tfstudio.probes import forward_walk
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abcab")
    walk = forward_walk(model, inputs)
    assert walk.position == 4 and walk.head == 0
    assert (walk.tokens, walk.ids, walk.stream_role) == (inputs.tokens, inputs.ids, "tokens")
    with torch.no_grad():
        fused = model(*inputs.args)[0].numpy()
    # the walk's logits come from the explicit attention path (the hook points read its
    # weights), the model's own from the fused one: the same to ~1e-6 of their scale
    np.testing.assert_allclose(walk.logits, fused, rtol=1e-6, atol=1e-6 * np.abs(fused).max())
    assert walk.step("layers.0.attn: head 0: scores").shape == (5, 5)
    last = walk.steps[-1]
    assert last.name == "probabilities at position 4, no filter (top-k and top-p off)"
    np.testing.assert_allclose(last.value, walk.step("probabilities at position 4").value)
    assert forward_walk(model, inputs, position=-5).position == 0
    for outside in (5, -6):
        with pytest.raises(ValueError) as caught:
            forward_walk(model, inputs, position=outside)
        assert str(caught.value) == (f"position {outside} is outside the text's 5 tokens "
                                     "(0..4, or negative from the end)")
    heads = block_of(model, "layers.0.attn").heads
    forward_walk(model, inputs, head=heads - 1)
    with pytest.raises(ValueError) as caught:
        forward_walk(model, inputs, head=heads)
    assert str(caught.value) == (f"head {heads} does not exist in layers.0.attn (it has "
                                 f"{heads} heads: 0..{heads - 1})")
    with pytest.raises(KeyError) as caught:
        walk.step("nothing")
    assert caught.value.args == ("no step named 'nothing'",)


def test_the_walk_of_an_attention_outside_any_group(tokenizer):
    from tfstudio.probes import forward_walk
    model = graph_file([TOKENS, {"id": "embed", "type": "token_embedding",
                                 "params": {"d_model": 64}},
                        {"id": "attn", "type": "attention", "params": {"heads": 4}},
                        {"id": "norm", "type": "norm", "params": {}}, HEAD],
                       [["tokens", "ids", "embed", "ids"], ["embed", "y", "attn", "x"],
                        ["attn", "y", "norm", "x"], ["norm", "y", "head", "x"]])
    inputs = probe_inputs(model, tokenizer, "abc")
    names = [s.name for s in forward_walk(model, inputs, layer=0).steps]
    assert "attn: output projection" in names and "attn: head 0: scores" not in names
    assert "attn: head 0: scores" in [s.name for s in forward_walk(model, inputs).steps]


def test_the_recorder_leaves_out_the_group_copies_by_default(gpt):
    from tfstudio.probes.walk import CallRecorder
    model, inputs = gpt
    with CallRecorder(model) as recorder, torch.no_grad():
        model(*inputs.args)
    assert recorder.calls and all(len(c.key) != 2 for c in recorder.calls)


def test_the_walk_as_json(gpt, tokenizer):
    import json

    from tfstudio.probes import forward_walk
    from tfstudio.probes.walk import json_values
    model, _ = gpt
    walk = forward_walk(model, probe_inputs(model, tokenizer, "abc"))
    data = json.loads(json.dumps(walk.to_dict()))
    assert sorted(data) == ["head", "ids", "position", "steps", "stream_role", "tokens"]
    assert (data["head"], data["position"], data["stream_role"]) == (0, 2, "tokens")
    assert data["ids"] == walk.ids and data["tokens"] == walk.tokens
    first = walk.steps[0]
    assert data["steps"][0] == {"name": first.name, "formula": first.formula,
                                "shape": list(first.value.shape), "block": first.block,
                                "kind": first.kind, "values": first.value.tolist()}
    assert first.to_dict() == {**first.to_dict(values=False), "values": first.value.tolist()}
    bare = walk.to_dict(values=False)
    assert all("values" not in s for s in bare["steps"]) and len(bare["steps"]) == len(walk.steps)
    assert json_values(np.array([[1.0, -np.inf], [np.nan, 2.0]])) == [[1.0, None], [None, 2.0]]
    assert json_values(np.array([1, 2])) == [1, 2]
    mask = walk.step("layers.0.attn: head 0: mask")
    assert json_values(mask.value) == mask.value.tolist()


def test_the_walk_of_one_gpt_layer_by_hand(gpt, tokenizer):
    """Every step of embedding, positions, norm, one attention head and the feed-forward,
    recomputed here from the blocks' weights, with the names and formulas the view shows."""
    from tfstudio.probes import forward_walk
    model, _ = gpt
    inputs = probe_inputs(model, tokenizer, "abcab")
    walk = forward_walk(model, inputs, head=1)
    steps = {s.name: s for s in walk.steps}
    ids = torch.tensor(inputs.ids["tokens"])
    E = block_of(model, "embed").weight.detach()
    P = block_of(model, "pos").table.weight.detach()
    expected = [("embed: token ids", "id_t = tokenizer(text)_t", ids.numpy(), "token_embedding"),
                ("embed: embedding", "x_t = E[id_t]", E[ids].numpy(), "token_embedding"),
                ("pos: position vectors", "p_t = P[t] (learned table)", P[:5].numpy(),
                 "positional_encoding"),
                ("pos: embedding + position", "x_t + p_t", (E[ids] + P[:5]).numpy(),
                 "positional_encoding")]
    for name, formula, value, kind in expected:
        step = steps[name]
        assert (step.formula, step.kind, step.block) == (formula, kind, name.split(":")[0])
        np.testing.assert_allclose(step.value, value, rtol=1e-5, atol=1e-6)
    # the norm before the attention: layer norm by hand
    norm = block_of(model, "layers.0.norm_attn")
    x_in = steps["layers.0.norm_attn: input"].value.astype(np.float64)
    mu, var = x_in.mean(-1, keepdims=True), x_in.var(-1, keepdims=True)
    x = (x_in - mu) / np.sqrt(var + norm.eps) * norm.weight.detach().numpy() \
        + norm.bias.detach().numpy()
    out = steps["layers.0.norm_attn: output"]
    assert out.formula == "(x - mean(x)) / sqrt(var(x) + eps) * g + b"
    assert steps["layers.0.norm_attn: input"].formula == "x" and out.kind == "norm"
    np.testing.assert_allclose(out.value, x, rtol=1e-4, atol=1e-5)
    # head 1 of 4 (16 wide): its rows of the fused q, k, v projection
    attn = block_of(model, "layers.0.attn")
    W, b = attn.qkv.weight.detach().double().numpy(), attn.qkv.bias.detach().double().numpy()
    qkv = x @ W.T + b
    q, k, v = (qkv[:, part * 64 + 16: part * 64 + 32] for part in range(3))
    scores = q @ k.T / 4.0
    causal = np.tril(np.ones((5, 5), dtype=bool))
    e = np.where(causal, np.exp(scores - scores.max(-1, keepdims=True)), 0.0)
    weights = e / e.sum(-1, keepdims=True)
    label = "layers.0.attn: head 1"
    for name, formula, value in [
            ("q", "q = x W_q (this head's rows of qkv)", q),
            ("k", "k = x W_k (K/V head 1)", k),
            ("v", "v = x W_v (K/V head 1)", v),
            ("scores", "S = q k^T / sqrt(d_head)", scores),
            ("mask", "M[i, j] = query i may attend to key j (causal)", causal),
            ("softmax", "A = softmax(S, masked -inf) per row", weights),
            ("weighted values", "z = A v", weights @ v)]:
        step = steps[f"{label}: {name}"]
        assert (step.formula, step.kind, step.block) == (formula, "attention", "layers.0.attn")
        np.testing.assert_allclose(step.value, value, rtol=1e-4, atol=1e-5)
    assert steps["layers.0.attn: output projection"].formula == "y = concat(z_1..z_H) W_o"
    # the feed-forward after its norm
    ffn = block_of(model, "layers.0.ffn")
    h_in = steps["layers.0.norm_ffn: output"].value.astype(np.float64)
    up = h_in @ ffn.up.weight.detach().double().numpy().T + ffn.up.bias.detach().double().numpy()
    act = F.gelu(torch.tensor(up)).numpy()
    down = act @ ffn.down.weight.detach().double().numpy().T \
        + ffn.down.bias.detach().double().numpy()
    for name, formula, value in [("up projection", "u = x W_up + b", up),
                                 ("activation", "h = gelu(u)", act),
                                 ("down projection", "y = h W_down + b", down)]:
        step = steps[f"layers.0.ffn: {name}"]
        assert (step.formula, step.kind, step.block) == (formula, "feed_forward", "layers.0.ffn")
        np.testing.assert_allclose(step.value, value, rtol=1e-4, atol=1e-5)


def f64(tensor) -> np.ndarray:
    return tensor.detach().double().numpy()


def value_of(steps, name: str) -> np.ndarray:
    return steps[name].value.astype(np.float64)


def walk_steps(model, tokenizer, text, **options):
    from tfstudio.probes import forward_walk
    walk = forward_walk(model, probe_inputs(model, tokenizer, text), **options)
    return walk, {s.name: s for s in walk.steps}


def assert_steps(steps, block, kind, expected, rtol=1e-4, atol=1e-5):
    """Each (name, formula, value) is a step of ``block`` of ``kind`` with those values."""
    for name, formula, value in expected:
        step = steps[name]
        assert (step.formula, step.block, step.kind) == (formula, block, kind), name
        np.testing.assert_allclose(step.value, value, rtol=rtol, atol=atol, err_msg=name)


def rms_norm(x, norm):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + norm.eps) * f64(norm.weight)


def rope_np(x, base=10000.0):
    """RoPE by hand: the pair (2i, 2i+1) at position t turned by t * base^(-2i/d)."""
    T, d = x.shape
    angle = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out


def softmax_rows(s, allowed=None):
    e = np.exp(s - s.max(-1, keepdims=True))
    if allowed is not None:
        e = np.where(allowed, e, 0.0)
    return e / e.sum(-1, keepdims=True)


def swiglu_steps(x, ffn, d_ff):
    """(up, gate, gated, down) of a SwiGLU feed-forward without biases, by hand."""
    h = x @ f64(ffn.up.weight).T
    gate, up = h[:, :d_ff], h[:, d_ff:]
    act = gate / (1 + np.exp(-gate))
    return up, act, act * up, (act * up) @ f64(ffn.down.weight).T


def test_the_walk_of_one_llama_layer_by_hand(tokenizer):
    """RMSNorm, grouped-query attention with RoPE (query head 3 reads K/V head 1), SwiGLU and the
    tied head of tiny-llama, recomputed from the weights, with the names the view shows."""
    model = model_of("tiny-llama", tokenizer)
    walk, steps = walk_steps(model, tokenizer, "abcab", head=3, layer=0, temperature=0.5,
                             top_k=5, top_p=0.5)
    norm = block_of(model, "layers.0.norm_attn")
    x_in = value_of(steps, "layers.0.norm_attn: input")
    np.testing.assert_allclose(x_in, steps["embed: embedding"].value, rtol=1e-6)
    x = rms_norm(x_in, norm)
    assert_steps(steps, "layers.0.norm_attn", "norm", [
        ("layers.0.norm_attn: input", "x", x_in),
        ("layers.0.norm_attn: output", "x / sqrt(mean(x^2) + eps) * g", x)])
    attn = block_of(model, "layers.0.attn")
    assert attn.qkv.bias is None and (attn.heads, attn.kv_heads, attn.head_dim) == (4, 2, 16)
    qkv = x @ f64(attn.qkv.weight).T                  # [q: 4 heads | k: 2 heads | v: 2 heads]
    q, k, v = qkv[:, 48:64], qkv[:, 64 + 16:64 + 32], qkv[:, 96 + 16:96 + 32]
    qr, kr = rope_np(q), rope_np(k)
    scores = qr @ kr.T / 4.0
    causal = np.tril(np.ones((5, 5), dtype=bool))
    weights = softmax_rows(scores, causal)
    rope = "pair (2i, 2i+1) at position t turned by t * base^(-2i/d_head)"
    label = "layers.0.attn: head 3"
    assert_steps(steps, "layers.0.attn", "attention", [
        (f"{label}: q", "q = x W_q (this head's rows of qkv)", q),
        (f"{label}: k", "k = x W_k (K/V head 1)", k),
        (f"{label}: v", "v = x W_v (K/V head 1)", v),
        (f"{label}: q rotated (RoPE)", rope, qr),
        (f"{label}: k rotated (RoPE)", rope, kr),
        (f"{label}: scores", "S = q k^T / sqrt(d_head)", scores),
        (f"{label}: mask", "M[i, j] = query i may attend to key j (causal)", causal),
        (f"{label}: softmax", "A = softmax(S, masked -inf) per row", weights),
        (f"{label}: weighted values", "z = A v", weights @ v)])
    assert [n for n in steps if n.startswith("layers.0.attn")][:3] == [
        f"{label}: q", f"{label}: k", f"{label}: v"]
    assert not any(n.startswith("layers.1.attn: head") for n in steps)   # only layer 0 opened
    projection = steps["layers.0.attn: output projection"]
    assert (projection.formula, projection.block, projection.kind) == (
        "y = concat(z_1..z_H) W_o", "layers.0.attn", "attention")
    # the feed-forward: no biases, so no "+ b" in its formulas
    ffn = block_of(model, "layers.0.ffn")
    h_in = value_of(steps, "layers.0.norm_ffn: output")
    up, act, gated, down = swiglu_steps(h_in, ffn, 176)
    assert_steps(steps, "layers.0.ffn", "feed_forward", [
        ("layers.0.ffn: up projection", "u = x W_up", up),
        ("layers.0.ffn: gate", "g = silu(x W_gate)", act),
        ("layers.0.ffn: gated", "h = g * u", gated),
        ("layers.0.ffn: down projection", "y = h W_down", down)])
    # the tied head, then the sampling steps at the last position
    final = value_of(steps, "final_norm: output")
    logits = final @ f64(block_of(model, "embed").weight).T
    assert_steps(steps, "head", "lm_head", [
        ("head: logits", "l = x W_vocab^T (tied to the embedding)", logits)])
    row = logits[4]
    p = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    cooled = np.exp(2 * (row - row.max())) / np.exp(2 * (row - row.max())).sum()
    kept = np.argsort(-cooled)[:5]          # top-5, then the smallest set reaching 0.5
    q5 = cooled[kept] / cooled[kept].sum()
    keep = kept[(np.cumsum(q5) - q5) < 0.5]
    assert 1 < len(keep) < 5                # top-p cuts into the top-5 here
    expected = np.zeros_like(row)
    expected[keep] = cooled[keep] / cooled[keep].sum()
    assert_steps(steps, "", "sampling", [
        ("probabilities at position 4", "p = softmax(l)", p),
        ("probabilities at position 4 after temperature 0.5", "softmax(l / 0.5)", cooled),
        ("probabilities at position 4 after top-k 5 and top-p 0.5",
         "keep the k likeliest, then the smallest set reaching p; renormalise", expected)],
        rtol=1e-3, atol=1e-6)
    assert walk.steps[-3].name == "probabilities at position 4"


def test_the_walk_of_a_sliding_window_and_a_greedy_head(tokenizer):
    from tfstudio.probes import forward_walk
    model = model_of("tiny-mistral", tokenizer)
    walk, steps = walk_steps(model, tokenizer, "abcab", layer=1, temperature=0, position=2)
    mask = steps["layers.1.attn: head 0: mask"]
    assert mask.formula == "M[i, j] = query i may attend to key j (causal) (window 16)"
    # temperature 0: no temperature step, the final distribution is the argmax alone
    sampling = [s.name for s in walk.steps if s.kind == "sampling"]
    greedy_name = "probabilities at position 2, greedy (temperature 0): the likeliest token alone"
    assert sampling == ["probabilities at position 2", greedy_name]
    greedy = steps[greedy_name].value
    assert greedy.argmax() == walk.logits[2].argmax() and greedy.sum() == greedy.max() == 1
    # an untied head says so
    untied = graph_file([TOKENS, {"id": "embed", "type": "token_embedding",
                                  "params": {"d_model": 64}},
                         {"id": "norm", "type": "norm", "params": {}}, HEAD],
                        [["tokens", "ids", "embed", "ids"], ["embed", "y", "norm", "x"],
                         ["norm", "y", "head", "x"]])
    inputs = probe_inputs(untied, tokenizer, "abc")
    untied_steps = {s.name: s for s in forward_walk(untied, inputs).steps}
    assert untied_steps["head: logits"].formula == "l = x W_vocab^T"
    ids = untied_steps["embed: token ids"]
    assert ids.value.dtype == np.int64 and ids.value.tolist() == inputs.ids["tokens"]


def moe_by_hand(x, moe):
    """Router logits, probabilities, the top-2 experts and their renormalised weights."""
    logits = x @ f64(moe.router.weight).T
    probs = softmax_rows(logits)
    chosen = np.argsort(-probs, axis=-1, kind="stable")[:, :2]
    top = np.take_along_axis(probs, chosen, -1)
    return logits, probs, chosen, top / top.sum(-1, keepdims=True)


def test_the_walk_of_a_mixture_of_experts_by_hand(tokenizer):
    """tiny-mixtral's router, the chosen experts and their weights, and the expert the shown
    position sent its token to first, opened up with its SwiGLU steps on the tokens routed to
    it (NaN on the others: the expert never saw them)."""
    model = model_of("tiny-mixtral", tokenizer)
    text, position = "hello world!", 4
    walk, steps = walk_steps(model, tokenizer, text, position=position)
    moe = block_of(model, "layers.0.moe")
    x = value_of(steps, "layers.0.norm_moe: output")
    logits, probs, chosen, weights = moe_by_hand(x, moe)
    # the test's text and position tell apart the first choice here from the second choice and
    # from the first choice of the other positions a slip could read
    first = chosen[position, 0]
    assert first != chosen[position, 1] and first not in (chosen[-1, 0], chosen[1, 0],
                                                          chosen[-2, 0])
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: router logits", "r = x W_router", logits),
        ("layers.0.moe: router probabilities", "softmax(r)", probs),
        ("layers.0.moe: chosen experts", "the top 2 experts per token", chosen),
        ("layers.0.moe: expert weights", "w = p_chosen / sum(p_chosen)", weights)])
    expert = moe.experts[first]
    routed = (chosen == first).any(-1)
    assert routed.sum() > 1 and not routed.all()   # routed and unrouted tokens both here
    up, act, gated, down = (np.where(routed[:, None], t, np.nan)
                            for t in swiglu_steps(x, expert, 128))
    label = f"layers.0.moe: expert {first}"
    assert_steps(steps, "layers.0.moe", "feed_forward", [
        (f"{label}: up projection", "u = x W_up", up),
        (f"{label}: gate", "g = silu(x W_gate)", act),
        (f"{label}: gated", "h = g * u", gated),
        (f"{label}: down projection", "y = h W_down", down)])
    mixed = np.zeros_like(x)
    for t in range(len(x)):
        for slot in range(2):
            _, _, _, y = swiglu_steps(x[t:t + 1], moe.experts[chosen[t, slot]], 128)
            mixed[t] += weights[t, slot] * y[0]
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: mixture output", "y = sum_k w_k FFN_(e_k)(x)", mixed)])
    names = [s.name for s in walk.steps if s.block == "layers.0.moe"]
    assert names == ["layers.0.moe: router logits", "layers.0.moe: router probabilities",
                     "layers.0.moe: chosen experts", "layers.0.moe: expert weights",
                     f"{label}: up projection", f"{label}: gate", f"{label}: gated",
                     f"{label}: down projection", "layers.0.moe: mixture output"]
    assert steps["layers.0.moe: chosen experts"].value.dtype == np.int64


def test_a_mixture_in_a_stream_shorter_than_the_shown_position_opens_its_last_tokens_expert(
        tokenizer):
    """tiny-t5 with a mixture of experts for the encoder's feed-forward and a source shorter
    than the target: the shown position (the target's last) is past the encoder's tokens, so
    the encoder's mixture opens the expert its last token went to first."""
    def moe_encoder(graph):
        ffn = graph.nodes["encoder"].subgraph.nodes["ffn"]
        ffn.type, ffn.params = "moe", {"experts": 4, "top_k": 2, "d_ff": 128}
    model = edited("tiny-t5", tokenizer, moe_encoder)
    moe = block_of(model, "encoder.0.ffn")
    with torch.no_grad():   # a router that sends these tokens to different experts
        moe.router.weight.normal_(generator=torch.Generator().manual_seed(0))
    walk, steps = walk_steps(model, tokenizer, "abc>abcdef", layer=0)
    assert (len(walk.ids["source"]), len(walk.ids["target"]), walk.position) == (3, 7, 6)
    x = value_of(steps, "encoder.0.norm_ffn: output")
    _, _, chosen, _ = moe_by_hand(x, moe)
    last = chosen[-1, 0]
    routed = (chosen == last).any(-1)
    up = np.where(routed[:, None], swiglu_steps(x, moe.experts[last], 128)[0], np.nan)
    assert_steps(steps, "encoder.0.ffn", "feed_forward", [
        (f"encoder.0.ffn: expert {last}: up projection", "u = x W_up", up)])
    assert last not in chosen[:-1, 0] and not routed.all()   # the other tokens' are others
    assert [n for n in steps if n.startswith("encoder.0.ffn: expert ")][1:] == [
        f"encoder.0.ffn: expert {last}: {s}"
        for s in ("up projection", "gate", "gated", "down projection")]


def test_the_walk_of_a_mixture_with_a_shared_expert(tokenizer):
    def shared(graph):
        graph.nodes["layers"].subgraph.nodes["moe"].params["shared_expert"] = True
    model = edited("tiny-mixtral", tokenizer, shared)
    _, steps = walk_steps(model, tokenizer, "abcab", layer=0)
    moe = block_of(model, "layers.0.moe")
    x = value_of(steps, "layers.0.norm_moe: output")
    _, _, chosen, weights = moe_by_hand(x, moe)
    mixed = swiglu_steps(x, moe.shared, 128)[3]
    for t in range(len(x)):
        for slot in range(2):
            mixed[t] += weights[t, slot] * swiglu_steps(x[t:t + 1], moe.experts[chosen[t, slot]],
                                                        128)[3][0]
    assert_steps(steps, "layers.0.moe", "moe", [
        ("layers.0.moe: mixture output", "y = sum_k w_k FFN_(e_k)(x) + FFN_shared(x)", mixed)])


def test_the_walk_of_cross_attention_by_hand(tokenizer):
    """tiny-t5 with a grouped-query cross-attention that has biases: query head 3 of the target
    reads K/V head 1 of the source; the scaled embedding and the sinusoids before it."""
    def grouped(graph):
        graph.nodes["decoder"].subgraph.nodes["cross"].params.update(kv_heads=2, bias=True)
    model = edited("tiny-t5", tokenizer, grouped)
    cross = block_of(model, "decoder.0.cross")
    with torch.no_grad():
        for linear in (cross.q, cross.kv):
            linear.bias.add_(0.1 * torch.randn_like(linear.bias))
    _, steps = walk_steps(model, tokenizer, "abc>abcab", head=3, layer=0)
    ids = torch.tensor(probe_inputs(model, tokenizer, "abc>abcab").ids["source"])
    embedded = f64(block_of(model, "src_embed").weight)[ids] * 8.0        # sqrt(64)
    t, k2 = np.arange(3)[:, None], np.arange(0, 64, 2)[None, :]
    table = np.zeros((3, 64))
    table[:, 0::2], table[:, 1::2] = np.sin(t / 10000 ** (k2 / 64)), np.cos(t / 10000 ** (k2 / 64))
    assert_steps(steps, "src_embed", "token_embedding", [
        ("src_embed: embedding", "x_t = E[id_t] * sqrt(d)", embedded)])
    assert_steps(steps, "src_pos", "positional_encoding", [
        ("src_pos: position vectors", "p_(t,2k) = sin(t / 10000^(2k/d)), p_(t,2k+1) = cos(...)",
         table),
        ("src_pos: embedding + position", "x_t + p_t", embedded + table)])
    x = value_of(steps, "decoder.0.norm_cross: output")
    memory = value_of(steps, "encoder_norm: output")
    q = (x @ f64(cross.q.weight).T + f64(cross.q.bias))[:, 48:64]
    kv = memory @ f64(cross.kv.weight).T + f64(cross.kv.bias)        # [k: 2 heads | v: 2 heads]
    k, v = kv[:, 16:32], kv[:, 48:64]
    scores = q @ k.T / 4.0
    weights = softmax_rows(scores)
    label = "decoder.0.cross: head 3"
    assert_steps(steps, "decoder.0.cross", "cross_attention", [
        (f"{label}: q", "q = x W_q (queries from the target)", q),
        (f"{label}: k", "k = memory W_k (keys from the source, K/V head 1)", k),
        (f"{label}: v", "v = memory W_v (values from the source)", v),
        (f"{label}: scores", "S = q k^T / sqrt(d_head)", scores),
        (f"{label}: softmax", "A = softmax(S) per row (no mask)", weights),
        (f"{label}: weighted values", "z = A v", weights @ v)])
    for block in ("decoder.0.cross", "decoder.1.cross"):
        projection = steps[f"{block}: output projection"]
        assert (projection.formula, projection.block, projection.kind) == (
            "y = concat(z_1..z_H) W_o", block, "cross_attention")
    assert not any(n.startswith("decoder.1.cross: head") for n in steps)
    # a head the cross-attention lacks (2 heads where the self-attentions have 4) is refused
    # naming it
    def two_heads(graph):
        graph.nodes["decoder"].subgraph.nodes["cross"].params.update(heads=2, kv_heads=2)
    narrow = edited("tiny-t5", tokenizer, two_heads)
    with pytest.raises(ValueError) as caught:
        walk_steps(narrow, tokenizer, "abc>abcab", head=2)
    assert str(caught.value) == ("head 2 does not exist in decoder.0.cross (it has 2 heads: "
                                 "0..1)")


def test_the_walk_of_alibi_attention_by_hand(tokenizer):
    """tiny-alibi-gpt's head 1: the bias -m_h (i - j) on allowed keys (m_1 = 2^-4 for 4 heads),
    -inf where the mask removes the key (the bias as the model adds it), and the softmax of
    S + B."""
    model = model_of("tiny-alibi-gpt", tokenizer)
    _, steps = walk_steps(model, tokenizer, "abcab", head=1)
    label = "layers.0.attn: head 1"
    q = value_of(steps, f"{label}: q")
    k = value_of(steps, f"{label}: k")
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    causal = j <= i
    bias = np.where(causal, -(2.0 ** -4) * (i - j), -np.inf)
    weights = softmax_rows(q @ k.T / 4.0 + np.where(causal, bias, 0.0), causal)
    assert_steps(steps, "layers.0.attn", "attention", [
        (f"{label}: ALiBi bias", "B[i, j] = -0.0625 * |i - j| (this head's slope)", bias),
        (f"{label}: softmax", "A = softmax(S + B, masked -inf) per row", weights)])


def test_the_walk_of_a_bidirectional_encoder_and_its_masked_lm_head(tokenizer):
    """tiny-bert: no causal mask (every key allowed, a symmetric ALiBi bias) and the head's
    transform LayerNorm(gelu(x W + b)) before the logits."""
    model = model_of("tiny-bert", tokenizer)
    _, steps = walk_steps(model, tokenizer, "abcab")
    mask = steps["layers.0.attn: head 0: mask"]
    assert mask.formula == "M[i, j] = query i may attend to key j"
    assert mask.value.all() and mask.value.shape == (5, 5)
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    np.testing.assert_allclose(steps["layers.0.attn: head 0: ALiBi bias"].value,
                               -0.25 * np.abs(i - j))
    head = block_of(model, "head")
    x = value_of(steps, "layers.1.norm_ffn: output")
    dense = F.gelu(torch.tensor(x @ f64(head.dense.weight).T + f64(head.dense.bias))).numpy()
    mu, var = dense.mean(-1, keepdims=True), dense.var(-1, keepdims=True)
    transformed = (dense - mu) / np.sqrt(var + head.norm.eps) * f64(head.norm.weight) \
        + f64(head.norm.bias)
    assert_steps(steps, "head", "mlm_head", [
        ("head: transform", "LayerNorm(gelu(x W_dense + b))", transformed)])
    assert [n for n in steps if n.startswith("head:")] == ["head: transform", "head: logits"]


@pytest.mark.parametrize("cell, formula", [
    ("lstm", "h_t = o_t * tanh(c_t), c_t = f_t * c_(t-1) + i_t * g_t"),
    ("gru", "h_t = (1 - z_t) * n_t + z_t * h_(t-1)"),
    ("rnn", "h_t = tanh(x_t W_ih + h_(t-1) W_hh + b)")])
def test_the_walk_of_a_recurrent_layer(tokenizer, cell, formula):
    def with_cell(graph):
        graph.nodes["rnn"].params["cell"] = cell
    model = edited("tiny-lstm", tokenizer, with_cell)
    walk, steps = walk_steps(model, tokenizer, "abcab")
    x = value_of(steps, "embed: embedding")
    expected = [("rnn: input", "x", x)]
    if cell == "rnn":       # by hand: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)
        rnn = next(m for m in block_of(model, "rnn").modules() if isinstance(m, torch.nn.RNN))
        h, hidden = np.zeros(64), []
        for x_t in x:
            h = np.tanh(f64(rnn.weight_ih_l0) @ x_t + f64(rnn.bias_ih_l0)
                        + f64(rnn.weight_hh_l0) @ h + f64(rnn.bias_hh_l0))
            hidden.append(h)
        expected.append(("rnn: hidden state", formula, np.array(hidden)))
    assert_steps(steps, "rnn", "rnn", expected)
    state = steps["rnn: hidden state"]
    assert (state.formula, state.block, state.kind, state.shape) == (formula, "rnn", "rnn",
                                                                     (5, 64))
    assert [s.name for s in walk.steps if s.block == "rnn"] == ["rnn: input", "rnn: hidden state"]


def test_each_blocks_last_step_is_the_output_it_hands_on(tokenizer):
    """The walk shows the model's own tensors, so it cannot disagree with the model: the last
    step of every block with hook points is exactly the output the block handed on in the same
    pass, as a forward hook of this test sees it (one block of each kind the presets use)."""
    from tfstudio import nn as blocks
    from tfstudio.probes import forward_walk
    hooked = (blocks.TokenEmbedding, blocks.PositionalEncoding, blocks.Norm,
              blocks.SelfAttention, blocks.CrossAttention, blocks.FeedForward,
              blocks.MixtureOfExperts, blocks.LMHead, blocks.MLMHead, blocks.Recurrent)
    seen = set()
    for preset, text in (("tiny-mixtral", "abc"), ("tiny-t5", "ab>abc"), ("tiny-llama", "abc"),
                         ("tiny-bert", "abc"), ("tiny-lstm", "abc")):
        model = model_of(preset, tokenizer)
        outputs, handles = {}, []
        for key, module in model.blocks():
            if type(module) not in hooked:
                continue

            def keep(mod, args, out, name=".".join(map(str, key))):
                out = out[0] if isinstance(out, tuple) else out
                outputs.setdefault(name, out[0].detach().numpy().copy())
            handles.append(module.register_forward_hook(keep))
        try:
            walk = forward_walk(model, probe_inputs(model, tokenizer, text))
        finally:
            for handle in handles:
                handle.remove()
        for name, output in outputs.items():
            last = [s for s in walk.steps if s.block == name][-1]
            np.testing.assert_array_equal(last.value, output, err_msg=f"{preset} {name}")
            seen.add(type(block_of(model, name)))
    assert seen == set(hooked)


class Gain(torch.nn.Module):
    """y = g * x: a block registered from outside tfstudio, so without hook points."""

    def __init__(self, init: float = 1.0):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.tensor(float(init)))

    def forward(self, x):
        return x * self.gain


@pytest.fixture
def gain_block():
    from tfstudio import nn as blocks
    from tfstudio.blocks._common import same_as_input, x_in, y_out
    from tfstudio.graph.schema import BlockSpec, ParamSpec, Recipe, register, unregister
    spec = register(BlockSpec(
        type="walk_gain", family="residual", title="Gain", description="y = g * x",
        params=(ParamSpec("init", "float", 1.0, "The starting value of the gain."),),
        inputs=(x_in(),), outputs=(y_out(),), infer=same_as_input(),
        count_params=lambda p, s: 1,
        recipe=Recipe("Gain", lambda p, w: {"init": p["init"]}, defaults={"init": 1.0})))
    blocks.register_module(Gain)
    yield spec
    unregister("walk_gain")
    blocks.unregister_module("Gain")


def test_every_block_of_a_compiled_graph_is_walked_inline_sums_and_foreign_blocks_too(
        tokenizer, gain_block):
    """tiny-gpt with no positions, a dropout after each feed-forward (both written inline by the
    compiler, as the residual sums are), a final LayerNorm without a shift and a block type
    registered from outside tfstudio before the head: each layer shows the residual stream it
    hands on (its input plus each branch, by hand), the norm its formula without "+ b", the
    foreign block its output as one step, the dropout and the absent positions nothing."""
    from tfstudio.graph import Edge, Node

    def edit(graph):
        graph.nodes["pos"].params["scheme"] = "none"
        graph.nodes["final_norm"].params["bias"] = False
        layer = graph.nodes["layers"].subgraph
        layer.remove_edge(layer.edge_into("add_ffn", "in2"))
        layer.add_node(Node("drop", "dropout", {"dropout": 0.5}))
        layer.add_edge(Edge("ffn", "y", "drop", "x"))
        layer.add_edge(Edge("drop", "y", "add_ffn", "in2"))
        graph.remove_edge(graph.edge_into("head", "x"))
        graph.add_node(Node("gain", "walk_gain", {"init": 0.5}))
        graph.add_edge(Edge("final_norm", "y", "gain", "x"))
        graph.add_edge(Edge("gain", "y", "head", "x"))
    model = edited("tiny-gpt", tokenizer, edit)
    assert "F.dropout(" in model.source and "self.gain = Gain(init=0.5)" in model.source
    norm = block_of(model, "final_norm")
    with torch.no_grad():
        norm.weight.mul_(2.0)
    walk, steps = walk_steps(model, tokenizer, "abcab")
    # every block is the block of a step, except the positions block with no positions to
    # add; the blocks in the order computed, each layer's stream after its blocks
    order = list(dict.fromkeys(s.block for s in walk.steps if s.block))
    names = [".".join(map(str, k)) for k, _ in model.blocks() if k != ("pos",)]
    assert sorted(order) == sorted(names)
    leaves = [n for n in names if n not in ("layers.0", "layers.1")]
    assert [n for n in order if n in leaves] == leaves
    assert order.index("layers.0") == order.index("layers.0.ffn") + 1
    assert order.index("layers.1") == order.index("layers.1.ffn") + 1
    assert not any(n.startswith(("pos:", "layers.0.drop", "layers.1.drop")) for n in steps)
    stream = value_of(steps, "embed: embedding")
    np.testing.assert_array_equal(stream, f64(block_of(model, "embed").weight)[
        walk.ids["tokens"]])
    for i in (0, 1):      # x + attention branch + feed-forward branch (the dropout: identity)
        stream = stream + value_of(steps, f"layers.{i}.attn: output projection") \
            + value_of(steps, f"layers.{i}.ffn: down projection")
        assert_steps(steps, f"layers.{i}", "layer", [
            (f"layers.{i}: residual stream",
             "x after this layer: its input plus what each branch added", stream)])
    x = value_of(steps, "final_norm: input")
    np.testing.assert_array_equal(x, steps["layers.1: residual stream"].value)
    normed = 2 * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert_steps(steps, "final_norm", "norm", [
        ("final_norm: output", "(x - mean(x)) / sqrt(var(x) + eps) * g", normed)])
    assert_steps(steps, "gain", "Gain", [("gain: output", "y = Gain(x)", 0.5 * normed)])
    assert [n for n in steps if n.startswith("gain")] == ["gain: output"]
    assert_steps(steps, "head", "lm_head", [
        ("head: logits", "l = x W_vocab^T (tied to the embedding)",
         0.5 * normed @ f64(block_of(model, "embed").weight).T)])


def test_the_last_sampling_card_names_the_filters_that_ran_or_says_none_did():
    """It read "after top-k 0 and top-p 1" when both filters were off."""
    from tfstudio.probes.walk import sampling_steps
    row = np.array([2.0, 1.0, 0.5, -1.0])
    names = {(k, p): sampling_steps(row, 3, 1.0, k, p)[-1].name
             for k, p in ((0, 1.0), (2, 1.0), (0, 0.5), (2, 0.5))}
    assert names == {(0, 1.0): "probabilities at position 3, no filter (top-k and top-p off)",
                     (2, 1.0): "probabilities at position 3 after top-k 2",
                     (0, 0.5): "probabilities at position 3 after top-p 0.5",
                     (2, 0.5): "probabilities at position 3 after top-k 2 and top-p 0.5"}
    assert sampling_steps(row, 3, 0.0, 0, 1.0)[-1].name.endswith("the likeliest token alone")
