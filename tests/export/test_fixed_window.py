"""The fixed-window block (Bengio et al. 2003): what position t sees, what it costs, and that a
fixed-window LM compiles, trains and is refused by the Hugging Face export (its standalone
export: tests/compiler/test_standalone.py)."""

import numpy as np
import pytest
import torch

import tfstudio
from tfstudio.export.errors import ExportRefused
from tfstudio.export.hf_export import export_hf
from tfstudio.graph.cost import estimate_cost
from tfstudio.graph.validate import validate
from tfstudio.nn import FixedWindow
from tfstudio.runs.config import TrainConfig
from tfstudio.train.events import StepMetrics
from tfstudio.train.trainer import Trainer


def _reach(module: FixedWindow, length: int, d: int) -> list[set[int]]:
    """For each output position t, the input positions s with a nonzero d y_t / d x_s."""
    x = torch.randn(1, length, d, requires_grad=True)
    y = module(x)
    seen = []
    for t in range(length):
        (grad,) = torch.autograd.grad(y[0, t].sum(), x, retain_graph=True)
        seen.append({s for s in range(length) if grad[0, s].abs().sum() > 0})
    return seen


@pytest.mark.parametrize("window", [1, 3, 5])
def test_position_t_depends_only_on_tokens_t_minus_n_plus_1_to_t(window):
    torch.manual_seed(0)
    reach = _reach(FixedWindow(8, window=window), length=9, d=8)
    for t, seen in enumerate(reach):
        assert seen == set(range(max(0, t - window + 1), t + 1)), t


def test_output_is_the_projection_of_the_zero_padded_concatenation():
    """A second implementation: build each window by hand, oldest first, zeros before the start."""
    torch.manual_seed(1)
    n, d, length = 3, 4, 6
    module = FixedWindow(d, window=n, activation="tanh")
    x = torch.randn(2, length, d)
    padded = torch.cat((torch.zeros(2, n - 1, d), x), 1)
    by_hand = torch.stack([padded[:, t:t + n].reshape(2, n * d) for t in range(length)], 1)
    expected = torch.tanh(by_hand @ module.proj.weight.T + module.proj.bias)
    assert torch.allclose(module(x), expected, atol=1e-6)


def test_learned_padding_is_what_early_positions_see_and_it_trains():
    torch.manual_seed(2)
    n, d = 4, 6
    module = FixedWindow(d, window=n, padding="learned", activation="none")
    assert module.pad.shape == (n - 1, d)
    x = torch.randn(1, 5, d)
    y = module(x)
    # position 0's window is [pad_0, pad_1, pad_2, x_0]
    window0 = torch.cat((module.pad.reshape(-1), x[0, 0]))
    assert torch.allclose(y[0, 0], module.proj(window0), atol=1e-6)
    y[0, n - 1:].sum().backward(retain_graph=True)  # full windows never read the padding
    assert module.pad.grad is None or module.pad.grad.abs().sum() == 0
    y[0, 0].sum().backward()
    assert module.pad.grad.abs().sum() > 0


def test_decoding_in_pieces_gives_the_whole_sequence_outputs():
    torch.manual_seed(3)
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-window-lm")).eval()
    ids = torch.randint(0, 256, (2, 11))
    cache = model.new_cache()
    with torch.no_grad():
        whole = model(ids)
        pieces = torch.cat([model(ids[:, :2], cache=cache), model(ids[:, 2:3], cache=cache),
                            model(ids[:, 3:], cache=cache)], 1)
    assert torch.allclose(whole, pieces, atol=1e-6)


def test_a_token_outside_the_window_does_not_change_the_prediction():
    torch.manual_seed(4)
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-window-lm")).eval()
    n = tfstudio.load_graph("tiny-window-lm").node("window").param("window")
    ids = torch.randint(0, 256, (1, 10))
    t = 8
    outside, inside = ids.clone(), ids.clone()
    outside[0, t - n] = (ids[0, t - n] + 1) % 256
    inside[0, t - n + 1] = (ids[0, t - n + 1] + 1) % 256
    with torch.no_grad():
        base, far, near = model(ids)[0, t], model(outside)[0, t], model(inside)[0, t]
    assert torch.equal(base, far)
    assert not torch.allclose(base, near)


