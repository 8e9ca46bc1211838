"""Shape inference: symbolic shapes on every wire, inside groups too."""
import tfstudio  # noqa: F401
from tfstudio.graph import Edge, Graph, Node
from tfstudio.graph.shapes import infer_shapes
from tfstudio.graph.templates import layer_graph
from tfstudio.presets import load_preset


def test_gpt2_shapes_from_ids_to_logits():
    shapes = infer_shapes(load_preset("gpt2-small"))
    assert shapes.output_shapes("tokens") == {"ids": ("B", "T")}
    assert shapes.output_shapes("embed") == {"y": ("B", "T", 768)}
    assert shapes.output_shapes("layers") == {"y": ("B", "T", 768)}
    assert shapes.input_shapes("attn", ("layers",)) == {"x": ("B", "T", 768)}
    assert shapes.output_shapes("head") == {"logits": ("B", "T", 50257)}
    assert not shapes.errors


def test_encoder_decoder_keeps_source_and_target_lengths_apart():
    shapes = infer_shapes(load_preset("tiny-t5"))
    assert shapes.output_shapes("encoder") == {"y": ("B", "S", 64)}
    cross_in = shapes.input_shapes("cross", ("decoder",))
    assert cross_in == {"x": ("B", "T", 64), "memory": ("B", "S", 64)}
    assert shapes.output_shapes("head") == {"logits": ("B", "T", 256)}


def test_rnn_changes_the_width():
    shapes = infer_shapes(load_preset("tiny-lstm"))
    assert shapes.output_shapes("rnn") == {"y": ("B", "T", 64)}


def test_unconnected_input_leaves_shapes_unknown_downstream():
    g = load_preset("tiny-gpt")
    g.remove_edge(Edge("pos", "y", "layers", "x"))
    shapes = infer_shapes(g)
    assert shapes.output_shapes("layers") == {}
    assert shapes.output_shapes("head") == {}
    assert shapes.output_shapes("pos") == {"y": ("B", "T", 64)}


def test_repeated_group_that_changes_shape_is_an_error_with_a_code():
    inside = layer_graph([("feed_forward", {"d_ff": 8})], "pre")
    inside.remove_edge(Edge("add_ffn", "y", "outputs", "y"))
    inside.add_node(Node("narrow", "rnn", {"hidden_size": 16}))
    inside.add_edge(Edge("add_ffn", "y", "narrow", "x"))
    inside.add_edge(Edge("narrow", "y", "outputs", "y"))
    g = Graph()
    g.add_node(Node("tokens", "token_input"))
    g.add_node(Node("embed", "token_embedding", {"d_model": 32}))
    g.add_node(Node("stack", "group", {"repeat": 2}, subgraph=inside))
    g.add_edge(Edge("tokens", "ids", "embed", "ids"))
    g.add_edge(Edge("embed", "y", "stack", "x"))
    shapes = infer_shapes(g)
    assert shapes.codes[((), "stack")] == "repeat_shape_changes"
    assert "(B, T, 32)" in shapes.errors[((), "stack")].replace("'", "")
    g.node("stack").params["repeat"] = 1  # once is fine: nothing is fed back
    assert not infer_shapes(g).errors


def test_cycle_gives_no_shapes_but_does_not_raise():
    g = load_preset("tiny-gpt")
    g.add_edge(Edge("final_norm", "y", "pos", "x"))
    shapes = infer_shapes(g)
    assert shapes.outputs == {}
