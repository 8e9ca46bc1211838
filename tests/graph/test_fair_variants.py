"""A switch gives a variant that stands on its own: sinusoidal positions scale the token
embeddings as the tiny-transformer preset does (that every scheme then learns more than counting
character pairs is trained in tests/experiments/test_positions_lesson.py)."""
from __future__ import annotations

from tfstudio import load_graph
from tfstudio.graph.switches import (POSITIONAL_SCHEMES, positional_schemes_for,
                                   set_positional_scheme)


def embeddings(graph):
    return [n for _, n in graph.walk() if n.type == "token_embedding"]


def test_sinusoidal_scales_the_token_embeddings_and_the_others_keep_them():
    base = load_graph("tiny-gpt")
    assert not any(e.params.get("scale") for e in embeddings(base))
    assert all(e.params["scale"] for e in embeddings(set_positional_scheme(base, "sinusoidal")))
    for scheme in ("learned", "rope", "alibi", "none"):
        assert not any(e.params.get("scale") for e in
                       embeddings(set_positional_scheme(base, scheme)))
    preset = load_graph("tiny-transformer")  # scaled already: a switch keeps it so
    assert all(e.params["scale"] for e in embeddings(set_positional_scheme(preset, "rope")))


def test_a_model_without_attention_offers_only_the_added_positions():
    """RoPE and ALiBi act inside self-attention: an LSTM cannot take them (refused, naming
    why), while a transformer can; added encodings suit both."""
    import pytest

    lstm, gpt = load_graph("tiny-lstm"), load_graph("tiny-gpt")
    assert positional_schemes_for(gpt) == POSITIONAL_SCHEMES
    assert positional_schemes_for(lstm) == ("sinusoidal", "learned", "none")
    for scheme in ("rope", "alibi"):
        with pytest.raises(ValueError, match="has no self-attention"):
            set_positional_scheme(lstm, scheme)
    assert [n.type for _, n in set_positional_scheme(lstm, "learned").walk()
            ].count("positional_encoding") == 1
