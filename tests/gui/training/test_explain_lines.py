"""The sentences Explain writes, computed from its numbers without Qt
(gui/training/explain_lines.py): whose weights the view reads, and the picked token's line on a
step's card. Each flips with the data it is computed from; the widgets that show them:
test_explain_state.py and test_explain_view.py."""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.explain_lines import picked_line, source_caption


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
