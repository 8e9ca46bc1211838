"""What the inspector's pages say (gui/inspector_lines.py), checked on preset graphs without a
QApplication: each line is fed the data on both sides of where it changes its words."""
from tfstudio.graph import SetTitle, kinds
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.gui.inspector_lines import (breakable, kv_choices_text, layer_switch_rows,
                                          model_facts, origin_line, params_line,
                                          position_refusals, problem_lines, rename_edit,
                                          together_line)
from tfstudio.gui.layer_switches import POSITION_SCHEMES
from tfstudio.gui.text import count_label
from tfstudio.presets import load_preset


def test_the_parameter_line_gives_the_count_why_none_or_when_it_comes():
    graph = load_preset("tiny-gpt")
    report = report_on_graph(graph)
    embed = graph.node("embed")
    assert params_line(report, (), embed).endswith(
        f"</b> ({report.node_params((), 'embed'):,})")
    assert params_line(report, (), graph.node("tokens")) == "Parameters: <b>0 params</b> (0)"
    # a block whose input shape is not known yet and counts nothing: told when it will count
    report.cost.node_params[((), "final_norm")] = 0
    del report.shapes.inputs[((), "final_norm")]
    assert params_line(report, (), graph.node("final_norm")) == (
        "Parameters: counted once its input is wired (its width comes from what feeds it)")
    graph.node("layers").subgraph.node("attn").params["heads"] = 3  # 64 / 3: errors
    broken = report_on_graph(graph)
    assert params_line(broken, (), embed) == (
        f"Parameters: unavailable: the graph has {broken.errors} errors (see Problems)")


def test_kv_choices_follow_the_head_count():
    assert kv_choices_text(4) == "K/V heads for 4 heads: MHA 4 · GQA: 2 · MQA 1"
    assert "GQA: 2, 4" in kv_choices_text(8)
    assert "GQA: none (7 heads cannot be split into groups)" in kv_choices_text(7)


def test_a_layer_shows_a_switch_only_for_the_parts_it_has():
    layer = load_preset("tiny-gpt").node("layers").subgraph
    rows = layer_switch_rows(layer)
    assert [r.key for r in rows] == ["attention", "ffn", "activation", "placement"]
    now = {r.key: r.current for r in rows}
    assert now["attention"] == kinds.MHA and now["placement"] == kinds.PRE
    assert all(r.current in r.choices for r in rows)
    layer.remove_node("attn")  # no attention: no attention switch
    assert "attention" not in [r.key for r in layer_switch_rows(layer)]


def test_schemes_inside_attention_are_refused_with_why_on_a_model_without_it():
    assert position_refusals(load_preset("tiny-gpt")) == {}
    refused = position_refusals(load_preset("tiny-lstm"))
    assert set(refused) == {kinds.ROPE, kinds.ALIBI}
    for scheme, why in refused.items():
        assert why == (f"{POSITION_SCHEMES[scheme]} acts inside self-attention, and this "
                       "model has none")


def test_the_origin_line_marks_the_loaded_words_once_the_model_is_edited():
    meta = load_preset("tiny-gpt").meta
    assert origin_line(meta, edited=False) == breakable(meta["description"])
    assert origin_line(meta, edited=True).startswith(
        "<i>As loaded, before your edits (from tiny-gpt):</i> The default")
    assert origin_line({"from": "/runs/a <b>"}, edited=False) == "<i>From /runs/a &lt;b&gt;</i>"
    assert origin_line({}, edited=True) is None


def test_the_model_facts_follow_the_scheme_errors_and_the_level():
    graph = load_preset("tiny-gpt")
    facts = model_facts(graph, report_on_graph(graph), ())
    assert facts[0] == "Positions now: <b>learned</b>"
    assert "Parameters now: <b>132,864 trainable</b>" in facts
    assert not any(f.startswith("Editing inside") for f in facts)
    assert model_facts(graph, report_on_graph(graph), ("layers",))[-1] == \
        "Editing inside: <b>layers</b>"
    graph.node("layers").subgraph.node("attn").params["heads"] = 3
    assert any(f.startswith("Parameters now: <b>unavailable") for f in
               model_facts(graph, report_on_graph(graph), ()))


def test_a_problem_deeper_than_the_level_shown_says_where_inside():
    graph = load_preset("tiny-gpt")
    assert problem_lines(report_on_graph(graph), (), "layers") == []
    graph.node("layers").subgraph.node("attn").params["heads"] = 3  # 64 / 3 is not whole
    report = report_on_graph(graph)
    on_group = problem_lines(report, (), "layers")       # the group's page: from inside it
    assert any("(inside, at layers/attn)" in line for line in on_group)
    on_attn = problem_lines(report, ("layers",), "attn")  # the block's own page: no "inside"
    assert on_attn and not any("inside, at" in line for line in on_attn)
    assert on_attn[0].startswith("<span style='color:#d93a34'><b>Error</b>: d_model 64")


def test_blocks_selected_together_count_their_parameters_or_say_why_not():
    """Several blocks' count adds theirs up; with errors it is unavailable, as one block's line
    and the status bar say (it used to add up the counts of a graph that does not build)."""
    graph = load_preset("tiny-gpt")
    report = report_on_graph(graph)
    both = report.node_params((), "embed") + report.node_params((), "final_norm")
    assert together_line(report, (), ["embed", "final_norm"]) == (
        f"Parameters together: <b>{count_label(both)}</b>")
    graph.node("layers").subgraph.node("attn").params["heads"] = 3  # 64 / 3: errors
    broken = report_on_graph(graph)
    assert together_line(broken, (), ["embed", "final_norm"]) == (
        f"Parameters together: unavailable: the graph has {broken.errors} errors "
        "(see Problems)")


def test_renaming_a_block_drops_the_spaces_around_it_and_makes_no_step_for_the_same_name():
    graph = load_preset("tiny-gpt")
    edit = rename_edit(graph, (), "head", "  Output head \n")
    assert isinstance(edit, SetTitle) and edit.title == "Output head" and edit.node_id == "head"
    shown = graph.node("head").label
    assert rename_edit(graph, (), "head", f" {shown} ") is None     # the name already shown
    inside = graph.node("layers").subgraph
    assert rename_edit(inside, ("layers",), "attn", "Mixer").path == ("layers",)


def test_the_inspector_shows_one_blocks_page_several_blocks_or_the_models():
    from tfstudio.gui.inspector_lines import page_for
    graph = load_preset("tiny-gpt")
    assert page_for(["head"], graph) == "block"
    assert page_for(["head", "embed"], graph) == "blocks"
    assert page_for([], graph) == "model"
    assert page_for(["gone"], graph) == "model"       # removed by the last edit: the model's
