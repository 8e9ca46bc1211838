"""Head roles (tfstudio/probes/roles.py): roles traced through groups, the repeated sequence and
the head scores, worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest
import torch

torch.set_num_threads(1)


def graph_of(nodes, edges):
    from tfstudio.graph import Graph
    from tfstudio.graph.model import Edge, Node
    graph = Graph()
    for node_id, kind, params, *inside in nodes:
        node = Node(node_id, kind, dict(params))
        if inside:
            node.subgraph = graph_of(*inside[0]) if inside[0] is not None else None
        graph.add_node(node)
    for src, src_port, dst, dst_port in edges:
        graph.add_edge(Edge(src, src_port, dst, dst_port))
    return graph


def group_of(inner_nodes, inner_edges):
    """A group body reading x and writing y: inputs -> ... -> outputs."""
    return ([("inputs", "group_input", {"ports": "x:hidden"}),
             ("outputs", "group_output", {"ports": "y:hidden"}), *inner_nodes], inner_edges)


def test_a_block_key_names_its_groups_and_its_node():
    from tfstudio.probes.roles import split_key
    assert split_key(("embed",)) == ((), "embed")
    assert split_key(("layers", 0, "attn")) == (("layers",), "attn")
    assert split_key(("enc", 0, "layers", 1, "attn")) == (("enc", "layers"), "attn")


def test_roles_are_traced_out_of_nested_groups():
    from tfstudio.probes.roles import stream_roles
    inner = group_of([("attn", "attention", {})],
                     [("inputs", "x", "attn", "x"), ("attn", "y", "outputs", "y")])
    outer = group_of([("inner", "group", {"repeat": 1}, inner)],
                     [("inputs", "x", "inner", "x"), ("inner", "y", "outputs", "y")])
    root = graph_of([("src", "token_input", {"role": "source"}),
                     ("embed", "token_embedding", {}),
                     ("outer", "group", {"repeat": 1}, outer)],
                    [("src", "ids", "embed", "ids"), ("embed", "y", "outer", "x")])
    key = ("outer", 0, "inner", 0, "attn")
    assert stream_roles(root, key, False, "target") == ("source", "source")


def test_roles_are_traced_into_a_group_through_its_outputs():
    from tfstudio.probes.roles import stream_roles
    body = group_of([("norm", "norm", {})],
                    [("inputs", "x", "norm", "x"), ("norm", "y", "outputs", "y")])
    root = graph_of([("src", "token_input", {"role": "source"}),
                     ("embed", "token_embedding", {}),
                     ("enc", "group", {"repeat": 2}, body),
                     ("hollow", "group", {"repeat": 1}, None),   # no body to enter
                     ("attn", "attention", {}), ("attn2", "attention", {})],
                    [("src", "ids", "embed", "ids"), ("embed", "y", "enc", "x"),
                     ("enc", "y", "attn", "x"), ("hollow", "y", "attn2", "x")])
    assert stream_roles(root, ("attn",), False, "target") == ("source", "source")
    assert stream_roles(root, ("attn2",), False, "target") == ("target", "target")


def test_cross_attention_keys_follow_the_memory_wire_else_the_source():
    from tfstudio.probes.roles import stream_roles
    root = graph_of([("tgt", "token_input", {"role": "target"}),
                     ("embed", "token_embedding", {}),
                     ("cross", "cross_attention", {}), ("lone", "cross_attention", {})],
                    [("tgt", "ids", "embed", "ids"), ("embed", "y", "cross", "x"),
                     ("embed", "y", "cross", "memory"), ("embed", "y", "lone", "x")])
    assert stream_roles(root, ("cross",), True, "tokens") == ("target", "target")
    assert stream_roles(root, ("lone",), True, "tokens") == ("target", "source")


def test_the_repeated_sequence_and_its_refusals():
    from tfstudio.probes.roles import repeated_sequence
    assert repeated_sequence([5, 6, 7], 3) == repeated_sequence([5, 6, 7], 3, seed=0)
    pair = repeated_sequence([5, 6, 7], 2)
    assert len(pair) == 4 and pair[:2] == pair[2:] and len(set(pair[:2])) == 2
    small = repeated_sequence([5, 6], 5)          # more tokens than the pool: repeats allowed
    assert len(small) == 10 and small[:5] == small[5:] and set(small) <= {5, 6}
    with pytest.raises(ValueError) as caught:
        repeated_sequence([], 4)
    assert str(caught.value) == "the token pool for the head scores is empty"
    with pytest.raises(ValueError) as caught:
        repeated_sequence([1, 2], 1)
    assert str(caught.value) == "the repeated sequence needs at least 2 tokens per half; got 1"


def test_head_scores_by_hand():
    from tfstudio.probes.roles import scores_from_weights

    # one head, half = 2, T = 4 (no prefix): rows of attention weights chosen by hand
    w = np.array([[[1.0, 0, 0, 0],
                   [0.6, 0.4, 0, 0],
                   [0.1, 0.2, 0.7, 0],
                   [0.25, 0.25, 0.3, 0.2]]])
    scores = scores_from_weights(w, 2)
    # previous token: rows 1..3 on keys 0..2 = 0.6, 0.2, 0.3
    np.testing.assert_allclose(scores["previous_token"], [(0.6 + 0.2 + 0.3) / 3])
    # induction: rows 2..3 on keys i - 2 + 1 = 1, 2: 0.2, 0.3
    np.testing.assert_allclose(scores["induction"], [(0.2 + 0.3) / 2])
    assert scores["induction"].dtype == np.float64


def test_head_scores_defaults_are_twenty_tokens_of_seed_zero(gpt):
    from tfstudio.probes.roles import head_scores
    model, _ = gpt
    pool = list(range(97, 123))
    default = head_scores(model, pool)
    explicit = head_scores(model, pool, length=20, seed=0)
    assert sorted(default) == ["layers.0.attn", "layers.1.attn"]
    for name in default:
        for score in ("previous_token", "induction"):
            np.testing.assert_array_equal(default[name][score], explicit[name][score])
    other = head_scores(model, pool, length=21, seed=1)
    assert not np.array_equal(other["layers.0.attn"]["induction"],
                              default["layers.0.attn"]["induction"])
