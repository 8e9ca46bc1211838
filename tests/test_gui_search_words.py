"""Search by the words of the field: each word a student or researcher types finds the block
that has it first; whole words outrank letters that merely appear in order; a word naming a
switch's setting also offers that setting, which sets it in one undo step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tfstudio.graph import Graph, all_specs
from tfstudio.graph.switches import attention_kind, norm_kind, positional_scheme
from tfstudio.gui.fuzzy import fuzzy_score, rank_blocks
from tfstudio.presets import load_preset

FIRST = {
    "rope": "attention", "rotary": "attention", "alibi": "attention",
    "sinusoidal": "positional_encoding", "learned": "positional_encoding",
    "gqa": "attention", "mqa": "attention", "mha": "attention", "kv": "attention",
    "swiglu": "feed_forward", "geglu": "feed_forward", "gelu": "feed_forward",
    "relu": "feed_forward", "rmsnorm": "norm", "layernorm": "norm", "pre-norm": "norm",
    "post-norm": "norm", "moe": "moe", "experts": "moe", "router": "moe",
    "causal": "attention", "bidirectional": "attention", "sliding window": "attention",
    "cross": "cross_attention", "transformer": "group",
}


@pytest.mark.parametrize("word, block", sorted(FIRST.items()))
def test_each_word_of_the_field_finds_the_right_block_first(word, block):
    specs = [s for s in all_specs() if not s.internal]
    assert rank_blocks(word, specs)[0].type == block


def test_whole_words_outrank_letters_scattered_in_order():
    # "rope" is spelled by the letters of "expe(r)ts (r)o(u)ter..." but is no word of it
    scattered = fuzzy_score("rope", "mixture of experts router")
    assert scattered is not None and scattered < 40
    assert fuzzy_score("rope", "attention rope rotary") > fuzzy_score("rope", "ropes") > scattered
    assert fuzzy_score("kv", "gqa kv heads") > fuzzy_score("kv", "kvcache")
    assert fuzzy_score("sliding window", "sliding window local") > fuzzy_score(
        "sliding window", "slid in gwindow")


def test_a_setting_word_offers_the_setting_after_the_block(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    w.search.edit.setText("gqa")
    texts = w.search.result_texts()
    assert w.search.result_types()[0] == "attention"        # the block first
    assert "Set decoder layer's attention to GQA" in texts[1]
    w.search.edit.setText("rope")
    assert "Set the model's positions to RoPE" in w.search.result_texts()[1]
    w.search.edit.setText("attention")                       # no setting is named "attention"
    assert not any(t.startswith("⚙") for t in w.search.result_texts())


def test_choosing_a_setting_sets_it_in_one_undo_step(make_window):
    w = make_window(load_preset("tiny-gpt"))
    for word, check in (("gqa", lambda r: attention_kind(r.node("layers").subgraph) == "gqa"),
                        ("rotary", lambda r: positional_scheme(r) == "rope"),
                        ("rmsnorm", lambda r: norm_kind(r) == "rmsnorm")):
        w.open_search(QPointF(-2000, -2000))
        w.search.edit.setText(word)
        QTest.keyClick(w.search.edit, Qt.Key_Down)           # from the block to the setting
        QTest.keyClick(w.search.edit, Qt.Key_Return)
        assert check(w.session.root), word
    steps = 0
    while w.session.undo():
        steps += 1
    assert steps == 3


def test_layer_settings_need_a_layer_to_set(make_window):
    w = make_window(Graph())
    w.open_search(QPointF(0, 0))
    w.search.edit.setText("gqa")
    assert not any("attention to" in t for t in w.search.result_texts())
    assert w.search.result_types()[0] == "attention"
