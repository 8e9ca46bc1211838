"""The post-in-residual placement y = x + Norm(F(x)) end to end: the norm switch makes it, the
compiler builds and trains it, the cost model counts it, and HF export refuses it by name."""
from __future__ import annotations

import pytest
import torch

from tfstudio import compile_graph, load_graph
from tfstudio.experiments.variants import apply_setting
from tfstudio.export import ExportRefused, hf_plan
from tfstudio.graph.cost import estimate_cost
from tfstudio.graph.placement import identify_placement
from tfstudio.graph.switches import layer_summary


def variant(placement: str):
    return apply_setting(load_graph("tiny-gpt"), "norm", placement)


def test_the_switch_names_it_and_counts_one_norm_per_sublayer():
    graph = variant("post-in-residual")
    layer = graph.node("layers")
    assert identify_placement(layer.subgraph) == "post-in-residual"
    assert layer_summary(layer).endswith("post-norm in the residual")
    # one LayerNorm (2 x 64 parameters) per sublayer, as pre-norm has: the same total
    assert (estimate_cost(graph).total_params == estimate_cost(variant("pre")).total_params
            == estimate_cost(variant("sandwich")).total_params - 2 * 2 * 2 * 64)


def test_the_compiled_layer_computes_x_plus_norm_of_f():
    """A layer's output, recomputed from its own blocks as y = x + Norm(F(x)) per sublayer."""
    torch.manual_seed(0)
    model = compile_graph(variant("post-in-residual")).eval()
    layer = model.layers[0]
    seen = {}
    handle = layer.register_forward_hook(
        lambda module, args, output: seen.update(x=args[0].detach(), y=output.detach()))
    with torch.no_grad():
        model(torch.randint(0, 256, (2, 16)))
        handle.remove()
        x = seen["x"]
        step = layer.norm_attn(layer.attn(x))
        mid = x + step
        expected = mid + layer.norm_ffn(layer.ffn(mid))
    assert torch.allclose(seen["y"], expected, atol=1e-6)
    assert not torch.allclose(seen["y"], x + layer.attn(x) + layer.ffn(x + layer.attn(x)),
                              atol=1e-3)  # the norms matter: not a plain residual


def test_it_trains_and_hf_export_refuses_it_by_name():
    model = compile_graph(variant("post-in-residual"))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids = torch.randint(0, 256, (4, 17))
    losses = []
    for _ in range(5):
        logits = model(ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    with pytest.raises(ExportRefused) as caught:
        hf_plan(variant("post-in-residual"))
    assert "post-norm in the residual" in str(caught.value)
