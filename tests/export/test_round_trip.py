"""The Hugging Face round trip without transformers, fast: a tiny model written by export_hf
and read back by import_hf computes the same logits, for a learned-position GPT and a RoPE,
GQA, SwiGLU LLaMA (the slow tests check each direction against transformers itself)."""
from __future__ import annotations

import torch

from tfstudio.compiler import compile_graph
from tfstudio.export import export_hf, import_hf
from tfstudio.graph.templates import transformer_lm
from tfstudio.runs.folder import RunFolder

SMALL = dict(description="", vocab=97, d_model=32, layers=2, heads=4, max_len=32)
GRAPHS = {
    "gpt": lambda: transformer_lm(name="g", d_ff=64, activation="gelu_tanh", **SMALL),
    "llama": lambda: transformer_lm(name="l", kv_heads=2, d_ff=48, activation="swiglu",
                                    bias=False, tie=False, norm_kind="rmsnorm", pos_scheme="none",
                                    attn_position="rope", eps=1e-5, **SMALL),
}


def test_export_then_import_gives_the_same_logits(tmp_path):
    ids = torch.randint(0, 97, (2, 12), generator=torch.Generator().manual_seed(1))
    for name, make in GRAPHS.items():
        model = compile_graph(make())
        g = torch.Generator().manual_seed(0)
        with torch.no_grad():  # weights well away from the init: unit norms would hide a swap
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=g) * 0.1)
        model.eval()
        export_hf(model, tmp_path / name / "hf")
        import_hf(tmp_path / name / "hf", tmp_path / name / "run")
        back = RunFolder(tmp_path / name / "run").load_model("cpu")
        with torch.no_grad():
            assert torch.allclose(back(ids), model(ids), atol=1e-5), name
