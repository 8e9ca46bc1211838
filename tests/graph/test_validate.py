"""Validation: each rule fires on a graph crafted to break it, at the right node and path,
with a message and a fix; none fires on the presets (tests/test_presets.py)."""
import pytest

import tfstudio  # noqa: F401
from tfstudio.graph import Edge, Graph, Node, get_spec, group_nodes
from tfstudio.graph.cost import estimate_cost
from tfstudio.graph.templates import layer_graph, recurrent_lm, transformer_lm
from tfstudio.graph.validate import Diagnostic, describe, has_errors, validate
from tfstudio.presets import load_preset


def codes(diags):
    return {d.code for d in diags}


def only(diags, code) -> Diagnostic:
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, f"expected one '{code}', got {[str(d) for d in diags]}"
    d = found[0]
    assert d.message and d.hint and d.severity in ("error", "warning")
    return d


def tiny(**kw):
    base = dict(name="t", description="", vocab=64, d_model=32, layers=2, heads=4, d_ff=64,
                max_len=64, context=32)
    base.update(kw)
    return transformer_lm(**base)


def test_a_clean_graph_has_no_diagnostics():
    assert validate(tiny()) == []
    assert not has_errors([])


def test_cycle():
    g = load_preset("tiny-gpt")
    g.remove_edge(Edge("pos", "y", "layers", "x"))
    g.add_edge(Edge("final_norm", "y", "layers", "x"))
    d = only(validate(g), "cycle")
    assert d.severity == "error" and d.node_id in ("layers", "final_norm")
    assert "layers" in d.message and "final_norm" in d.message


def test_unconnected_required_input():
    g = load_preset("tiny-gpt")
    g.remove_edge(Edge("final_norm", "y", "head", "x"))
    d = only(validate(g), "unconnected_input")
    assert (d.node_id, d.path) == ("head", ())
    assert "'x'" in d.message
    assert only(validate(g), "unused_output").node_id == "final_norm"


def test_two_wires_into_one_input():
    g = load_preset("tiny-gpt")
    g.add_edge(Edge("pos", "y", "final_norm", "x"))  # the model takes it raw; validation flags
    d = only(validate(g), "multiple_wires")
    assert d.node_id == "final_norm" and "'layers'" in d.message and "'pos'" in d.message


def test_port_kind_mismatch():
    g = load_preset("tiny-gpt")
    g.remove_edge(Edge("layers", "y", "final_norm", "x"))
    g.add_edge(Edge("tokens", "ids", "final_norm", "x"))
    d = only(validate(g), "port_kind_mismatch")
    assert d.node_id == "final_norm" and "gives ids" in d.message and "takes hidden" in d.message


def test_wire_to_a_port_that_does_not_exist():
    g = load_preset("tiny-gpt")
    g.node("layers").subgraph.add_edge(Edge("inputs", "x", "add_attn", "in3"))
    d = only(validate(g), "unknown_port")
    assert (d.node_id, d.path) == ("add_attn", ("layers",)) and "in3" in d.message


def test_add_inputs_of_different_widths():
    layer = layer_graph([("rnn", {"hidden_size": 16})], "pre")  # F narrows 32 -> 16
    g = tiny()
    g.node("layers").subgraph = layer
    d = only(validate(g), "width_mismatch")
    assert (d.node_id, d.path) == ("add_rnn", ("layers",))
    assert "32" in d.message and "16" in d.message


def test_cross_attention_memory_width_differs_from_queries():
    g = load_preset("tiny-t5")
    g.node("src_embed").params["d_model"] = 32
    d = only(validate(g), "cross_memory_width")
    assert (d.node_id, d.path) == ("cross", ("decoder",))
    assert "32" in d.message and "64" in d.message


