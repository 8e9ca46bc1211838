"""Declared hook points: every block makes its points in __init__, its one forward passes
through them, and attaching adds functions to them, never methods to the blocks."""
import types
from pathlib import Path

import pytest
import torch

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.nn import GraphLayer, HookPoint, attached, hook_points
from tfstudio.nn.hooks import Hooked
from tfstudio.presets import load_preset

PRESETS = ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt", "tiny-mixtral", "tiny-t5", "tiny-bert",
           "tiny-lstm", "tiny-window-lm"]


def inputs(model, length=12):
    ids = torch.randint(0, model.vocab_size, (2, length),
                        generator=torch.Generator().manual_seed(0))
    return (ids[:, :5], ids) if model.family == "encoder-decoder" else (ids,)


@pytest.mark.parametrize("preset", PRESETS)
def test_each_block_declares_the_points_its_table_describes(preset):
    model = compile_graph(load_preset(preset))
    blocks = [m for m in model.modules() if isinstance(m, Hooked)]
    assert blocks
    for block in blocks:   # before any probe attached: the points are already there
        declared = {name.removeprefix("hook_") for name, m in block.named_children()
                    if isinstance(m, HookPoint)}
        assert declared == set(block._hook_labels()), type(block).__name__
    labelled = hook_points(model)
    assert all(p.label and not p.fns for p in labelled.values())
    assert not any(".hook_" in name for name in model.state_dict())   # no parameters


@pytest.mark.parametrize("preset", PRESETS)
def test_attaching_adds_functions_never_methods(preset):
    model = compile_graph(load_preset(preset)).eval()
    hook_points(model)   # the points' labels: data, given once
    before = {id(m): (type(m), set(vars(m))) for m in model.modules()}
    seen = []
    with torch.no_grad(), attached(model, lambda name, _p, _x: seen.append(name)) as points:
        inside = {id(m): (type(m), set(vars(m))) for m in model.modules()}
        model(*inputs(model))
        assert not any(isinstance(v, types.MethodType) for m in model.modules()
                       for v in vars(m).values())
    assert inside == before
    assert set(seen) <= set(points) and len(seen) >= len(
        [m for m in model.modules() if isinstance(m, Hooked)])
    assert not any(p.fns for p in hook_points(model).values())
    layers = [m for m in model.modules() if isinstance(m, GraphLayer)]
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in layers)


def test_nested_contexts_feed_a_layer_copys_points_once_each():
    model = compile_graph(load_preset("tiny-gpt")).eval()
    outer, inner = [], []
    names = {"layers.0.hook_in", "layers.0.hook_out"}
    with torch.no_grad(), attached(model, lambda n, _p, _x: outer.append(n), names=names):
        with attached(model, lambda n, _p, _x: inner.append(n), names=names):
            model(*inputs(model))
        model(*inputs(model))   # the inner one is gone; the outer still listens
    assert sorted(inner) == sorted(names)
    assert sorted(outer) == sorted([*names, *names])   # once per forward, not once per context
    assert not model.layers[0]._forward_hooks and not model.layers[0]._forward_pre_hooks


def test_a_block_passes_its_points_only_while_a_function_is_attached_to_one():
    model = compile_graph(load_preset("tiny-gpt")).eval()
    attn = model.layers[0].attn
    passed = []   # torch's own hook on the point: it sees every time the forward passes it
    attn.hook_q.register_forward_hook(lambda *_: passed.append("q"))
    attn.hook_k.register_forward_hook(lambda *_: passed.append("k"))
    blocks = [m for m in model.modules() if isinstance(m, Hooked)]
    with torch.no_grad():
        model(*inputs(model))
        assert passed == [] and not any(m.hooked for m in blocks)   # nothing listens: skipped
        with attached(model, lambda *_: None, names={"layers.0.attn.hook_q"}):
            assert [m.hooked for m in blocks if m.hooked] == [1] and attn.hooked == 1
            model(*inputs(model))
        assert passed == ["q", "k"]   # the block passed all its points, once, while one listened
        model(*inputs(model))
    assert passed == ["q", "k"] and not any(m.hooked for m in blocks)


def test_a_function_comes_onto_a_point_only_through_attached():
    point = compile_graph(load_preset("tiny-gpt")).layers[0].attn.hook_q
    with pytest.raises(AttributeError):   # a tuple: appended by hand, the block would not count it
        point.fns.append(lambda *_: None)


def test_a_node_named_like_a_layers_own_attribute_leaves_its_count_alone(tmp_path):
    from tfstudio.graph.serialize import load_graph_file

    preset = Path(tfstudio.__file__).parent.parent / "resources" / "presets" / "tiny-gpt.json"
    renamed = tmp_path / "g.json"   # the attention node's id is "hooked", the layer's counter
    renamed.write_text(preset.read_text().replace('"attn"', '"hooked"'))
    model = compile_graph(load_graph_file(renamed)).eval()
    seen = []
    with torch.no_grad(), attached(model, lambda name, _p, _x: seen.append(name)):
        model(*inputs(model))
    assert any(".hook_weights" in name for name in seen)
    assert not any(m.hooked for m in model.modules() if isinstance(m, Hooked))


