"""A block type is defined in one place: registering a schema (and its torch module) from this
file is all it takes for the palette search, the canvas summary, validation, `tfstudio
inspect`, the cost model and the compiler to know it."""
import json
import subprocess
import sys

import pytest
import torch
from torch import nn

from tfstudio import nn as tf_nn
from tfstudio.blocks._common import same_as_input, width, x_in, y_out
from tfstudio.cli import main
from tfstudio.compiler import compile_graph, standalone_source
from tfstudio.graph import Edge, Node, all_specs, estimate_cost, get_spec, save_graph, validate
from tfstudio.graph.schema import BlockSpec, ParamSpec, Recipe, register, unregister
from tfstudio.gui.fuzzy import rank_blocks
from tfstudio.gui.summaries import node_summary
from tfstudio.presets import load_preset


class Scale(nn.Module):
    """y = g * x with one learned scalar g."""

    def __init__(self, init: float = 1.0):
        super().__init__()
        self.gain = nn.Parameter(torch.tensor(float(init)))

    def forward(self, x):
        return x * self.gain


def _check(node, shapes, ctx):
    if node.resolved_params()["init"] == 0:
        return [ctx.error("scale_starts_at_zero", f"'{node.id}' starts at 0, so no gradient "
                          "reaches the blocks before it", "set init to a non-zero number")]
    return []


SCALE = BlockSpec(
    type="scale", family="residual", title="Scale",
    description="Multiplies the stream by one learned number.",
    params=(ParamSpec("init", "float", 1.0, "The starting value of the gain."),),
    inputs=(x_in(),), outputs=(y_out(),),
    infer=same_as_input(),
    count_params=lambda p, s: 1,
    flops=lambda p, s, ctx: float(width(s.get("x")) or 0),  # one multiply per feature
    check=_check,
    summary=lambda node: f"× {node.resolved_params()['init']:g}",
    keywords="gain multiply scalar",
    recipe=Recipe("Scale", lambda p, w: {"init": p["init"]}, defaults={"init": 1.0}),
)


@pytest.fixture
def scale_block():
    register(SCALE)
    tf_nn.register_module(Scale)
    yield SCALE
    unregister("scale")
    tf_nn.unregister_module("Scale")


def with_scale(init: float):
    """tiny-gpt with a Scale between the final norm and the head."""
    graph = load_preset("tiny-gpt")
    graph.remove_edge(graph.edge_into("head", "x"))
    graph.add_node(Node("gain", "scale", {"init": init}))
    graph.add_edge(Edge("final_norm", "y", "gain", "x"))
    graph.add_edge(Edge("gain", "y", "head", "x"))
    return graph


def test_palette_search_and_canvas_summary_find_the_new_block(scale_block):
    assert rank_blocks("gain", all_specs())[0] is SCALE
    assert rank_blocks("Scale", all_specs())[0] is SCALE
    assert node_summary(Node("g", "scale", {"init": 0.5})) == "× 0.5"


def test_validation_and_cost_know_the_new_block(scale_block):
    assert [d.code for d in validate(with_scale(0.5)) if d.severity == "error"] == []
    errors = [d for d in validate(with_scale(0.0)) if d.severity == "error"]
    assert [(d.code, d.node_id) for d in errors] == [("scale_starts_at_zero", "gain")]
    base, scaled = estimate_cost(load_preset("tiny-gpt")), estimate_cost(with_scale(0.5))
    assert scaled.node_params[((), "gain")] == 1
    assert scaled.total_params == base.total_params + 1
    assert scaled.node_flops[((), "gain")] == 64


