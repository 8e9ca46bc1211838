"""Hook points: the walk reads what the model computed, on every preset with every RoPE scaling
and every attention layout, and a model nobody listens to keeps its fused attention."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tfstudio
from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.graph.serialize import save_graph
from tfstudio.nn import SelfAttention, attached, hook_points
from tfstudio.presets import load_preset
from tfstudio.probes import forward_walk, probe_inputs
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)

TEXT = "abcab cabca>bcabc"
PRESETS = ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt", "tiny-mixtral", "tiny-mistral", "tiny-t5",
           "tiny-transformer", "tiny-lstm", "tiny-bert", "tiny-induction"]
SCALINGS = ["none", "linear", "ntk"]     # none: the preset's own positions
LAYOUTS = ["mha", "gqa", "mqa"]          # key/value heads: all, half, one


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer("byte")


def varied(preset: str, scaling: str, layout: str):
    """``preset`` with every attention set to ``layout`` and, unless ``scaling`` is none,
    RoPE scaled 4x by ``scaling``."""
    graph = load_preset(preset)
    for _, node in graph.walk():
        if node.type not in ("attention", "cross_attention"):
            continue
        heads = node.param("heads")
        node.params["kv_heads"] = {"mha": heads, "gqa": max(heads // 2, 1), "mqa": 1}[layout]
        if scaling != "none" and node.type == "attention":
            node.params.update(position="rope", rope_scaling=4.0, rope_scaling_type=scaling)
    return graph


def has_attention(preset: str) -> bool:
    return any(n.type == "attention" for _, n in load_preset(preset).walk())


CASES = [(p, s, k) for p in PRESETS for s in SCALINGS for k in LAYOUTS
         if has_attention(p) or (s, k) == ("none", "mha")]


@pytest.mark.parametrize("preset,scaling,layout", CASES)
def test_every_preset_scaling_and_layout_walks_to_the_models_logits(preset, scaling, layout,
                                                                     tokenizer):
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(varied(preset, scaling, layout),
                                                 tokenizer)).eval()
    inputs = probe_inputs(model, tokenizer, TEXT)
    with torch.no_grad():
        expected = model(*inputs.args)[0].numpy()   # the fused path: nobody is listening
    head = 1 if has_attention(preset) else 0
    walk = forward_walk(model, inputs, head=head)
    logits = [s for s in walk.steps if s.name.endswith(": logits")]
    assert len(logits) == 1
    np.testing.assert_allclose(logits[0].value, expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(walk.logits, expected, atol=1e-5, rtol=0)
    # a head's scores are its own q against its K/V head's k (rotated when RoPE turns them)
    for block, module in model.attention_modules():
        if not isinstance(module, SelfAttention):
            continue
        name = ".".join(map(str, block)) + f": head {head}"
        rotated = " rotated (RoPE)" if module.position == "rope" else ""
        q = walk.step(f"{name}: q{rotated}").value
        k = walk.step(f"{name}: k{rotated}").value
        np.testing.assert_allclose(walk.step(f"{name}: scores").value,
                                   q @ k.T / math.sqrt(module.head_dim), atol=1e-4)


def test_rope_scaling_changes_what_the_walk_reads(tokenizer):
    """NTK and linear scaling turn q differently, and the walk shows each model's own turn."""
    rotated = {}
    for scaling in ("linear", "ntk"):
        torch.manual_seed(0)
        model = compile_graph(fit_graph_to_tokenizer(varied("tiny-llama", scaling, "gqa"),
                                                     tokenizer)).eval()
        walk = forward_walk(model, probe_inputs(model, tokenizer, TEXT), layer=0)
        rotated[scaling] = walk.step("layers.0.attn: head 0: q rotated (RoPE)").value
        plain = walk.step("layers.0.attn: head 0: q").value
        np.testing.assert_allclose(rotated[scaling][0], plain[0], atol=1e-6)  # position 0
    assert np.abs(rotated["linear"][5:] - rotated["ntk"][5:]).max() > 1e-3


def test_ntk_scaled_llama_explains_from_the_command_line(tmp_path, capsys):
    """The reported failure: tiny-llama with NTK scaling 4 was refused by the walk's check."""
    path = tmp_path / "ntk.json"
    save_graph(varied("tiny-llama", "ntk", "gqa"), path)
    code = main(["explain", str(path), "--text", TEXT, "--json", "--no-values"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "layers.0.attn: head 0: q rotated (RoPE)" in out


def test_a_model_nobody_listens_to_keeps_the_fused_attention(tokenizer, monkeypatch):
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    ids = torch.tensor([tokenizer.encode(TEXT)])
    fused, sdpa = [], F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention",
                        lambda *a, **k: fused.append(1) or sdpa(*a, **k))
    blocks = len(model.attention_modules())
    with torch.no_grad():
        model(ids)
        assert len(fused) == blocks
        with attached(model, lambda *a: None, names={"layers.0.attn.hook_out"}):
            model(ids)            # the output needs no weights: still fused
        assert len(fused) == 2 * blocks
        with attached(model, lambda *a: None, names={"layers.0.attn.hook_weights"}):
            model(ids)
        assert len(fused) == 3 * blocks - 1  # only the block whose weights were asked for
        model(ids)
        assert len(fused) == 4 * blocks - 1  # and afterwards every block is fused again
    assert not any(getattr(m, "hooked", False) for m in model.modules())
    assert not any(p.fns for p in hook_points(model).values())


def test_a_hook_that_returns_a_tensor_replaces_it(tokenizer):
    """As in TransformerLens: zeroing the attention output leaves the stream without it."""
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    ids = torch.tensor([tokenizer.encode(TEXT)])
    names = {f"layers.{i}.attn.hook_out" for i in range(2)}
    with torch.no_grad():
        with attached(model, lambda _n, _p, x: torch.zeros_like(x), names=names):
            zeroed = model(ids)
        for layer in model.layers:   # the same model with the attention branch cut out
            layer.attn.out.weight.zero_()
            layer.attn.out.bias.zero_()
        np.testing.assert_allclose(zeroed.numpy(), model(ids).numpy(), atol=1e-6)


def test_hook_points_cost_no_parameters():
    model = tfstudio.compile_graph(load_preset("tiny-llama"))
    assert not any(".hook_" in name for name in model.state_dict())
    assert "layers.0.attn.hook_scores" in hook_points(model)