def test_repeated_group_whose_output_shape_differs():
    layer = Graph()
    layer.add_node(Node("inputs", "group_input"))
    layer.add_node(Node("rnn", "rnn", {"hidden_size": 16}))
    layer.add_node(Node("outputs", "group_output"))
    layer.add_edge(Edge("inputs", "x", "rnn", "x"))
    layer.add_edge(Edge("rnn", "y", "outputs", "y"))
    g = tiny(tie=False)
    g.node("layers").subgraph = layer
    d = only(validate(g), "repeat_shape_changes")
    assert (d.node_id, d.path) == ("layers", ())
    g.node("layers").params["repeat"] = 1
    assert "repeat_shape_changes" not in codes(validate(g))


def test_repeated_group_whose_first_output_kind_differs():
    layer = Graph()
    layer.add_node(Node("inputs", "group_input", {"ports": "x:hidden"}))
    layer.add_node(Node("head", "lm_head", {"vocab_size": 64, "tie": False}))
    layer.add_node(Node("outputs", "group_output", {"ports": "y:logits"}))
    layer.add_edge(Edge("inputs", "x", "head", "x"))
    layer.add_edge(Edge("head", "logits", "outputs", "y"))
    g = Graph()
    g.add_node(Node("grp", "group", {"repeat": 2}, subgraph=layer))
    assert "takes hidden and gives logits" in only(validate(g), "repeat_shape_changes").message


def test_heads_must_divide_d_model():
    g = tiny()
    g.node("layers").subgraph.node("attn").params.update(heads=6, kv_heads=6)
    d = only(validate(g), "heads_divide_d_model")
    assert (d.node_id, d.path) == ("attn", ("layers",))
    assert "32" in d.message and "6 heads" in d.message
    assert "8" in d.hint and "4" in d.hint  # divisors of 32 near 6


def test_kv_heads_must_divide_heads():
    g = tiny()
    g.node("layers").subgraph.node("attn").params.update(heads=4, kv_heads=3)
    d = only(validate(g), "kv_heads_divide_heads")
    assert "(3)" in d.message and "(4)" in d.message


def test_odd_head_size_with_rope():
    g = tiny(d_model=96, heads=32, pos_scheme="none", attn_position="rope")  # head size 3
    d = only(validate(g), "rope_odd_head_dim")
    assert "3" in d.message and (d.node_id, d.path) == ("attn", ("layers",))
    assert "rope_odd_head_dim" not in codes(validate(tiny(d_model=96, heads=32)))


def test_top_k_larger_than_experts():
    g = load_preset("tiny-mixtral")
    g.node("layers").subgraph.node("moe").params["top_k"] = 5
    d = only(validate(g), "top_k_exceeds_experts")
    assert "5" in d.message and "4 experts" in d.message


def test_top_1_with_renormalised_weights_warns_that_the_router_gets_no_gradient():
    g = load_preset("tiny-mixtral")
    moe = g.node("layers").subgraph.node("moe")
    moe.params.update(top_k=1, weighting="renormalised")
    d = only(validate(g), "router_without_gradient")
    assert d.severity == "warning" and "no gradient from the loss" in d.message
    assert "probability" in d.hint and (d.node_id, d.path) == ("moe", ("layers",))
    for fixed in ({"weighting": "probability"}, {"weighting": "auto"}, {"top_k": 2}):
        moe.params.update(fixed)
        assert "router_without_gradient" not in codes(validate(g)), fixed
        moe.params.update(top_k=1, weighting="renormalised")


def test_vocab_mismatch_between_embedding_and_head():
    g = load_preset("tiny-gpt")
    g.node("head").params["vocab_size"] = 300
    d = only(validate(g), "vocab_mismatch")
    assert d.node_id == "head" and "300" in d.message and "256" in d.message


def test_tied_head_with_a_different_width_than_the_embedding():
    g = recurrent_lm(name="r", description="", vocab=64, d_model=32, hidden=48, layers=1,
                     tie=True)
    d = only(validate(g), "tie_shape_mismatch")
    assert "64 x 32" in d.message and "48 wide" in d.message
    untied = recurrent_lm(name="r", description="", vocab=64, d_model=32, hidden=48, layers=1,
                          tie=False)
    assert validate(untied) == []


