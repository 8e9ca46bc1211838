"""The sentences Explain writes, computed from its numbers without Qt
(gui/training/explain_lines.py): whose weights the view reads, the picked token's line on a
step's card, and each cell of the logit lens. Each flips with the data it is computed from; the widgets that show them:
test_explain_state.py and test_explain_view.py."""
from __future__ import annotations

import numpy as np

from types import SimpleNamespace

from tfstudio.gui.training.explain_lines import (attention_choices, embedding_note,
                                                layers_title, lens_cell, picked_line,
                                                picked_text, replay_hint, replay_index,
                                                rescored, source_caption, span_positions,
                                                stage_line, token_choices, walk_buttons)


def test_the_caption_names_the_run_and_the_step_of_the_weights_in_each_state():
    assert source_caption("", None) == "Weights not from a run (fresh, or loaded by hand)"
    assert source_caption("tiny-gpt · 09:41:03", None) == \
        "tiny-gpt · 09:41:03 · weights of an unknown step"
    assert source_caption("tiny-gpt · 09:41:03", 300) == \
        "tiny-gpt · 09:41:03 · the weights of step 300"
    assert source_caption("", 1200) == "Weights not from a run · the weights of step 1,200"
    # a look a training run took: its latest, not weights loaded in the app
    assert source_caption("tiny-gpt · 10:00:00", 1200, training=True) == \
        "tiny-gpt · 10:00:00 · step 1,200, its latest look while it trains"
    assert source_caption("", 40, training=True).startswith("The run training · step 40,")


def test_a_probability_cards_line_names_the_likeliest_next_tokens_in_order():
    def names(ids):
        return ["tok" + str(i) for i in ids]

    p = np.array([0.1, 0.6, 0.0, 0.3])
    assert picked_line(p, "sampling", list("abcd"), 3, names) == \
        "likeliest next: tok1 0.600 · tok3 0.300 · tok0 0.100"  # the 0 is not a candidate
    p = np.array([0.5, 0.2, 0.00002, 0.29998])  # the order flips; a tiny one is not "0.000"
    assert picked_line(p, "sampling", list("abcd"), 3, names) == \
        "likeliest next: tok0 0.500 · tok3 0.300 · tok1 0.200 · tok2 2.0e-05"


def test_a_steps_line_gives_the_picked_tokens_own_numbers():
    value = np.arange(30, dtype=float).reshape(3, 10) / 4  # 3 positions, 10 features
    assert picked_line(value, "vector", [" ", "b", "c"], 0) == \
        "at ␣ (position 0): 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, … (10 values)"
    assert picked_line(value, "vector", [" ", "b", "c"], 2).startswith("at c (position 2): 5, ")
    assert picked_line(value[:, :3], "vector", list("abc"), 1) == "at b (position 1): 2.5, 2.75, 3"
    assert picked_line(value[:, 0], "vector", list("abc"), 1) == "at b (position 1): 2.5"
    assert picked_line(value, "vector", list("abc"), None) == ""  # no token picked: no line


def lens(last_layer_ids):
    """A logit lens of 3 layers over 2 positions, each cell's 2 likeliest tokens; the last
    layer's likeliest ids (the model's answers) are ``last_layer_ids``."""
    ids = np.array([[[5, 6], [7, 8]], [[6, 5], [7, 8]], [list(last_layer_ids[:1]) + [9],
                                                          list(last_layer_ids[1:]) + [9]]])
    names = {5: " ", 6: "b", 7: "c", 8: "d", 9: "e"}
    probs = np.array([[[0.30, 0.20], [0.50, 0.10]], [[0.60, 0.30], [0.70, 0.10]],
                      [[0.90, 0.05], [0.95, 0.01]]])
    return SimpleNamespace(layers=["embed", "layers.0", "layers.1"], tokens=["a", "b"],
                           top_ids=ids, top_probs=probs,
                           top_tokens=[[[names[int(i)] for i in cell] for cell in row]
                                       for row in ids])


def test_a_lens_cell_names_its_token_and_is_bold_where_it_is_already_the_answer():
    answer_5 = lens([5, 7])
    first = lens_cell(answer_5, 0, 0)
    assert first.text == "␣ 0.30" and first.p == 0.30
    assert first.answer and first.tooltip == "␣  0.300\nb  0.200\n(the model's answer here)"
    assert not lens_cell(answer_5, 1, 0).answer          # layer 0 still says "b"
    answer_6 = lens([6, 7])                              # the model's answer flips to "b"
    assert not lens_cell(answer_6, 0, 0).answer and lens_cell(answer_6, 1, 0).answer
    assert "answer" not in lens_cell(answer_6, 0, 0).tooltip
    assert all(lens_cell(answer_6, 2, c).answer for c in range(2))  # the last layer: the answer


def test_a_lens_cell_is_written_in_white_once_it_is_shaded_darker_than_0_6():
    cells = lens([5, 7])
    assert [lens_cell(cells, 1, c).white_text for c in range(2)] == [False, True]  # 0.6, 0.7
    assert lens_cell(cells, 2, 0).white_text and not lens_cell(cells, 0, 1).white_text


