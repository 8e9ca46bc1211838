"""The vectors lesson's measurements: hand-made vectors with known distances, and a tiny model
whose first reading is static by construction."""
import numpy as np
import pytest
import torch

import tfstudio
from tfstudio.data import build_tokenizer
from tfstudio.experiments.course.vectors import (Occurrence, contextual_drift,
                                                 find_occurrences, layer_vectors,
                                                 mean_pair_distance, nearest_tokens,
                                                 same_position, static_neighbours,
                                                 within_and_between)


def test_mean_pair_distance_is_one_minus_cosine_averaged_over_pairs():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # pairs: (e1, e2) cos 0, (e1, e1+e2) cos 1/sqrt2, (e2, e1+e2) cos 1/sqrt2
    assert mean_pair_distance(a) == pytest.approx((1 + 2 * (1 - 2 ** -0.5)) / 3)
    b = np.array([[-1.0, 0.0]])
    # across: cos(e1,-e1) = -1, cos(e2,-e1) = 0, cos(e1+e2,-e1) = -1/sqrt2
    assert mean_pair_distance(a, b) == pytest.approx((2 + 1 + (1 + 2 ** -0.5)) / 3)
    with pytest.raises(ValueError, match="at least 2"):
        mean_pair_distance(a[:1])


def test_within_and_between_weigh_every_pair_once_per_layer():
    static = np.array([[1.0, 0.0]] * 3)[:, None, :]          # word A: one vector, 3 times
    moving = np.array([[0.0, 1.0], [0.0, -1.0]])[:, None, :]  # word B: opposite vectors
    within, between = within_and_between([static, moving])
    # A's 3 pairs at distance 0, B's 1 pair at distance 2: (0 * 3 + 2 * 1) / 4
    assert within == [pytest.approx(0.5)]
    # every A-B pair is orthogonal: distance 1
    assert between == [pytest.approx(1.0)]


def test_same_position_cuts_each_text_so_the_word_sits_where_the_shortest_has_it():
    occ = [Occurrence("w", (1, 2, 3, 9), 3), Occurrence("w", (5, 9, 7), 1)]
    held = same_position(occ)
    assert [o.position for o in held] == [1, 1]
    assert [o.ids[o.position] for o in held] == [9, 9]
    assert held[0].ids == (3, 9)


def test_find_occurrences_points_at_each_whole_word_last_token():
    tok = build_tokenizer("byte")
    occ = find_occurrences(tok, ["the bank, a bank", "embankment bank"], "bank")
    assert len(occ) == 3                                       # not inside "embankment"
    for o in occ:
        assert bytes([o.ids[o.position]]) == b"k"
    assert [o.position for o in occ] == [7, 15, 14]


def test_nearest_tokens_rank_other_rows_by_cosine():
    table = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    near = nearest_tokens(table, [0], k=3)[0]
    assert [j for j, _ in near] == [1, 2, 3]                   # never itself
    assert near[0][1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))
    assert near[2][1] == pytest.approx(-1.0)


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    graph = tfstudio.load_graph("tiny-gpt")
    return tfstudio.compile_graph(graph).eval(), build_tokenizer("byte")


def test_token_embeddings_are_static_and_the_stream_is_not(tiny):
    model, tok = tiny
    texts = ["a river bank", "the money in the bank", "bank on it", "my bank is closed"]
    drift = contextual_drift(model, tok, texts, ["bank", "the"])
    assert drift.layers[0] == "token embedding"
    # one row of the table for every occurrence: distance 0 at the input
    assert drift.same_word[0] == pytest.approx(0.0, abs=1e-9)
    assert drift.same_position[0] == pytest.approx(0.0, abs=1e-9)
    # after the layers the occurrences differ, and differ less than different words do
    assert drift.same_word[-1] > 1e-4
    assert drift.same_word[-1] < drift.between_words[-1]
    assert drift.share_of_spread()[0] == pytest.approx(0.0, abs=1e-9)
    # entering the layers, the learned position table alone tells the occurrences apart:
    # held at one position they are still one vector
    assert drift.same_word[1] > 1e-4
    assert drift.same_position[1] == pytest.approx(0.0, abs=1e-9)


def test_a_word_seen_once_is_named(tiny):
    model, tok = tiny
    with pytest.raises(ValueError, match="'river' must occur at least twice"):
        contextual_drift(model, tok, ["a river bank", "a bank"], ["bank", "river"])


def test_layer_vectors_follow_the_stream_the_lens_reads(tiny):
    model, tok = tiny
    ids = tuple(tok.encode("hello there"))
    labels, vectors = layer_vectors(model, [Occurrence("o", ids, 4)])
    assert vectors.shape[:2] == (1, len(labels))
    with torch.no_grad():
        looked_up = model.embed(torch.tensor([ids]))[0, 4].double().numpy()
    assert np.allclose(vectors[0, 0], looked_up)


def test_static_neighbours_name_single_tokens(tiny):
    model, tok = tiny
    near = static_neighbours(model, tok, ["a"], k=3)
    assert len(near["a"]) == 3 and all(name != "a" for name, _ in near["a"])
    with pytest.raises(ValueError, match="'ab' is 2 tokens"):
        static_neighbours(model, tok, ["ab"])
