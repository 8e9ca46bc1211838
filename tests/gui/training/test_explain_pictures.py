"""What each picture of Explain shows, without Qt (gui/training/explain_pictures.py): a walk
stage's pictures of the picked token, and a step card's heatmap of the whole tensor. The
pictures drawn: test_explain_view.py."""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.explain_lines import picked_line
from tfstudio.gui.training.explain_pictures import (MAX_COLS_SHOWN, MAX_ROWS_SHOWN, Picture,
                                                    card_kind, card_labels, card_matrix,
                                                    shape_title, stage_names, stage_pictures,
                                                    stage_tokens, vocab_labels)
from tfstudio.probes.walk import Step


def stage(name: str, shape: list[int], **summary) -> dict:
    return {"name": name, "block": name.split(":")[0], "kind": summary.pop("kind", "vector"),
            "shape": shape, "formula": "", **summary}


def test_a_stages_largest_logits_are_labelled_with_their_tokens():
    summary = {"name": "head: logits", "block": "head", "kind": "logits", "shape": [3, 256],
               "formula": "logits = x W", "top_ids": [104, 105], "top_values": [9.0, 7.5]}
    names = stage_names(summary, lambda ids: [chr(i) for i in ids])
    (bars,) = stage_pictures(summary, list("abc"), 2, names)
    assert bars.labels == ["h", "i"] and list(bars.values) == [9.0, 7.5]
    assert bars.caption == "the 2 largest logits" and bars.kind == "bars"


def test_a_distributions_likeliest_tokens_come_with_all_the_others_summed():
    summary = stage("sampling: probabilities", [3, 4], kind="sampling", top_ids=[1, 3],
                    top_values=[0.6, 0.3], others=0.1, top_tokens=["b", "d"])
    assert stage_names(summary, lambda ids: ["never"] * len(ids)) == ["b", "d"]  # its own
    assert stage_names({"top_ids": [7, 9]}, None) == ["7", "9"]                 # or the ids
    assert stage_pictures(summary, list("abc"), 2, ["b", "d"]) == [
        Picture("the 2 likeliest next tokens, and all others summed", "bars", [0.6, 0.3, 0.1],
                ["b", "d", "others"])]


def test_the_picked_tokens_row_of_attention_is_a_bar_per_key_and_has_no_size_picture():
    weights = stage("layers.0.attn: head 0: softmax", [3, 3], picked=[0.2, 0.8, 0.0],
                    per_position=[1.0, 1.0, 1.0])
    (row,) = stage_pictures(weights, list("abc"), 1, [])
    assert row == Picture("b (position 1), its row: how much it looks at each token", "bars",
                          [0.2, 0.8, 0.0], list("abc"), 1)
    scores = stage("layers.0.attn: head 0: scores", [3, 3], picked=[1.5, -2.0, 0.0])
    assert stage_pictures(scores, list("abc"), 1, [])[0].caption == \
        "b (position 1), its row, one number per key"


def test_a_vector_is_a_strip_of_its_values_then_the_size_of_every_positions():
    ffn = stage("layers.0.ffn: out", [3, 4], picked=[0.5, -1.0, 2.0, 0.0],
                per_position=[1.0, 2.5, 0.5])
    strip, sizes = stage_pictures(ffn, [" ", "b", "c"], 0, [])
    assert strip == Picture("␣ (position 0): its 4 values", "strip", [0.5, -1.0, 2.0, 0.0], [])
    assert sizes == Picture("the size (L2 norm) of every position's vector", "bars",
                            [1.0, 2.5, 0.5], [" ", "b", "c"], 0)
    ids = stage("embed: token ids", [3], per_position=[5.0, 6.0, 7.0])
    assert stage_pictures(ids, list("abc"), 2, []) == [
        Picture("one number per position", "bars", [5.0, 6.0, 7.0], list("abc"), 2)]
    scale = stage("embed: scale", [3], picked=[0.5, 0.25, 1.0])
    assert stage_pictures(scale, list("abc"), 2, [])[0].caption == "one number per position"
    assert shape_title("embed: scale", [3]) == "<b>embed: scale</b>  [3]"
    assert shape_title("loss", ()) == "<b>loss</b>  [scalar]"