def test_attaching_that_fails_partway_leaves_nothing_attached():
    model = compile_graph(load_preset("tiny-gpt")).eval()
    broken = model.layers[1].ffn
    broken.hooked = None   # bad luck at one block, after the blocks before it took theirs
    with pytest.raises(TypeError):
        with attached(model, lambda *_: None):
            pass
    broken.hooked = 0
    assert not any(p.fns for p in hook_points(model).values())
    assert not any(m.hooked for m in model.modules() if isinstance(m, Hooked))


def test_nested_contexts_with_one_function_each_take_off_only_their_own():
    model = compile_graph(load_preset("tiny-gpt")).eval()
    seen, attn = [], model.layers[0].attn

    def fn(name, _point, _x):
        seen.append(name)
    with torch.no_grad(), attached(model, fn, names={"layers.0.attn.hook_q"}):
        with attached(model, fn, names={"layers.0.attn.hook_q"}):
            assert attn.hooked == 2
            model(*inputs(model))
        assert attn.hooked == 1 and len(attn.hook_q.fns) == 1
        model(*inputs(model))   # the outer context still listens
    assert seen == ["layers.0.attn.hook_q"] * 3 and attn.hooked == 0 and not attn.hook_q.fns


def test_the_attention_maths_has_one_home():
    """The fused kernel and the explicit softmax live in one method of nn/attention.py: no
    other module of the package computes attention (hooks.py only holds the points)."""
    root = Path(tfstudio.__file__).parent
    homes = [p.relative_to(root).as_posix() for p in root.rglob("*.py")
             if "scaled_dot_product_attention" in p.read_text(encoding="utf-8")]
    assert homes == ["nn/attention.py"]
    hooks = (root / "nn" / "hooks.py").read_text(encoding="utf-8")
    assert "softmax" not in hooks and "import torch\n" not in hooks


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt", "tiny-mistral",
                                    "tiny-t5", "tiny-bert"])
def test_the_explicit_attention_equals_the_fused_one(preset):
    """While a function reads the weights, every attention takes its explicit form: the logits
    agree with the fused kernel's, with the same mask (causal, window, ALiBi, none, cross)."""
    model = compile_graph(load_preset(preset)).eval()
    args = inputs(model, length=20)   # past tiny-mistral's 16-token window
    weights = {n for n in hook_points(model) if n.endswith("hook_weights")}
    pattern = []
    with torch.no_grad():
        fused = model(*args)
        with attached(model, lambda _n, _p, a: pattern.append(a), names=weights):
            explicit = model(*args)
    assert len(pattern) == len(model.attention_modules())
    assert all(torch.allclose(a.sum(-1), torch.ones(())) for a in pattern)   # rows: softmax
    assert torch.allclose(explicit, fused, atol=2e-5), (explicit - fused).abs().max()


def test_the_architecture_documents_every_blocks_points():
    import re

    import tfstudio.nn as nn_blocks

    doc = (Path(tfstudio.__file__).parent.parent / "docs" / "ARCHITECTURE.md").read_text()
    section = doc.split("## Hook points", 1)[1].split("\n## ", 1)[0]
    table = {m[1]: set(re.sub(r"\(.*\)", "", m[2]).replace(" ", "").split(","))
             for m in re.finditer(r"^\| `(\w+)`[^|]*\| ([^|]+) \|$", section, re.M)}
    made = {"SelfAttention": dict(d_model=8, position="rope"), "CrossAttention": dict(d_model=8),
            "FeedForward": dict(d_model=8, d_ff=8), "MixtureOfExperts": dict(d_model=8),
            "LMHead": dict(d_model=8, vocab_size=8), "MLMHead": dict(d_model=8, vocab_size=8),
            "TokenEmbedding": dict(vocab_size=8, d_model=8), "Norm": dict(d_model=8),
            "PositionalEncoding": dict(d_model=8), "Recurrent": dict(d_model=8),
            "FixedWindow": dict(d_model=8), "Add": {}, "GraphLayer": {}}
    hooked = {name for name, cls in vars(nn_blocks).items() if not name.startswith("_")
              if isinstance(cls, type) and issubclass(cls, Hooked) and cls is not Hooked}
    assert set(table) == set(made) == hooked
    for name, kwargs in made.items():
        block = getattr(nn_blocks, name)(**kwargs)
        own = {n.removeprefix("hook_") for n, m in block.named_children()
               if isinstance(m, HookPoint)}
        assert table[name] == own, name


def test_a_copied_model_has_its_own_points():
    """A point is kept in the block's __dict__ as well as among its submodules (so reading it
    skips nn.Module.__getattr__); a deep copy must still give the copy its own points."""
    import copy

    model = compile_graph(load_preset("tiny-gpt")).eval()
    twin = copy.deepcopy(model)
    attn = twin.layers[0].attn
    assert attn.hook_weights is attn._modules["hook_weights"]
    assert attn.hook_weights is not model.layers[0].attn.hook_weights
    seen = []
    with torch.no_grad(), attached(twin, lambda n, _p, _x: seen.append(n)):
        model(*inputs(model))
    assert seen == []   # listening to the copy hears nothing of the original
