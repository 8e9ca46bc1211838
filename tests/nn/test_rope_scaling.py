"""RoPE context scaling: linear (positions / s) and NTK-aware (base * s^(d/(d-2)), positions
whole), checked against the formulas written out here and against Hugging Face's RoPE."""
import json
import math
import os

import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.export import export_hf
from tfstudio.graph.templates import transformer_lm
from tfstudio.nn import SelfAttention, rope_angles

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers loads: never download


def expected_angles(positions, head_dim, base, scale, kind):
    """theta[t, k] = t' * b'^(-2k/d): linear t' = t/s, b' = b; ntk t' = t, b' = b s^(d/(d-2))."""
    b = base * scale ** (head_dim / (head_dim - 2)) if kind == "ntk" else base
    t_scale = 1.0 if kind == "ntk" else scale
    return [[(t / t_scale) * b ** (-2 * k / head_dim) for k in range(head_dim // 2)]
            for t in positions]


@pytest.mark.parametrize("kind", ["linear", "ntk"])
def test_rope_angles_follow_the_formula(kind):
    positions = [0, 1, 7, 100, 511]
    cos, sin = rope_angles(torch.tensor(positions), 16, 10000.0, 4.0, kind)
    theta = torch.tensor(expected_angles(positions, 16, 10000.0, 4.0, kind), dtype=torch.float64)
    assert torch.allclose(cos.double(), theta.cos(), atol=2e-6)
    assert torch.allclose(sin.double(), theta.sin(), atol=2e-6)


def test_ntk_keeps_the_fastest_pair_and_slows_the_slowest():
    """NTK-aware scaling leaves pair 0 (the highest frequency) unchanged and divides the
    slowest pair's frequency by s, as position interpolation does for every pair."""
    (cos_ntk, _), (cos_plain, _) = (rope_angles(torch.tensor([3]), 8, 100.0, s, kind)
                                    for s, kind in ((2.0, "ntk"), (1.0, "linear")))
    assert cos_ntk[0, 0].item() == pytest.approx(cos_plain[0, 0].item(), abs=1e-7)
    slow = 3 * 100.0 ** (-6 / 8) / 2.0
    assert cos_ntk[0, 3].item() == pytest.approx(math.cos(slow), abs=1e-6)


def test_ntk_attention_is_attention_with_the_larger_base():
    torch.manual_seed(0)
    ntk = SelfAttention(32, heads=4, position="rope", rope_scaling=3.0,
                        rope_scaling_type="ntk").eval()
    plain = SelfAttention(32, heads=4, position="rope",
                          rope_base=10000.0 * 3.0 ** (8 / 6)).eval()
    plain.load_state_dict(ntk.state_dict())
    x = torch.randn(2, 11, 32)
    with torch.no_grad():
        assert torch.allclose(ntk(x), plain(x), atol=1e-6)


def test_ntk_scaled_model_exports_to_transformers_with_the_same_logits(tmp_path):
    graph = transformer_lm(name="n", description="", vocab=300, d_model=32, layers=2, heads=4,
                           kv_heads=2, d_ff=48, activation="swiglu", bias=False,
                           max_len=64, norm_kind="rmsnorm", pos_scheme="none",
                           attn_position="rope", eps=1e-5)
    for _, node in graph.walk():
        if node.type == "attention":
            node.params.update(rope_scaling=4.0, rope_scaling_type="ntk")
    model = compile_graph(graph).eval()
    assert "rope_scaling_type='ntk'" in model.source
    export_hf(model, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["rope_theta"] == pytest.approx(10000.0 * 4.0 ** (8 / 6))
    import transformers  # a test dependency (pyproject [test]); a second of import: here
    hf = transformers.AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    ids = torch.randint(0, 300, (2, 20), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(model(ids), hf(ids).logits, atol=1e-5)
