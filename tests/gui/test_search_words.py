"""Search by the words of the field: each word a student or researcher types finds the block
that has it first; whole words outrank letters that merely appear in order; a word naming a
switch's setting also offers that setting, which sets it in one undo step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tfstudio.graph import Graph, all_specs
from tfstudio.graph.switches import (activation_kind, attention_kind, ffn_kind, norm_kind,
                                     placement, positional_scheme)
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


def test_a_setting_word_puts_the_setting_above_the_blocks(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    w.search.edit.setText("gqa")
    texts = w.search.result_texts()
    assert "Set decoder layer's attention to GQA" in texts[0]   # the setting first
    assert w.search.result_types()[0] == "attention"             # then the block
    w.search.edit.setText("rope")
    assert "Set the model's positions to RoPE" in w.search.result_texts()[0]
    w.search.edit.setText("attention")                       # no setting is named "attention"
    assert not any(t.startswith("⚙") for t in w.search.result_texts())


def _blocks(root) -> int:
    return sum(1 for _ in root.walk())


# each query, typed in the search, and what Enter must have done on tiny-gpt
ENTER_APPLIES = {
    "rope": lambda r: positional_scheme(r) == "rope",
    "gqa": lambda r: attention_kind(r.node("layers").subgraph) == "gqa",
    "swiglu": lambda r: activation_kind(r.node("layers").subgraph) == "swiglu",
    "rmsnorm": lambda r: norm_kind(r) == "rmsnorm",
    "post-norm": lambda r: placement(r.node("layers").subgraph) == "post",
    "moe": lambda r: ffn_kind(r.node("layers").subgraph) == "moe",
}


@pytest.mark.parametrize("word", sorted(ENTER_APPLIES))
def test_enter_on_a_setting_word_applies_the_setting_in_one_undo_step(make_window, word):
    w = make_window(load_preset("tiny-gpt"))
    before = list(w.session.root.nodes)
    w.open_search(QPointF(-2000, -2000))
    QTest.keyClicks(w.search.edit, word)
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    assert ENTER_APPLIES[word](w.session.root), word
    assert set(w.session.root.nodes) <= set(before)              # no block was added
    assert w.session.undo() and not w.session.undo()              # one step
    assert not ENTER_APPLIES[word](w.session.root)


def test_enter_on_a_block_word_adds_the_block(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    QTest.keyClicks(w.search.edit, "dropout")
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    added = set(w.session.root.nodes) - set(load_preset("tiny-gpt").nodes)
    assert [w.session.root.node(n).type for n in added] == ["dropout"]


@pytest.mark.parametrize("word", ["rope", "moe", "norm", "gqa"])
def test_results_that_spell_no_word_of_the_query_are_left_out(make_window, word):
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    w.search.edit.setText(word)
    for text in w.search.result_texts():
        spec = next((s for s in all_specs() if s.title == text), None)
        words = (f"{spec.title} {spec.type} {spec.family} {spec.keywords} {spec.description}"
                 if spec else text)
        assert word in words.lower(), (word, text)


def test_the_palette_field_finds_settings_and_enter_applies_an_exact_one(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.palette.search.setText("rope")
    assert "Set the model's positions to RoPE" in w.palette.visible_settings()[0]
    QTest.keyClick(w.palette.search, Qt.Key_Return)
    assert positional_scheme(w.session.root) == "rope"
    w.palette.search.setText("dropout")
    assert w.palette.visible_settings() == []
    QTest.keyClick(w.palette.search, Qt.Key_Return)
    assert any(n.type == "dropout" for n in w.session.root.nodes.values())


def test_layer_settings_need_a_layer_to_set(make_window):
    w = make_window(Graph())
    w.open_search(QPointF(0, 0))
    w.search.edit.setText("gqa")
    assert not any("attention to" in t for t in w.search.result_texts())
    assert w.search.result_types()[0] == "attention"
