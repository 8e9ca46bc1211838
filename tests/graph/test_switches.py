"""Switches for the whole block: activation (with d_ff kept at equal parameters for gated kinds)
and norm kind next to attention, FFN and placement; positions on the same panel; heads changes
that keep the attention kind; and GQA + RoPE + SwiGLU + RMSNorm from the default in five real
clicks."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tfstudio.blocks._common import GATED as BLOCK_GATED
from tfstudio.compiler import compile_graph
from tfstudio.graph import estimate_cost
from tfstudio.graph.switches import (GATED, activation_kind, attention_kind, gqa_choices,
                                     kv_heads_for, norm_kind, placement, positional_scheme,
                                     set_activation, set_norm_kind)
from tfstudio.presets import load_preset
from tfstudio.graph import validate
from tfstudio.graph.cost import estimate_cost, training_memory
from tfstudio.graph.switches import (POSITIONAL_SCHEMES, gqa_kv_heads, set_ffn_kind,
                                     set_positional_scheme)


def test_the_gated_kinds_are_the_ones_the_blocks_count_with_three_matrices():
    assert set(GATED) == set(BLOCK_GATED)


@pytest.mark.parametrize("heads, kv, new, expected", [
    (4, 4, 8, 8),      # MHA stays MHA: kv follows heads
    (8, 1, 12, 1),     # MQA stays MQA
    (8, 2, 12, 3),     # GQA keeps its group of 4 heads per K/V head
    (8, 4, 6, 3),      # ... of 2
    (8, 4, 3, 1),      # 3 heads cannot be grouped: the nearest divisor (1)
])
def test_heads_changes_keep_the_attention_kind(heads, kv, new, expected):
    assert kv_heads_for(heads, kv, new) == expected
    assert new % expected == 0


def test_gqa_choices_are_the_divisors_between_one_and_heads():
    assert gqa_choices(12) == [2, 3, 4, 6]
    assert gqa_choices(7) == []


def _ffn_params(graph) -> int:
    cost = estimate_cost(graph)
    return sum(n for (path, nid), n in cost.node_params.items() if nid == "ffn")


def test_switching_to_a_gated_activation_keeps_the_parameter_count_when_asked():
    root = load_preset("tiny-gpt")
    layer = root.node("layers").subgraph
    d_ff = layer.node("ffn").param("d_ff")
    d = 64  # tiny-gpt's width: plain FFN 2*d*d_ff + biases, gated 3*d*d_ff' + biases
    before = _ffn_params(root)
    swiglu = root.clone()
    swiglu.node("layers").subgraph = set_activation(layer, "swiglu")
    assert swiglu.node("layers").subgraph.node("ffn").param("d_ff") == round(d_ff * 2 / 3)
    after = _ffn_params(swiglu)
    # equal up to the rounding of d_ff (one column of each matrix) and the gate's biases
    assert abs(after - before) <= 3 * d + 2 * d_ff
    kept = root.clone()
    kept.node("layers").subgraph = set_activation(layer, "swiglu", equal_params=False)
    assert kept.node("layers").subgraph.node("ffn").param("d_ff") == d_ff
    assert _ffn_params(kept) > before * 1.4     # a third matrix: half as many again
    # and back to plain: d_ff x 3/2
    back = set_activation(swiglu.node("layers").subgraph, "gelu")
    assert back.node("ffn").param("d_ff") == round(round(d_ff * 2 / 3) * 3 / 2)
    assert activation_kind(back) == "gelu"


def test_norm_kind_switches_every_norm_at_every_depth():
    root = load_preset("tiny-gpt")
    assert norm_kind(root) == "layernorm"
    rms = set_norm_kind(root, "rmsnorm")
    kinds = [n.param("kind") for _, n in rms.walk() if n.type == "norm"]
    assert len(kinds) == 3 and set(kinds) == {"rmsnorm"}   # both in the layer and the final
    assert norm_kind(rms) == "rmsnorm"
    rms.node("final_norm").params["kind"] = "layernorm"
    assert norm_kind(rms) == "mixed"


def _click(widget) -> None:
    QTest.mouseClick(widget, Qt.LeftButton)


def test_gqa_rope_swiglu_rmsnorm_pre_norm_from_the_default_in_five_clicks(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.view.fit_to_view()
    frame = w.scene.node_items["layers"]
    header = frame.mapToScene(QPointF(frame.width / 2, 12))
    # 1: click the layer's header on the canvas: its page shows every switch, positions too
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier, w.view.mapFromScene(header))
    w.inspector.rebuild()
    assert w.scene.selected_node_ids() == ["layers"]
    for key in ("attention", "activation", "placement", "position", "norm"):
        assert key in w.inspector.switch_buttons, key
    # 2-5: one click each
    _click(w.inspector.switch_buttons["attention"]["gqa"])
    w.inspector.rebuild()
    _click(w.inspector.switch_buttons["position"]["rope"])
    w.inspector.rebuild()
    _click(w.inspector.switch_buttons["activation"]["swiglu"])
    w.inspector.rebuild()
    _click(w.inspector.switch_buttons["norm"]["rmsnorm"])
    w.inspector.rebuild()
    root = w.session.root
    layer = root.node("layers").subgraph
    assert attention_kind(layer) == "gqa"
    assert positional_scheme(root) == "rope"
    assert activation_kind(layer) == "swiglu"
    assert norm_kind(root) == "rmsnorm"
    assert placement(layer) == "pre"
    assert w.session.report.errors == 0
    model = compile_graph(root)  # and it is a model that builds
    assert sum(p.numel() for p in model.parameters()) > 0
    # the buttons show the new state
    assert w.inspector.switch_buttons["activation"]["swiglu"].isChecked()
    assert w.inspector.switch_buttons["norm"]["rmsnorm"].isChecked()


def test_positions_sit_on_the_model_page_too(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.clearSelection()
    w.inspector.rebuild()
    assert "position" in w.inspector.switch_buttons and "norm" in w.inspector.switch_buttons
    assert w.inspector.switch_buttons["position"]["learned"].isChecked()


def test_a_model_without_attention_cannot_pick_rope_or_alibi(make_window):
    """On an LSTM the in-attention schemes are greyed out and say why; a transformer's are
    live."""
    for preset, live in (("tiny-lstm", False), ("tiny-gpt", True)):
        w = make_window(load_preset(preset))
        w.scene.clearSelection()
        w.inspector.rebuild()
        buttons = w.inspector.switch_buttons["position"]
        for scheme in ("rope", "alibi"):
            assert buttons[scheme].isEnabled() is live, (preset, scheme)
            assert ("has none" in buttons[scheme].toolTip()) is not live
        assert buttons["learned"].isEnabled() and buttons["sinusoidal"].isEnabled()


def test_heads_in_the_inspector_keep_mha_and_say_so(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.enter_group("layers")
    w.scene.select_nodes(["attn"])
    w.inspector.rebuild()
    assert w.inspector.set_param("heads", 8)
    attn = w.session.root.node("layers").subgraph.node("attn")
    assert (attn.param("heads"), attn.param("kv_heads")) == (8, 8)
    assert "K/V heads 4 → 8 (still MHA)" in w.statusBar().currentMessage()
    w.session.undo()                                           # one step
    attn = w.session.root.node("layers").subgraph.node("attn")
    assert (attn.param("heads"), attn.param("kv_heads")) == (4, 4)
    # GQA 8/4 to 3 heads cannot stay grouped: the message says what it became and why
    w.inspector.set_param("heads", 8)
    w.inspector.set_param("kv_heads", 4)
    w.inspector.set_param("heads", 2)
    attn = w.session.root.node("layers").subgraph.node("attn")
    assert (attn.param("heads"), attn.param("kv_heads")) == (2, 1)
    assert "GQA became MQA" in w.statusBar().currentMessage()


def test_the_attention_page_offers_the_valid_kv_choices(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.enter_group("layers")
    w.scene.select_nodes(["attn"])
    w.inspector.rebuild()
    assert w.inspector.kv_choices.text() == "K/V heads for 4 heads: MHA 4 · GQA: 2 · MQA 1"
    w.inspector.set_param("heads", 8)
    w.inspector.rebuild()
    assert "GQA: 2, 4" in w.inspector.kv_choices.text()
    w.inspector.set_param("heads", 7)
    w.inspector.rebuild()
    assert "GQA: none (7 heads cannot be split into groups)" in w.inspector.kv_choices.text()


def test_heads_in_the_inspector_bring_back_gqa_after_a_count_that_cannot_be_grouped(make_window):
    w = make_window(load_preset("tiny-llama"))
    w.scene.enter_group("layers")
    w.scene.select_nodes(["attn"])
    w.inspector.rebuild()
    attn = lambda: w.session.root.node("layers").subgraph.node("attn")  # noqa: E731
    assert w.inspector.set_param("heads", 5)
    assert (attn().param("heads"), attn().param("kv_heads")) == (5, 1)
    assert "GQA became MQA" in w.statusBar().currentMessage()
    assert w.inspector.set_param("heads", 4)
    assert (attn().param("heads"), attn().param("kv_heads")) == (4, 2)
    assert "MQA became GQA again" in w.statusBar().currentMessage()


# Moved from test_switches_leave_valid_graphs.py: The editor's layer and model switches leave graphs that validate (every wire on a real
# port), keep what they do not switch, and pick K/V heads for any head count; the cost model
# reads the graph's own context length. Written from survivors of the graph mutation sample.
def errors(graph) -> list[str]:
    return [d.message for d in validate(graph) if d.severity == "error"]


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama", "tiny-alibi-gpt"])
@pytest.mark.parametrize("scheme", POSITIONAL_SCHEMES)
def test_every_positional_scheme_from_every_start_validates(preset, scheme):
    """Adding a positional block (from RoPE/ALiBi) and splicing one out (from learned) both
    wire the stream through real ports."""
    graph = set_positional_scheme(load_preset(preset), scheme)
    assert errors(graph) == []


@pytest.mark.parametrize("heads, kv", [(2, 1), (4, 2), (6, 3), (8, 4), (3, 1), (7, 1), (9, 3),
                                       (15, 5), (25, 5)])
def test_gqa_kv_heads_is_the_divisor_nearest_half(heads, kv):
    """Half the heads when even; for odd counts the divisor nearest heads / 2 (fewer K/V
    heads on a tie), worked out by hand: 9 -> {1, 3, 9} -> 3; 15 -> {1, 3, 5, 15} -> 5."""
    assert gqa_kv_heads(heads) == kv


def test_ffn_switch_round_trip_keeps_width_and_activation():
    layer = load_preset("tiny-llama").nodes["layers"].subgraph
    ffn = layer.nodes["ffn"].params
    back = set_ffn_kind(set_ffn_kind(layer, "moe"), "ffn")
    again = next(n for n in back if n.type == "feed_forward").params
    assert (again["d_ff"], again["activation"]) == (ffn["d_ff"], ffn["activation"])
    moe = next(n for n in set_ffn_kind(layer, "moe") if n.type == "moe").params
    assert (moe["d_ff"], moe["activation"]) == (ffn["d_ff"], ffn["activation"])


def test_costs_are_at_the_graphs_own_context_length():
    graph = load_preset("tiny-gpt")  # context_length 64
    assert estimate_cost(graph).context_length == 64
    assert estimate_cost(graph).flops_per_token == estimate_cost(
        graph, context_length=64).flops_per_token != estimate_cost(
        graph, context_length=32).flops_per_token


def test_training_memory_of_one_token_sequences():
    one = training_memory(load_preset("tiny-gpt"), batch=2, seq_len=1)
    two = training_memory(load_preset("tiny-gpt"), batch=2, seq_len=2)
    assert 0 < one.total < two.total