def test_tied_head_with_no_embedding_upstream():
    g = Graph()
    g.add_node(Node("tokens", "token_input"))
    g.add_node(Node("embed", "token_embedding", {"vocab_size": 64, "d_model": 32}))
    g.add_node(Node("sink", "norm"))
    g.add_node(Node("noise", "dropout"))   # the head's stream starts here, from nothing
    g.add_node(Node("head", "lm_head", {"vocab_size": 64, "tie": True}))
    for e in (Edge("tokens", "ids", "embed", "ids"), Edge("embed", "y", "sink", "x"),
              Edge("noise", "y", "head", "x")):
        g.add_edge(e)
    diags = validate(g)
    assert only(diags, "tie_without_embedding").node_id == "head"
    assert only(diags, "unconnected_input").node_id == "noise"
    # reachable through any input counts, first inputs first
    g.add_node(Node("mix", "add"))
    g.remove_edge(Edge("noise", "y", "head", "x"))
    for e in (Edge("noise", "y", "mix", "in1"), Edge("sink", "y", "mix", "in2"),
              Edge("mix", "y", "head", "x")):
        g.add_edge(e)
    assert "tie_without_embedding" not in codes(validate(g))


def test_cross_attention_without_memory():
    g = load_preset("tiny-t5")
    g.remove_edge(Edge("encoder_norm", "y", "decoder", "memory"))
    d = only(validate(g), "cross_attention_without_memory")
    assert (d.node_id, d.path) == ("decoder", ())
    assert "encoder" in d.hint
    # a bare cross-attention block at the top level
    g2 = tiny()
    layer = g2.node("layers").subgraph
    layer.add_node(Node("cross", "cross_attention", {"heads": 4, "kv_heads": 4}))
    layer.remove_edge(Edge("norm_ffn", "y", "ffn", "x"))
    layer.add_edge(Edge("norm_ffn", "y", "cross", "x"))
    layer.add_edge(Edge("cross", "y", "ffn", "x"))
    d = only(validate(g2), "cross_attention_without_memory")
    assert (d.node_id, d.path) == ("cross", ("layers",)) and "'memory'" in d.message


def test_learned_position_table_shorter_than_the_training_length():
    g = load_preset("tiny-gpt")  # a 256-row table
    assert validate(g, context_length=256) == []
    d = only(validate(g, context_length=512), "learned_positions_too_short")
    assert d.node_id == "pos" and "256" in d.message and "512" in d.message
    g.meta["context_length"] = 300  # the default comes from the graph
    assert "learned_positions_too_short" in codes(validate(g))
    g.meta["context_length"] = "long"
    assert "bad_context_length" in codes(validate(g))


def test_decoder_lm_with_bidirectional_attention():
    g = load_preset("tiny-gpt")
    g.node("layers").subgraph.node("attn").params["causal"] = False
    d = only(validate(g), "decoder_not_causal")
    assert (d.severity, d.node_id, d.path) == ("error", "attn", ("layers",))
    assert "causal" in d.hint


def test_encoder_decoder_checks_only_the_decoder_for_causality():
    g = load_preset("tiny-t5")  # its encoder is bidirectional, as it should be
    assert validate(g) == []
    g.node("decoder").subgraph.node("attn").params["causal"] = False
    d = only(validate(g), "decoder_not_causal")
    assert d.path == ("decoder",)


def test_masked_lm_with_causal_attention_is_a_warning():
    g = load_preset("tiny-bert")
    g.node("layers").subgraph.node("attn").params["causal"] = True
    diags = validate(g)
    assert only(diags, "encoder_causal").severity == "warning"
    assert not has_errors(diags)


def test_graph_without_an_output_head():
    g = load_preset("tiny-gpt")
    g.remove_node("head")
    d = only(validate(g), "no_output_head")
    assert d.node_id is None and d.path == () and d.where == "graph"