def test_inspect_reports_the_new_block(scale_block, tmp_path, capsys):
    path = tmp_path / "scaled.json"
    save_graph(with_scale(0.5), path)
    assert main(["inspect", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    gain = next(n for n in data["nodes"] if n["id"] == "gain")
    assert (gain["type"], gain["params"], gain["outputs"]) == ("scale", 1, {"y": ["B", "T", 64]})
    save_graph(with_scale(0.0), path)
    assert main(["inspect", str(path)]) == 1
    assert "scale_starts_at_zero" in capsys.readouterr().out


def test_the_compiled_model_runs_the_new_block(scale_block):
    torch.manual_seed(0)
    base = compile_graph(load_preset("tiny-gpt")).eval()
    model = compile_graph(with_scale(0.5)).eval()
    assert "self.gain = Scale(init=0.5)" in model.source
    assert isinstance(dict(model.blocks())[("gain",)], Scale)
    missing = model.load_state_dict(base.state_dict(), strict=False).missing_keys
    assert missing == ["gain.gain"]
    assert model.gain.gain.item() == 0.5
    assert sum(p.numel() for p in model.parameters()) == \
        sum(p.numel() for p in base.parameters()) + 1
    ids = torch.randint(0, 256, (2, 7))
    seen = {}
    base.final_norm.register_forward_hook(lambda m, a, out: seen.update(norm=out))
    with torch.no_grad():
        base(ids)
        expected = base.head(0.5 * seen["norm"])  # the head reads the scaled stream
        assert torch.allclose(model(ids), expected, atol=1e-6)


def test_unregistering_forgets_the_block(scale_block):
    unregister("scale")
    with pytest.raises(KeyError, match="unknown block type 'scale'"):
        get_spec("scale")
    assert all(spec.type != "scale" for spec in all_specs())


@pytest.mark.slow
def test_the_standalone_export_copies_the_new_blocks_class_and_runs_without_tfstudio(
        scale_block, tmp_path):
    model = compile_graph(with_scale(0.5)).eval()
    source = standalone_source(model)
    assert "class Scale(nn.Module):" in source  # copied whole from this file
    (tmp_path / "scaled.py").write_text(source)
    torch.save(model.state_dict(), tmp_path / "weights.pt")
    ids = torch.randint(0, 256, (2, 7))
    torch.save(ids, tmp_path / "ids.pt")
    (tmp_path / "run.py").write_text(
        'import sys; sys.modules["tfstudio"] = None\n'  # importing tfstudio now fails
        'import importlib.util, torch\n'
        'spec = importlib.util.spec_from_file_location("scaled", "scaled.py")\n'
        'scaled = importlib.util.module_from_spec(spec); spec.loader.exec_module(scaled)\n'
        'model = scaled.build_model().eval()\n'
        'model.load_state_dict(torch.load("weights.pt", weights_only=True))\n'
        'with torch.no_grad():\n'
        '    torch.save(model(torch.load("ids.pt", weights_only=True)), "out.pt")\n')
    done = subprocess.run([sys.executable, "-I", "run.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with torch.no_grad():
        expected = model(ids)
    assert torch.allclose(torch.load(tmp_path / "out.pt", weights_only=True), expected, atol=1e-6)


def test_a_nodes_parameters_read_as_typed_attributes_with_the_defaults_filled_in():
    attention = next(n for _, n in load_preset("tiny-llama").walk() if n.type == "attention")
    assert "rope_scaling" not in attention.params       # left to its default in the file
    p = attention.typed_params()
    assert type(p).__name__ == "AttentionParams"
    assert (p.heads, p.kv_heads, p.position, p.bias) == (4, 2, "rope", False)
    assert p.rope_scaling == 1.0 and p.rope_scaling_type == "linear"
    assert dict(p) == attention.resolved_params() and p["heads"] == 4   # still a Mapping
    with pytest.raises(AttributeError):
        p.head            # a misspelt name fails where it is read
    with pytest.raises(AttributeError):
        p.heads = 8       # a view, not a way to edit the graph


def test_a_hook_called_with_a_plain_dict_reads_it_as_the_typed_view():
    # 64 wide, 4 heads of 16, 1 K/V head: q 64x64, k and v 64x16 each, out 64x64, with biases
    expected = 64 * 64 + 2 * 64 * 16 + 64 * 64 + (64 + 2 * 16 + 64)
    count = get_spec("attention").count_params({"heads": 4, "kv_heads": 1}, {"x": ("B", "T", 64)})
    assert count == expected


def test_a_parameter_named_like_a_method_of_the_view_is_refused_by_name():
    spec = BlockSpec(type="clash", family="residual", title="Clash", description="",
                     params=(ParamSpec("items", "int", 1, "clashes with Mapping.items"),))
    with pytest.raises(ValueError, match=r"\['items'\].*rename"):
        spec.view({})
