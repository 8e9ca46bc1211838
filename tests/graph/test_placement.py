"""Norm placement: the templates are recognised by name, and rewrites between them keep the
mixers and reproduce the other templates' wiring exactly."""
import pytest

import tfstudio  # noqa: F401
from tfstudio.graph import Document, Edge, Node, ReplaceGraph
from tfstudio.graph.cost import estimate_cost
from tfstudio.graph.placement import (PLACEMENTS, identify_placement, residual_structure,
                                      rewrite_placement)
from tfstudio.graph.templates import layer_graph
from tfstudio.graph.validate import validate
from tfstudio.presets import load_preset

DECODER = [("attention", {"heads": 4, "kv_heads": 2, "position": "rope"}),
           ("feed_forward", {"d_ff": 96, "activation": "swiglu"})]
CROSS = [("attention", {"heads": 4}), ("cross_attention", {"heads": 4}),
         ("feed_forward", {"d_ff": 64})]
NORM = {"kind": "rmsnorm", "eps": 1e-6}


def wiring(g):
    """What a placement is: which blocks (with their parameters) and which wires."""
    nodes = {(n.id, n.type, tuple(sorted(n.params.items()))) for n in g}
    return nodes, set(g.edges)


def template(placement, sublayers=DECODER, memory=False):
    return layer_graph(sublayers, placement, NORM, memory=memory)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("sublayers, memory", [(DECODER, False), (CROSS, True)])
def test_templates_are_identified(placement, sublayers, memory):
    assert identify_placement(template(placement, sublayers, memory)) == placement


@pytest.mark.parametrize("source", PLACEMENTS)
@pytest.mark.parametrize("target", PLACEMENTS)
@pytest.mark.parametrize("sublayers, memory", [(DECODER, False), (CROSS, True)])
def test_rewrite_gives_the_target_template(source, target, sublayers, memory):
    before = template(source, sublayers, memory)
    after = rewrite_placement(before, target)
    assert identify_placement(after) == target
    assert wiring(after) == wiring(template(target, sublayers, memory))
    assert wiring(before) == wiring(template(source, sublayers, memory))  # input untouched


def test_pre_post_pre_round_trip_gives_the_same_wiring():
    pre = template("pre")
    back = rewrite_placement(rewrite_placement(pre, "post"), "pre")
    assert wiring(back) == wiring(pre)
    assert list(back.nodes) == list(pre.nodes)  # and the same block order


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_rewriting_to_the_placement_a_layer_has_leaves_every_block_where_it_was(placement):
    before = template(placement, CROSS, memory=True)
    after = rewrite_placement(before, placement)
    assert {n.id: n.pos for n in after} == {n.id: n.pos for n in before}


def test_mixers_keep_ids_params_and_cross_attention_keeps_its_memory():
    layer = template("post", CROSS, memory=True)
    layer.node("cross").params["dropout"] = 0.1
    out = rewrite_placement(layer, "sandwich")
    for mixer in ("attn", "cross", "ffn", "add_attn", "add_cross", "add_ffn"):
        assert out.node(mixer) == layer.node(mixer)
    assert out.edge_into("cross", "memory") == Edge("inputs", "memory", "cross", "memory")
    assert {n.params["kind"] for n in out if n.type == "norm"} == {"rmsnorm"}


def test_norm_count_per_placement():
    for placement, per_sublayer in (("pre", 1), ("post", 1), ("post-in-residual", 1),
                                    ("sandwich", 2)):
        out = rewrite_placement(template("pre"), placement)
        assert len(out.nodes_of_type("norm")) == 2 * per_sublayer


def test_mixed_layer_is_named_and_can_be_unified():
    layer = template("pre")
    # move the FFN's norm from before F to after the Add: sublayer 1 pre, sublayer 2 post
    for e in (Edge("add_attn", "y", "norm_ffn", "x"), Edge("norm_ffn", "y", "ffn", "x"),
              Edge("add_ffn", "y", "outputs", "y")):
        layer.remove_edge(e)
    for e in (Edge("add_attn", "y", "ffn", "x"), Edge("add_ffn", "y", "norm_ffn", "x"),
              Edge("norm_ffn", "y", "outputs", "y")):
        layer.add_edge(e)
    assert [s.placement for s in residual_structure(layer).sublayers] == ["pre", "post"]
    assert identify_placement(layer) == "mixed"
    assert wiring(rewrite_placement(layer, "pre")) == wiring(template("pre"))


def test_norm_inside_the_residual_only_is_post_in_residual():
    """y = x + Norm(F(x)) (the seed's "Post Norm in Residual") is its own placement; with a
    norm before F as well it is sandwich."""
    layer = template("sandwich")
    for sub in ("attn", "ffn"):
        stream = "inputs" if sub == "attn" else "add_attn"
        layer.remove_node(f"norm_{sub}")
        layer.add_edge(Edge(stream, "x" if sub == "attn" else "y", sub, "x"))
    assert identify_placement(layer) == "post-in-residual"
    assert identify_placement(rewrite_placement(layer, "sandwich")) == "sandwich"
    assert len(rewrite_placement(layer, "sandwich").nodes_of_type("norm")) == 4
    assert identify_placement(rewrite_placement(layer, "post")) == "post"


def test_layer_without_norms_gets_the_requested_kind():
    layer = template("pre")
    for sub, stream in (("attn", ("inputs", "x")), ("ffn", ("add_attn", "y"))):
        layer.remove_node(f"norm_{sub}")
        layer.add_edge(Edge(*stream, sub, "x"))
    assert identify_placement(layer) == "none"
    out = rewrite_placement(layer, "pre", norm={"kind": "rmsnorm", "eps": 1e-6})
    assert wiring(out) == wiring(template("pre"))


def test_layers_without_residuals_are_refused():
    lstm = load_preset("tiny-lstm")
    assert identify_placement(lstm) == "none"
    with pytest.raises(ValueError, match="no residual sublayer"):
        rewrite_placement(lstm, "pre")
    with pytest.raises(ValueError,
                       match="placement must be one of pre, post, post-in-residual, sandwich"):
        rewrite_placement(template("pre"), "middle")


def test_rewriting_a_preset_layer_through_the_document():
    """BERT's post-norm layers to pre-norm, as the editor's switch does it: one undo step,
    the same parameter count, still valid (a pre-norm stack wants a final norm; BERT has its
    embedding norm, so validation has nothing to say)."""
    doc = Document(load_preset("tiny-bert"))
    before = estimate_cost(doc.root).total_params
    layer = doc.graph(("layers",))
    doc.execute(ReplaceGraph(("layers",), rewrite_placement(layer, "pre"), text="Pre-norm"))
    assert identify_placement(doc.graph(("layers",))) == "pre"
    assert estimate_cost(doc.root).total_params == before
    assert validate(doc.root) == []
    doc.undo()
    assert identify_placement(doc.graph(("layers",))) == "post"


@pytest.mark.parametrize("name, expected", [("gpt2-small", "pre"), ("gpt1", "post"),
                                            ("llama", "pre"), ("bert-base", "post"),
                                            ("gpt3-style-local", "pre")])
def test_presets_are_identified(name, expected):
    assert identify_placement(load_preset(name).node("layers").subgraph) == expected


def test_extra_readers_of_the_stream_follow_it():
    layer = template("pre")
    layer.add_node(Node("probe", "dropout"))
    layer.add_edge(Edge("add_attn", "y", "probe", "x"))
    post = rewrite_placement(layer, "post")
    assert post.edge_into("probe", "x").src == "norm_attn"  # the stream now ends after the norm