def test_a_probability_card_names_the_likeliest_next_tokens_and_a_token_ids_row_its_ids():
    probabilities = Step("sampling: probabilities", "p = softmax(logits / T)",
                         np.array([0.1, 0.6, 0.0, 0.3]), kind="sampling")
    assert picked_line(np.asarray(probabilities.value), probabilities.kind, list("abcd"), 3,
                       lambda ids: ["tok" + str(i) for i in ids]) == \
        "likeliest next: tok1 0.600 · tok3 0.300 · tok0 0.100"
    ids = Step("embed: token ids", "ids", np.array([[5, 6, 7]]))
    values = Step("embed: scale", "s", np.array([[0.5, 0.25, 1.0]]))
    assert card_labels(ids, card_matrix(ids.value).shape, list("abc"), None)[0] == ["id"]
    assert card_labels(values, card_matrix(values.value).shape, list("abc"), None)[0] == \
        ["value"]


def test_a_cards_columns_are_the_keys_the_vocabulary_or_the_features():
    tokens = list("abc")
    softmax = Step("layers.0.attn: head 0: softmax", "", np.eye(3))
    assert card_labels(softmax, (3, 3), tokens, None) == (tokens, tokens)
    logits = Step("head: logits", "", np.zeros((3, 5)))
    vocab = ["v0", "v1", "v2", "v3", "v4", "v5"]
    assert card_labels(logits, (3, 5), tokens, vocab) == (tokens, vocab[:5])
    assert card_labels(logits, (1, 5), tokens, vocab) == (["p"], vocab[:5])
    assert card_labels(logits, (3, 5), tokens, vocab[:4]) == (tokens, list("01234"))
    assert card_labels(Step("layers.0.ffn: out", "", np.zeros((3, 2))), (3, 2), tokens,
                       None) == (tokens, ["0", "1"])
    assert card_labels(softmax, (4, 4), tokens, None) == (None, None)   # rows unnamed


def test_a_cards_scale_starts_at_zero_for_weights_ids_and_masks_and_is_cropped():
    def kind(name, value, step_kind="vector"):
        return card_kind(Step(name, "", value, kind=step_kind), np.asarray(value))
    assert kind("sampling: probabilities", np.ones(4), "sampling") == "sequential"
    assert kind("layers.0.attn: head 0: softmax", np.eye(2)) == "sequential"
    assert kind("embed: token ids", np.array([[1, 2]])) == "sequential"
    assert kind("layers.0.attn: head 0: mask", np.eye(2, dtype=bool)) == "sequential"
    assert kind("layers.0.ffn: out", np.array([[-1.0, 2.0]])) == "diverging"
    big = card_matrix(np.zeros((100, 4, 100)))
    assert big.shape == (MAX_ROWS_SHOWN, MAX_COLS_SHOWN) and big.dtype == np.float64
    assert card_matrix(np.arange(3)).tolist() == [[0.0, 1.0, 2.0]]    # a vector: one row


def test_an_encoder_decoders_source_blocks_are_labelled_with_the_source_and_pick_nothing():
    tokens = {"source": list("abc"), "target": list("xy")}
    assert stage_tokens("src_embed", tokens, "target", 1) == (list("abc"), -1)
    assert stage_tokens("encoder.0.attn", tokens, "target", 1) == (list("abc"), -1)
    assert stage_tokens("decoder.0.cross", tokens, "target", 1) == (list("xy"), 1)
    only = {"tokens": list("abc")}          # a decoder alone: one stream, whatever the name
    assert stage_tokens("encoder.0.attn", only, "tokens", 2) == (list("abc"), 2)


def test_the_logits_columns_are_named_by_a_small_vocabulary_only():
    def strings(ids):
        return [f"t{i}" for i in ids]
    assert vocab_labels(strings, 3) == ["t0", "t1", "t2"]
    assert vocab_labels(strings, MAX_COLS_SHOWN) == strings(range(MAX_COLS_SHOWN))
    assert vocab_labels(strings, MAX_COLS_SHOWN + 1) is None
    assert vocab_labels(None, 3) is None

    def broken(ids):
        raise KeyError(ids[-1])
    assert vocab_labels(broken, 3) is None  # a tokenizer that cannot name them: ids instead