@pytest.mark.parametrize("padding,bias", [("zero", True), ("learned", False)])
def test_parameters_and_flops_match_a_hand_count(padding, bias):
    graph = tfstudio.load_graph("tiny-window-lm")
    graph.node("window").params.update({"padding": padding, "bias": bias, "window": 5})
    assert validate(graph) == []
    v, d, n = 256, 64, 5
    embed, head = v * d, d * v                          # an untied head, no bias
    window = n * d * d + (d if bias else 0) + ((n - 1) * d if padding == "learned" else 0)
    cost = estimate_cost(graph, context_length=64)
    model = tfstudio.compile_graph(graph)
    assert cost.total_params == embed + window + head
    assert sum(p.numel() for p in model.parameters()) == embed + window + head
    assert cost.flops_per_token == 2 * n * d * d + 2 * d * v


@pytest.mark.slow
def test_the_fixed_window_lm_trains_a_few_steps(tmp_path):
    losses = []
    config = TrainConfig(corpus="sample:small", steps=30, batch_size=8, seq_len=32,
                         eval_every=0, warmup_steps=5, lr=3e-3)
    end = Trainer(tfstudio.load_graph("tiny-window-lm"), config, run_dir=tmp_path,
                  listeners=[lambda e: losses.append(e.loss)
                             if isinstance(e, StepMetrics) else None]).run()
    assert type(end).__name__ == "Finished", end
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < losses[0] - 1.0   # from ~ln 256 = 5.5 toward byte bigrams


def test_hugging_face_export_refuses_it_naming_the_block(tmp_path):
    with pytest.raises(ExportRefused) as refused:
        export_hf("tiny-window-lm", tmp_path / "hf")
    text = str(refused.value)
    line = next(l for l in text.splitlines() if "fixed_window" in l)
    assert line.strip().startswith("- window:") and "--format pytorch" in line
    assert not (tmp_path / "hf").exists()


def test_explain_opens_the_window_into_its_concatenation_and_projection():
    from tfstudio.data import build_tokenizer
    from tfstudio.probes.inputs import probe_inputs
    from tfstudio.probes.walk import forward_walk

    torch.manual_seed(5)
    graph = tfstudio.load_graph("tiny-window-lm")
    graph.node("window").params["padding"] = "learned"
    model = tfstudio.compile_graph(graph).eval()
    tok = build_tokenizer("byte")
    walk = forward_walk(model, probe_inputs(model, tok, "hello"))
    steps = {s.name: s for s in walk.steps}
    window, output = steps["window: window"], steps["window: output"]
    n, d = 4, 64
    assert window.value.shape == (5, n * d) and "learned vectors before" in window.formula
    # position 0 reads the three learned slots, then its own token vector
    assert np.allclose(window.value[0, :(n - 1) * d], model.window.pad.detach().reshape(-1))
    embedded = steps["embed: embedding"].value
    assert np.allclose(window.value[4], embedded[1:5].reshape(-1), atol=1e-6)
    with torch.no_grad():
        expected = model.window(model.embed(torch.tensor([tok.encode("hello")])))[0]
    assert np.allclose(output.value, expected.numpy(), atol=1e-6)


def test_onnx_export_computes_the_same_logits_at_other_lengths(tmp_path):
    import onnx  # a test dependency
    from onnx.reference import ReferenceEvaluator

    from tfstudio.export import export_onnx

    torch.manual_seed(6)
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-window-lm")).eval()
    export_onnx(model, tmp_path)
    onnx.checker.check_model(str(tmp_path / "model.onnx"), full_check=True)
    session = ReferenceEvaluator(str(tmp_path / "model.onnx"))
    for batch, length in ((1, 2), (2, 13)):        # shorter than the window, and longer
        ids = torch.randint(0, 256, (batch, length))
        (got,) = session.run(None, {"ids": ids.numpy()})
        with torch.no_grad():
            assert torch.allclose(torch.from_numpy(got), model(ids), atol=1e-4), length
