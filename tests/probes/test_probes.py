"""The probes read real tensors of a live model: each read-out is checked against the published
formula or a second, independent computation, and a probe leaves the model as it found it."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.nn import attached
from tfstudio.presets import load_preset
from tfstudio.probes import (
    ActivationRecorder,
    SnapshotStore,
    attention_maps,
    expert_routing,
    gradient_norms,
    node_values,
    position_data,
    probe_inputs,
    rope_score,
    take_snapshot,
)
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
TEXT = "abcdefgh>hgfedcba"


def model_of(preset: str, tokenizer, edit=None, seed: int = 0):
    graph = fit_graph_to_tokenizer(load_preset(preset), tokenizer)
    if edit is not None:
        edit(graph)
    torch.manual_seed(seed)
    return compile_graph(graph)


def keep_input(store: dict, key: str):
    """A forward hook noting a module's input (returning None keeps the module's output)."""
    def hook(module, args, output):
        store.setdefault(key, args[0])
    return hook


def attn_node(graph):
    return graph.node("layers").subgraph.node("attn")


# ---------------------------------------------------------------------------- positions
def test_sinusoidal_table_matches_the_published_values(tokenizer):
    def small(g):
        g.node("embed").params["d_model"] = 8
        g.node("pos").params["scheme"] = "sinusoidal"
        attn_node(g).params.update(heads=2, kv_heads=2)

    model = model_of("tiny-gpt", tokenizer, small)
    data = position_data(model, length=16)["sinusoidal"]
    # the reference row PE(pos=2, d=8), from the formula written out by hand
    expected = [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000]
    np.testing.assert_allclose(data["table"][2], expected, atol=1e-4)
    # every entry against PE(pos,2k)=sin(pos/10000^(2k/d)), PE(pos,2k+1)=cos(...)
    for pos in range(16):
        for i in range(8):
            angle = pos / 10000 ** ((i - i % 2) / 8)
            want = math.sin(angle) if i % 2 == 0 else math.cos(angle)
            assert data["table"][pos, i] == pytest.approx(want, abs=1e-5)
    # p_i . p_j for all pairs, and sin^2 + cos^2 = 1 per pair gives |p|^2 = d / 2
    table = data["table"].astype(np.float64)
    np.testing.assert_allclose(data["similarity"], table @ table.T, atol=1e-4)
    np.testing.assert_allclose(np.diag(data["similarity"]), 4.0, atol=1e-4)


def test_learned_table_is_the_trained_weight(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    weight = model.pos.table.weight.detach().numpy()
    data = position_data(model, length=20)["learned"]
    np.testing.assert_array_equal(data["table"], weight[:20])
    assert data["block"] == "pos"


def test_alibi_bias_is_minus_slope_times_distance(tokenizer):
    model = model_of("tiny-alibi-gpt", tokenizer)
    data = position_data(model, length=10)["alibi"]
    heads = 4
    slopes = [2 ** (-8 * (h + 1) / heads) for h in range(heads)]  # Press et al., n a power of 2
    np.testing.assert_allclose(data["slopes"], slopes)
    bias = data["bias"]
    assert bias.shape == (heads, 10, 10)
    for h in range(heads):
        for i in range(10):
            for j in range(10):
                if j <= i:
                    assert bias[h, i, j] == pytest.approx(-slopes[h] * (i - j))
                else:  # causal: future keys are masked, not merely penalised
                    assert bias[h, i, j] == -math.inf


def test_rope_score_depends_only_on_the_offset(tokenizer):
    model = model_of("tiny-llama", tokenizer)
    attn = model.layers[0].attn
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(attn.head_dim, generator=g), torch.randn(attn.head_dim, generator=g)
    same_offset = [rope_score(attn, q, k, m, m - 3) for m in (3, 7, 20, 41)]
    np.testing.assert_allclose(same_offset, same_offset[0], rtol=1e-4, atol=1e-4)
    assert abs(rope_score(attn, q, k, 10, 9) - same_offset[0]) > 1e-3  # the offset does matter
    # the all-ones curve: q_m . k_n / d = mean_k cos((m - n) w_k), w_k = base^(-2k/d)
    data = position_data(model, length=32)["rope"]
    d = attn.head_dim
    w = np.array([10000.0 ** (-2 * i / d) for i in range(d // 2)])
    np.testing.assert_allclose(data["frequencies"], w, rtol=1e-5)
    expected = [np.mean(np.cos(off * w)) for off in range(32)]
    np.testing.assert_allclose(data["scores"], expected, atol=1e-5)
    sim = data["similarity"]  # a function of i - j alone: constant along each diagonal
    for off in range(-5, 6):
        diagonal = np.diagonal(sim, offset=off)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-5)


def test_rope_scaling_slows_the_rotation(tokenizer):
    def scaled(g):
        attn_node(g).params["rope_scaling"] = 4.0

    model = model_of("tiny-llama", tokenizer, scaled)
    plain = position_data(model_of("tiny-llama", tokenizer), 8)["rope"]["frequencies"]
    np.testing.assert_allclose(position_data(model, 8)["rope"]["frequencies"], plain / 4,
                               rtol=1e-5)


def test_ntk_scaling_raises_the_base_the_probe_draws(tokenizer):
    def ntk(g):
        attn_node(g).params.update(rope_scaling=4.0, rope_scaling_type="ntk")

    model = model_of("tiny-llama", tokenizer, ntk)
    d = model.layers[0].attn.head_dim
    base = 10000.0 * 4.0 ** (d / (d - 2))  # NTK-aware: base' = base * s^(d / (d - 2))
    w = np.array([base ** (-2 * i / d) for i in range(d // 2)])
    np.testing.assert_allclose(position_data(model, 8)["rope"]["frequencies"], w, rtol=1e-5)


# ---------------------------------------------------------------------------- attention
def _rotate(x: torch.Tensor, base: float) -> torch.Tensor:
    """RoPE written out: pair (x_2k, x_2k+1) at position p turns by p * base^(-2k/d)."""
    T, d = x.shape[-2], x.shape[-1]
    out = x.clone()
    for p in range(T):
        for k in range(d // 2):
            a = p * base ** (-2 * k / d)
            e, o = x[..., p, 2 * k], x[..., p, 2 * k + 1]
            out[..., p, 2 * k] = e * math.cos(a) - o * math.sin(a)
            out[..., p, 2 * k + 1] = e * math.sin(a) + o * math.cos(a)
    return out


@torch.no_grad()
def _explicit_attention(attn, x: torch.Tensor) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d) + causal mask) from the module's weights, written out here."""
    H, KV, hd = attn.heads, attn.kv_heads, attn.head_dim
    qkv = x @ attn.qkv.weight.T + (attn.qkv.bias if attn.qkv.bias is not None else 0)
    q, k, _ = qkv.split((H * hd, KV * hd, KV * hd), dim=-1)
    T = x.shape[1]
    q = q.view(1, T, H, hd).transpose(1, 2)
    k = k.view(1, T, KV, hd).transpose(1, 2)
    if attn.position == "rope":
        q, k = _rotate(q, attn.rope_base), _rotate(k, attn.rope_base)
    k = k.repeat_interleave(H // KV, dim=1)  # GQA: query head h reads K/V head h // groups
    scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(future, -math.inf), dim=-1)[0]


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama"])  # MHA, and GQA with RoPE
def test_attention_probe_matches_the_fast_path_and_an_independent_computation(preset,
                                                                               tokenizer):
    model = model_of(preset, tokenizer).train()
    inputs = probe_inputs(model, tokenizer, TEXT)
    seen = {}
    attn = model.layers[0].attn
    hook = attn.register_forward_hook(keep_input(seen, "x"))
    with torch.no_grad():
        fast = model.eval()(*inputs.args)  # the SDPA path
    model.train()
    hook.remove()
    maps = attention_maps(model, inputs)
    assert model.training and attn.hooked == 0  # left as found: nothing attached

    T = len(inputs.ids["tokens"])
    assert set(maps) == {"layers.0.attn", "layers.1.attn"}
    first = maps["layers.0.attn"]
    assert first.weights.shape == (attn.heads, T, T)
    np.testing.assert_allclose(first.weights, _explicit_attention(attn, seen["x"]).numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(first.weights.sum(-1), 1.0, atol=1e-5)
    assert (first.weights[:, ~first.allowed] == 0).all()
    np.testing.assert_array_equal(first.allowed, np.tril(np.ones((T, T), dtype=bool)))
    assert (first.query_role, first.key_role, first.cross) == ("tokens", "tokens", False)

    # the explicit path the probe uses gives the same logits as the fast path
    listen = {f"layers.{i}.attn.hook_weights" for i in (0, 1)}
    with torch.no_grad(), attached(model, lambda *_: None, names=listen):
        explicit = model.eval()(*inputs.args)
    np.testing.assert_allclose(explicit.numpy(), fast.numpy(), atol=1e-5)


def test_sliding_window_mask_is_reported(tokenizer):
    def windowed(g):
        attn_node(g).params["window"] = 3

    model = model_of("tiny-gpt", tokenizer, windowed)
    maps = attention_maps(model, probe_inputs(model, tokenizer, TEXT))
    allowed = maps["layers.0.attn"].allowed
    T = allowed.shape[0]
    expected = np.array([[0 <= i - j < 3 for j in range(T)] for i in range(T)])
    np.testing.assert_array_equal(allowed, expected)
    assert (maps["layers.0.attn"].weights[:, ~expected] == 0).all()


def test_encoder_decoder_attention_is_labelled_by_stream(tokenizer):
    model = model_of("tiny-transformer", tokenizer)
    inputs = probe_inputs(model, tokenizer, "abcd>dcba")
    assert inputs.ids["source"] == tokenizer.encode("abcd")
    assert inputs.ids["target"] == [tokenizer.bos_id] + tokenizer.encode("dcba")
    maps = attention_maps(model, inputs)
    cross = [m for m in maps.values() if m.cross]
    encoder = maps["encoder.0.attn"]
    assert cross and all((m.query_role, m.key_role) == ("target", "source") for m in cross)
    assert cross[0].weights.shape[1:] == (5, 4) and cross[0].allowed.all()
    assert (encoder.query_role, encoder.key_role) == ("source", "source")
    assert encoder.allowed.all()  # the encoder is bidirectional: nothing masked


# ---------------------------------------------------------------------------- routing, telemetry
def test_expert_routing_follows_the_router(tokenizer):
    """What the "choices" point read equals top-k of softmax(x W_router) recomputed from the
    router's weights on the MoE's input (read at the norm before it)."""
    model = model_of("tiny-mixtral", tokenizer).eval()
    inputs = probe_inputs(model, tokenizer, TEXT)
    seen = {}

    def keep(name, _point, x):   # returns None: the model goes on with its own tensor
        seen[name] = x[0]
    with torch.no_grad(), attached(model, keep,
                                   names={f"layers.{i}.norm_moe.hook_out" for i in (0, 1)}):
        model(*inputs.args)
    routing = expert_routing(model, inputs)
    assert sorted(routing) == ["layers.0.moe", "layers.1.moe"]
    for i in (0, 1):
        moe, got = model.layers[i].moe, routing[f"layers.{i}.moe"]
        x = seen[f"layers.{i}.norm_moe.hook_out"].double()
        probs = torch.softmax(x @ moe.router.weight.double().T, -1)          # [T, E]
        top2 = torch.topk(probs, 2, dim=-1).indices.numpy()
        np.testing.assert_array_equal(got["assignments"], top2)
        counts = np.bincount(top2.ravel(), minlength=4) / top2.shape[0]
        np.testing.assert_allclose(got["load"], counts, atol=1e-6)
        assert got["load"].sum() == pytest.approx(2.0)          # top_k = 2 choices per token
    assert routing["layers.0.moe"]["assignments"].tolist() != \
        routing["layers.1.moe"]["assignments"].tolist()          # each layer its own choices


def test_snapshot_leaves_router_statistics_of_training(tokenizer):
    model = model_of("tiny-mixtral", tokenizer).train()
    model(torch.tensor([tokenizer.encode("some training text")]))
    before = model.layers[0].moe.last_expert_load.clone()
    take_snapshot(model, tokenizer, TEXT)
    assert torch.equal(model.layers[0].moe.last_expert_load, before)


def test_activation_rms_and_gradient_norms_per_block(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    ids = torch.tensor([tokenizer.encode(TEXT)])
    outputs = {}

    def keep_output(module, args, output):
        outputs["y"] = output
    hook = model.layers[1].ffn.register_forward_hook(keep_output)
    with ActivationRecorder(model) as recorder:
        logits = model(ids)
    hook.remove()
    y = outputs["y"].detach().numpy().astype(np.float64)
    assert recorder.values["layers.1.ffn"] == pytest.approx(np.sqrt(np.mean(y ** 2)), rel=1e-5)
    assert not model.layers[1].ffn._forward_hooks  # hooks removed

    logits.sum().backward()
    norms = gradient_norms(model)
    flat = np.concatenate([p.grad.numpy().ravel() for p in model.layers[0].attn.parameters()])
    assert norms["layers.0.attn"] == pytest.approx(np.linalg.norm(flat), rel=1e-5)


def test_node_values_fold_group_copies_exactly():
    values = {"embed": 3.0, "layers.0": 3.0, "layers.1": 4.0, "layers.0.attn": 1.0,
              "layers.1.attn": 2.0, "layers.0.ffn": 6.0, "layers.1.ffn": 8.0, "head": 0.5}
    top = node_values(values, ())
    assert top == {"embed": 3.0, "layers": pytest.approx(5.0), "head": 0.5}  # sqrt(9 + 16)
    inside = node_values(values, ("layers",), combine="rms")
    assert inside["attn"] == pytest.approx(math.sqrt((1 + 4) / 2))
    assert inside["ffn"] == pytest.approx(math.sqrt((36 + 64) / 2))
    assert node_values(values, ("other",)) == {}
    with pytest.raises(ValueError, match="combine"):
        node_values(values, (), combine="mean")


# ---------------------------------------------------------------------------- snapshots
def test_snapshot_round_trips_through_its_file(tokenizer, tmp_path):
    model = model_of("tiny-mixtral", tokenizer)
    snap = take_snapshot(model, tokenizer, "a\x00b <|endoftext|> é", step=7)
    store = SnapshotStore(tmp_path)
    store.save(snap)
    assert store.steps() == [7]
    back = store.load(7)
    assert back["tokens"] == snap["tokens"] and back["tokens"]["tokens"][1] == "\x00"
    assert back["text"] == snap["text"] and back["step"] == 7
    for key, m in snap["attention"].items():
        np.testing.assert_array_equal(back["attention"][key]["weights"], m["weights"])
        np.testing.assert_array_equal(back["attention"][key]["allowed"], m["allowed"])
    np.testing.assert_array_equal(back["experts"]["layers.1.moe"]["assignments"],
                                  snap["experts"]["layers.1.moe"]["assignments"])
    np.testing.assert_array_equal(back["next_token_logits"], snap["next_token_logits"])
    assert back["activation_rms"] == pytest.approx(snap["activation_rms"])


def test_damaged_snapshot_file_says_so(tmp_path):
    store = SnapshotStore(tmp_path)
    store.directory.mkdir(parents=True)
    store.path(5).write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="damaged"):
        store.load(5)


def test_empty_probe_text_is_refused_with_a_hint(tokenizer):
    model = model_of("tiny-gpt", tokenizer)
    with pytest.raises(ValueError, match="probe text is empty"):
        probe_inputs(model, tokenizer, "   ")


def test_probe_text_never_runs_past_a_learned_position_table(tokenizer):
    def short_table(g):
        g.node("pos").params["max_len"] = 8
        g.meta["context_length"] = 8

    model = model_of("tiny-gpt", tokenizer, short_table)
    snap = take_snapshot(model, tokenizer, "a much longer text than the table", max_tokens=64)
    assert len(snap["tokens"]["tokens"]) == 8


def test_trainer_probes_between_steps_without_changing_the_run(tmp_path):
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.trainer import Trainer

    def train(probe_every: int, run_dir):
        cfg = TrainConfig(corpus="task:reverse", tokenizer="char", steps=6, batch_size=4,
                          seq_len=32, eval_every=0, warmup_steps=2, probe_every=probe_every)
        events = []
        end = Trainer(load_preset("tiny-gpt"), cfg, run_dir=run_dir,
                      listeners=[events.append]).run()
        assert end.kind == "Finished", end
        return events

    plain = train(0, tmp_path / "plain")
    probed = train(3, tmp_path / "probed")
    losses = lambda evs: [e.loss for e in evs if e.kind == "StepMetrics"]
    assert losses(probed) == losses(plain)  # probing consumes no randomness, changes no weights
    probes = [e for e in probed if e.kind == "Probe"]
    assert [p.step for p in probes] == [0, 3, 6]
    assert SnapshotStore(tmp_path / "probed").steps() == [0, 3, 6]
    last = probes[-1].data
    assert last["text"].count(">") == 1  # the default probe text is an example of the task
    assert last["grad_norm"] and not probes[0].data["grad_norm"]  # no gradients before step 1
    rows = last["attention"]["layers.0.attn"]["weights"].sum(-1)
    np.testing.assert_allclose(rows, 1.0, atol=1e-5)