@pytest.mark.parametrize("breakage", ["no_output", "two_inputs", "bad_kind", "no_inside",
                                      "outside"])
def test_unknown_or_malformed_group_boundary(breakage):
    g = load_preset("tiny-gpt")
    layer = g.node("layers").subgraph
    if breakage == "no_output":
        layer.remove_node("outputs")
        where = ("layers", ())
    elif breakage == "two_inputs":
        layer.add_node(Node("inputs2", "group_input"))
        where = ("layers", ())
    elif breakage == "bad_kind":
        layer.node("inputs").params["ports"] = "x:tensor"
        where = ("inputs", ("layers",))
    elif breakage == "no_inside":
        g.node("layers").subgraph = None
        where = ("layers", ())
    else:
        g.add_node(Node("stray", "group_output"))
        d = only(validate(g), "boundary_outside_group")
        assert d.node_id == "stray"
        return
    found = [d for d in validate(g) if d.code == "group_boundary"]
    assert found and all(d.severity == "error" for d in found)
    assert (found[0].node_id, found[0].path) == where


def test_shape_inference_failure_becomes_a_diagnostic(monkeypatch):
    spec = get_spec("positional_encoding")

    def broken(params, shapes):
        raise ValueError("the width is not a number")

    monkeypatch.setattr(spec, "infer", broken)
    d = only(validate(load_preset("tiny-gpt")), "shape_inference")
    assert (d.node_id, d.path) == ("pos", ())
    assert "the width is not a number" in d.message


def test_malformed_parameter_value_is_reported_and_leaves_shapes_unknown():
    g = load_preset("tiny-gpt")
    g.node("layers").subgraph.node("add_attn").params["n_inputs"] = "two"  # bypassing coercion
    diags = validate(g)
    d = only(diags, "bad_param")
    assert (d.node_id, d.path) == ("add_attn", ("layers",)) and "n_inputs" in d.message


def test_unknown_parameter_and_unknown_block():
    g = load_preset("tiny-gpt")
    g.node("final_norm").params["colour"] = "red"
    g.nodes["weird"] = Node("weird", "no_such_block")  # as a raw edit could leave it
    diags = validate(g)
    assert "colour" in only(diags, "unknown_param").message
    assert only(diags, "unknown_block").node_id == "weird"


def test_diagnostics_inside_nested_groups_carry_the_full_path():
    g = group_nodes(load_preset("tiny-gpt"), ["layers"], group_id="outer")
    assert validate(g) == []
    g.node("outer").subgraph.node("layers").subgraph.node("attn").params["heads"] = 6
    d = only(validate(g), "heads_divide_d_model")
    assert d.path == ("outer", "layers") and d.where == "outer/layers/attn"


def test_diagnostic_text_and_description():
    g = load_preset("tiny-gpt")
    g.node("head").params["vocab_size"] = 300
    g.remove_edge(Edge("tokens", "ids", "embed", "ids"))
    diags = validate(g)
    text = describe(diags)
    assert text.splitlines()[0].startswith("error at ")
    assert "Fix:" in text
    assert has_errors(diags)
    assert not has_errors([Diagnostic("warning", "m", "h", None)])


@pytest.mark.parametrize("garbage", ["x", -1, 0, None, 10 ** 9])
def test_malformed_parameters_are_reported_never_raised(garbage):
    """Raw edits can leave any value in any parameter; validation and costing must say so
    and go on (the editor validates after every keystroke)."""
    base = load_preset("tiny-t5")
    for path, node in list(base.walk()):
        for name in list(node.resolved_params()):
            g = base.clone()
            target = g
            for gid in path:
                target = target.node(gid).subgraph
            target.node(node.id).params[name] = garbage
            diags = validate(g)
            estimate_cost(g)
            if name != "ports" and garbage in ("x", None, -1, 0):
                spec_param = get_spec(node.type).param(name)
                try:
                    spec_param.coerce(garbage)
                except ValueError:
                    assert "bad_param" in codes(diags), (path, node.id, name)
