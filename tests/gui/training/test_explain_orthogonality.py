"""Issue 23's orthogonality reading in the Embeddings tab: a sentence computed from the token and
position vectors (mean |cos| against random vectors, the top-k subspace share against chance),
which flips when the vectors are made to align, and says so when the model adds no positions.
The sentence is read as the tab computes it (:func:`~tfstudio.gui.training.explain_read.
embedding_read_out`, :func:`~tfstudio.gui.training.explain_lines.orthogonality_text`), without
Qt; that the tab shows it: test_explain_view.py."""
from __future__ import annotations

import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.explain_lines import orthogonality_text
from tfstudio.gui.training.explain_read import embedding_read_out
from tfstudio.presets import load_preset
from tfstudio.probes import position_angles
from tfstudio.probes.embeddings import alignment_words
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
TEXT = "abcdefgh>hgfedcba"


def shown(model, tokenizer) -> str:
    """The Embeddings tab's sentence for TEXT on ``model``."""
    return orthogonality_text(embedding_read_out(model, tokenizer, TEXT)["angles"])


def model_of(preset: str, tokenizer):
    torch.manual_seed(0)
    return compile_graph(fit_graph_to_tokenizer(load_preset(preset), tokenizer)).eval()


def test_the_embeddings_tab_reads_tokens_against_positions_and_flips_when_aligned():
    tokenizer = build_tokenizer("byte")
    model = model_of("tiny-gpt", tokenizer)
    text = shown(model, tokenizer)
    expected = alignment_words(position_angles(model, tokenizer.encode(TEXT)))
    assert text.startswith("Token vectors against the learned position vectors (the loaded "
                           "weights, 64 positions): ")
    assert expected in text and "not orthogonal" not in text
    with torch.no_grad():   # every position vector now points along the token 'a'
        row = model.embed.weight[tokenizer.encode("a")[0]]
        model.pos.table.weight.copy_(row.expand_as(model.pos.table.weight))
    aligned = shown(model, tokenizer)
    assert "times as aligned as random vectors: not orthogonal" in aligned
    assert alignment_words(position_angles(model, tokenizer.encode(TEXT))) in aligned


def test_a_model_without_position_vectors_says_there_is_nothing_to_measure():
    tokenizer = build_tokenizer("byte")
    text = shown(model_of("tiny-llama", tokenizer), tokenizer)
    assert "adds no position vectors" in text