def test_the_token_picker_lists_each_position_with_its_token_made_visible():
    assert token_choices(["a", " ", "\n"]) == [("0: a", 0), ("1: ␣", 1), ("2: ↵", 2)]
    assert token_choices([]) == []


def test_the_head_picker_stops_at_the_fewest_heads_and_the_layer_picker_lists_each_layer():
    def attention(heads):
        return SimpleNamespace(heads=heads)
    modules = [(("layers", 1, "attn"), attention(4)), (("layers", 0, "attn"), attention(4)),
               (("layers", 0, "cross"), attention(2))]
    assert attention_choices(modules) == (1, [("every layer", None), ("layer 0", 0),
                                              ("layer 1", 1)])
    assert attention_choices([(("attn",), attention(1))]) == (0, [("every layer", None)])
    assert attention_choices([]) == (0, [("every layer", None)])   # no attention at all


def test_a_stages_summary_and_a_steps_tensor_write_the_same_line_for_the_same_numbers():
    """The line under a stage (its summary) and under a step's heatmap (its whole tensor) are
    one sentence from two shapes of the same numbers."""
    tokens = ["a", " ", "c"]
    value = np.arange(30, dtype=float).reshape(3, 10) / 4  # a row of 10 per token
    stage = {"kind": "vector", "shape": [3, 10], "picked": value[1].tolist()}
    line = "at ␣ (position 1): 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, … (10 values)"
    assert picked_text(stage, tokens, 1, []) == picked_line(value, "vector", tokens, 1) == line
    per_token = np.array([0.123456, 7.0, 8.0])                        # one number per token
    stage = {"kind": "scalar", "shape": [3], "picked": [0.123456]}
    assert picked_text(stage, tokens, 0, []) == picked_line(per_token, "scalar", tokens, 0) \
        == "at a (position 0): 0.1235"
    probabilities = np.array([0.1, 0.6, 0.0, 0.3])
    stage = {"kind": "sampling", "top_ids": [1, 3, 0, 2], "top_values": [0.6, 0.3, 0.1, 0.0]}
    names = ["tok1", "tok3", "tok0", "tok2"]
    assert picked_text(stage, tokens, 2, names) == picked_line(
        probabilities, "sampling", tokens, 2, lambda ids: [f"tok{i}" for i in ids]) == \
        "likeliest next: tok1 0.600 · tok3 0.300 · tok0 0.100"
    assert picked_text({"kind": "vector", "shape": [3, 10], "picked": [1.0]}, tokens, 3, []) \
        == picked_line(value, "vector", tokens, 3) == ""             # no token at position 3


def test_the_replay_hint_counts_the_kept_checkpoints_and_says_how_to_keep_more():
    assert replay_hint([]) == "This run kept no checkpoint to replay."
    one = replay_hint([1_200])
    assert one.startswith("The run kept one checkpoint (step 1,200): train with ")
    assert "--checkpoint-every N --keep-checkpoints K" in one
    assert replay_hint([4, 8, 12]).startswith("3 checkpoints: drag the slider")


def test_a_training_step_replays_the_newest_map_kept_at_or_before_it():
    steps = [4, 8, 12]
    assert [replay_index(steps, s) for s in (0, 4, 7, 8, 11, 12, 100)] == [0, 0, 0, 1, 1, 2, 2]


def test_the_embeddings_note_says_what_the_pca_keeps_and_names_the_picked_tokens_nearest():
    note = embedding_note(40, 1_200, (0.4123, 0.2))
    assert note == ("PCA of 40 rows of the token embedding table at step 1,200: the axes keep "
                    "41% and 20% of their variance. Tokens used alike during training end up "
                    "close.")
    assert "at the loaded weights:" in embedding_note(40, None, (0.4, 0.2))
    picked = embedding_note(40, 8, (0.4, 0.2), " ", [("a", 0.912), ("\n", 0.5)])
    assert picked.endswith(" Nearest to ␣ by cosine: a (0.91), ↵ (0.50) (␣ is the larger "
                           "point; pick another Token above to follow it).")


def test_the_walk_names_its_stage_and_offers_previous_and_next_only_where_there_is_one():
    assert stage_line(0, 12, "embed: token ids") == "Stage 1 of 12: embed: token ids"
    assert [walk_buttons(s, 3) for s in range(3)] == [(False, True), (True, True), (True, False)]
    assert walk_buttons(0, 1) == (False, False)     # one stage: nowhere to go
    assert layers_title("layers.1.ffn: activation", 4) == (
        "“activation” in each of the 4 layers, side by side (the one explained framed):")


def test_a_span_scores_positions_from_1_and_is_scored_again_only_with_a_block_off():
    assert span_positions(17) == (1, 16)        # position 0 has nothing to predict it from
    assert span_positions(2) == (1, 1) and span_positions(1) == span_positions(0) == (1, 1)
    assert rescored(["layers.0.attn"]) and not rescored([])
