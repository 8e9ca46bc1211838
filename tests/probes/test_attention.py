"""Attention maps (tfstudio/probes/attention.py): each map's mask, its labels, which modules are
read, and the maps as plain data."""
from __future__ import annotations

import numpy as np
import torch
from probe_models import TEXT, edited, model_of

from tfstudio.probes import attention_maps, probe_inputs

torch.set_num_threads(1)


def test_an_attention_map_round_trips_through_plain_data(tokenizer):
    """The snapshot file stores each map as plain lists (JSON): reading it back gives the same
    weights, mask, roles and cross flag."""
    import json

    from tfstudio.probes import attention_maps
    from tfstudio.probes.attention import AttentionMap
    model = model_of("tiny-t5", tokenizer)
    maps = attention_maps(model, probe_inputs(model, tokenizer, TEXT))
    assert any(m.cross for m in maps.values()) and not all(m.cross for m in maps.values())
    for name, original in maps.items():
        data = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                for k, v in original.to_dict().items()}
        assert sorted(data) == ["allowed", "cross", "key_role", "query_role", "weights"]
        back = AttentionMap.from_dict(json.loads(json.dumps(data)))
        np.testing.assert_allclose(back.weights, original.weights, rtol=1e-6)
        assert original.allowed.dtype == bool and back.allowed.dtype == bool
        np.testing.assert_array_equal(back.allowed, original.allowed)
        assert (back.query_role, back.key_role, back.cross) == (
            original.query_role, original.key_role, original.cross)
        assert type(back.cross) is bool and type(back.query_role) is str


def test_every_map_has_a_mask_of_its_own_queries_by_keys(tokenizer):
    t5 = model_of("tiny-t5", tokenizer)
    inputs = probe_inputs(t5, tokenizer, TEXT)
    S, T = len(inputs.ids["source"]), len(inputs.ids["target"])
    assert S != T
    maps = attention_maps(t5, inputs)
    for name, amap in maps.items():
        assert amap.allowed.shape == amap.weights.shape[1:], name
    cross = [m for m in maps.values() if m.cross]
    assert cross and all(m.weights.shape[1:] == (T, S) and m.allowed.all() for m in cross)


def test_a_one_head_alibi_model_shows_its_causal_mask(tokenizer):
    def one_head(graph):
        graph.nodes["layers"].subgraph.nodes["attn"].params.update(heads=1, kv_heads=1)
    model = edited("tiny-alibi-gpt", tokenizer, one_head)
    inputs = probe_inputs(model, tokenizer, TEXT)
    T = len(inputs.ids["tokens"])
    maps = attention_maps(model, inputs)
    assert sorted(maps) == ["layers.0.attn", "layers.1.attn"]
    for amap in maps.values():
        assert amap.weights.shape == (1, T, T)
        np.testing.assert_array_equal(amap.allowed, np.tril(np.ones((T, T), dtype=bool)))


def test_a_model_without_its_graph_labels_every_map_with_its_last_input(gpt, tokenizer):
    model, inputs = gpt
    t5 = model_of("tiny-t5", tokenizer)
    for m, expected in ((model, "tokens"), (t5, "target")):
        saved = m.graph
        try:
            m.graph = None          # a standalone export carries no graph
            maps = attention_maps(m, probe_inputs(m, tokenizer, TEXT))
        finally:
            m.graph = saved
        assert maps and all((a.query_role, a.key_role) == (expected, expected)
                            for a in maps.values())


def test_a_graph_that_does_not_hold_the_blocks_labels_them_with_the_default(gpt):
    from tfstudio.graph import Graph
    model, inputs = gpt
    saved = model.graph
    try:
        model.graph = Graph()       # no group "layers" to follow the wires in
        maps = attention_maps(model, inputs)
    finally:
        model.graph = saved
    assert maps and all((a.query_role, a.key_role) == ("tokens", "tokens")
                        for a in maps.values())


def test_only_the_blocks_listened_to_are_read_and_the_rest_keep_their_fused_path(gpt,
                                                                              monkeypatch):
    from tfstudio.nn import attached, attention
    from tfstudio.probes._util import looking_at
    from tfstudio.probes.attention import AttentionReader
    model, inputs = gpt
    reader = AttentionReader(model)
    second = {n for n in reader.names if n.startswith("layers.1.")}
    fused = []
    sdpa = attention.F.scaled_dot_product_attention
    monkeypatch.setattr(attention.F, "scaled_dot_product_attention",
                        lambda *a, **k: fused.append(1) or sdpa(*a, **k))
    with looking_at(model), attached(model, reader, names=second):
        model(*inputs.args)
    assert len(fused) == 1                   # layer 0 ran fused, layer 1 explicitly
    assert sorted(reader.maps()) == ["layers.1.attn"]


def test_a_map_read_back_from_zeros_and_ones_has_a_boolean_mask():
    from tfstudio.probes.attention import AttentionMap
    back = AttentionMap.from_dict({"weights": [[[1.0, 0.0], [0.5, 0.5]]],
                                   "allowed": [[1, 0], [1, 1]], "query_role": "tokens",
                                   "key_role": "tokens", "cross": 0})
    assert back.allowed.dtype == bool
    np.testing.assert_array_equal(~back.allowed, [[False, True], [False, False]])
