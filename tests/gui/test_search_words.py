"""Search by the words of the field: each word a student or researcher types finds the block
that has it first; whole words outrank letters that merely appear in order; a word naming a
switch's setting also offers that setting, which sets it in one undo step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tfstudio.graph import Document, Graph, all_specs, graph_at
from tfstudio.graph.switches import (activation_kind, attention_kind, ffn_kind, norm_kind,
                                     placement, positional_scheme)
from tfstudio.gui.editor_state import layer_target
from tfstudio.gui.fuzzy import fuzzy_score, rank_blocks
from tfstudio.gui.layer_switches import NO_LAYER, setting_edit
from tfstudio.gui.search_results import search_results
from tfstudio.presets import load_preset

SPECS = [s for s in all_specs() if not s.internal]  # what the search offers

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


def _layer(root):
    """The layer group a setting from the search changes with nothing selected at the top
    level, and its name (as the editor window asks gui.editor_state)."""
    target = layer_target(root, root, (), [])
    return target, graph_at(root, target[0]).node(target[1]).label if target else None


def _block_types(rows) -> list[str]:
    return [r.block_type for r in rows if r.block_type]


def test_a_setting_word_puts_the_setting_above_the_blocks():
    _, layer = _layer(load_preset("tiny-gpt"))
    rows = search_results("gqa", SPECS, layer)
    assert "Set decoder layer's attention to GQA" in rows[0].text   # the setting first
    assert rows[0].setting == ("attention", "gqa")
    assert _block_types(rows)[0] == "attention"                     # then the block
    assert "Set the model's positions to RoPE" in search_results("rope", SPECS, layer)[0].text
    attention = search_results("attention", SPECS, layer)           # no setting is named
    assert not any(r.text.startswith("⚙") or r.setting for r in attention)   # "attention"


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
def test_enter_on_a_setting_word_applies_the_setting_in_one_undo_step(word):
    """Enter takes the top row: the setting's edit (layer_switches.setting_edit, as the
    window applies it) sets it, adds no block and is undone in one step."""
    doc = Document(load_preset("tiny-gpt"))
    before = list(doc.root.nodes)
    target, layer = _layer(doc.root)
    top = search_results(word, SPECS, layer)[0]
    assert top.setting is not None, (word, top.text)
    doc.execute(setting_edit(doc.root, *top.setting, target))
    assert ENTER_APPLIES[word](doc.root), word
    assert set(doc.root.nodes) <= set(before)                    # no block was added
    assert doc.undo() and not doc.undo()                         # one step
    assert not ENTER_APPLIES[word](doc.root)


def test_enter_in_the_search_popup_applies_the_setting_on_top(make_window):
    """The popup shows search_results' rows and Enter applies the top one, on the layer
    the window targets, in one undo step."""
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    QTest.keyClicks(w.search.edit, "gqa")
    assert w.search.result_texts()[0] == "⚙ Set decoder layer's attention to GQA"
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    assert ENTER_APPLIES["gqa"](w.session.root)
    assert w.session.undo() and not w.session.undo()
    assert not ENTER_APPLIES["gqa"](w.session.root)


def test_enter_on_a_block_word_adds_the_block(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.open_search(QPointF(-2000, -2000))
    QTest.keyClicks(w.search.edit, "dropout")
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    added = set(w.session.root.nodes) - set(load_preset("tiny-gpt").nodes)
    assert [w.session.root.node(n).type for n in added] == ["dropout"]


@pytest.mark.parametrize("word", ["rope", "moe", "norm", "gqa"])
def test_results_that_spell_no_word_of_the_query_are_left_out(word):
    _, layer = _layer(load_preset("tiny-gpt"))
    for row in search_results(word, SPECS, layer):
        spec = row.spec
        words = (f"{spec.title} {spec.type} {spec.family} {spec.keywords} {spec.description}"
                 if spec else row.text)
        assert word in words.lower(), (word, row.text)


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


def test_layer_settings_need_a_layer_to_set():
    target, layer = _layer(Graph())                     # nothing to set a layer setting on
    assert target is None and layer is None
    rows = search_results("gqa", SPECS, layer)
    assert not any("attention to" in r.text for r in rows)
    assert _block_types(rows)[0] == "attention"
    assert any("attention to" in r.text for r in search_results("gqa", SPECS, "my layer"))


def test_a_wire_let_go_in_empty_space_searches_blocks_not_settings():
    """A loose wire wants a block to wire to it: the search for it offers no setting."""
    _, layer = _layer(load_preset("tiny-gpt"))
    loose = search_results("gqa", SPECS, layer, settings=False)
    assert loose and all(r.setting is None and r.block_type for r in loose)
    assert search_results("gqa", SPECS, layer)[0].setting        # the canvas's search does


def test_a_setting_the_query_only_starts_comes_right_after_the_best_block():
    """"swi" starts SwiGLU but names no setting whole: Enter still adds the block it best
    finds, and the setting is the next row; typed whole, "swiglu" puts the setting on top."""
    _, layer = _layer(load_preset("tiny-gpt"))
    started = search_results("swi", SPECS, layer)
    assert started[0].block_type == "feed_forward"
    assert started[1].setting == ("activation", "swiglu")
    assert search_results("swiglu", SPECS, layer)[0].setting == ("activation", "swiglu")


def test_a_layer_setting_with_no_layer_to_set_is_refused_saying_so():
    """Enter on "gqa" in a model of several layer groups, none chosen: no edit, a sentence;
    the model's settings need no layer."""
    t5 = load_preset("tiny-t5")
    assert layer_target(t5, t5, (), []) is None
    with pytest.raises(ValueError, match=NO_LAYER):
        setting_edit(t5, "attention", "gqa", None)
    doc = Document(t5)
    doc.execute(setting_edit(doc.root, "position", "rope", None))
    assert positional_scheme(doc.root) == "rope"
