"""Which tokens each expert takes: counted from the router's choices, by hand and through a
real mixture model; the lesson's sentences follow the counts."""
from __future__ import annotations

import numpy as np
import pytest

import tfstudio
from tfstudio.experiments.course.experts import expert_tokens, tokens_by_expert
from tfstudio.experiments.lessons.experts import token_sentences


def test_each_expert_counts_the_tokens_routed_to_it_and_its_share_of_picks():
    ids = np.array([7, 7, 7, 3, 3, 5])
    chosen = np.array([[0], [0], [1], [1], [1], [1]])      # top-1
    got = tokens_by_expert(ids, chosen, experts=3)
    assert [e.share for e in got] == pytest.approx([2 / 6, 4 / 6, 0.0])
    assert got[0].top == ((7, 2, 3),)                       # took 2 of token 7's 3
    assert got[1].top == ((3, 2, 2), (5, 1, 1), (7, 1, 3))  # ties broken by id
    assert got[2].top == ()


def test_top_2_routing_counts_a_token_for_both_its_experts():
    got = tokens_by_expert(np.array([4, 9]), np.array([[0, 1], [1, 2]]), experts=3)
    assert [e.share for e in got] == pytest.approx([0.25, 0.5, 0.25])
    assert got[1].top == ((4, 1, 1), (9, 1, 1))


def test_a_mixture_model_routes_every_token_of_the_text_once_per_layer_and_pick():
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-mixtral")).eval()
    ids = list(np.random.default_rng(0).integers(0, 200, 3 * 16 + 5))
    layers = expert_tokens(model, ids, window=16)
    assert len(layers) >= 1
    for experts in layers.values():
        assert sum(e.share for e in experts) == pytest.approx(1.0)
        taken = sum(n for e in experts for _, n, _ in e.top)
        assert taken <= 2 * 48                               # 3 windows, top-2, top tokens only


def test_a_model_without_experts_is_refused_by_name():
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-gpt")).eval()
    with pytest.raises(ValueError, match="no mixture-of-experts layer"):
        expert_tokens(model, list(range(64)), window=16)


def test_the_sentence_names_the_busiest_expert_from_the_counts():
    table = {"layers.0.ffn": [
        {"expert": 0, "share": 0.7, "top": [[" ", 50, 60]]},
        {"expert": 1, "share": 0.3, "top": [["e", 20, 25]]}]}
    line = token_sentences({"4 experts": table}, seed=2)[0]
    assert "expert 0 70% (' ' 50 of 60)" in line and "seed 2" in line
    assert line.endswith("the busiest is expert 0 with 70% of the picks.")
    table["layers.0.ffn"][0]["share"], table["layers.0.ffn"][1]["share"] = 0.2, 0.8
    assert token_sentences({"4 experts": table}, seed=2)[0].endswith(
        "the busiest is expert 1 with 80% of the picks.")
