"""A block title too long for its block at the smallest size wraps onto a second line
rather than being cut ("Grouped-query attenti…")."""
from __future__ import annotations

from PySide6.QtGui import QFontMetricsF

from tfstudio.gui.block_drawing import PAD
from tfstudio.gui.title_fit import fitted_title
from tfstudio.presets import load_preset

SMALL_TITLE = "Grouped-query attention"    # two lines in a small block
LONG_TITLE = "Language-model head tied to embeddings"  # two lines in a header


def _fits(font, lines, width) -> bool:
    metrics = QFontMetricsF(font)
    return all(metrics.horizontalAdvance(line) <= width + 0.5 for line in lines)


def test_a_title_that_fits_stays_on_one_line(qapp):
    font, lines = fitted_title("Self-attention", 12, 114.0, floor=10)
    assert lines == ["Self-attention"] and font.pixelSize() == 12


def test_a_long_title_wraps_between_words_at_the_smallest_size(qapp):
    font, lines = fitted_title(SMALL_TITLE, 12, 114.0, floor=10)
    assert lines == ["Grouped-query", "attention"] and font.pixelSize() == 10
    assert _fits(font, lines, 114.0)


def test_one_word_too_long_for_a_line_breaks_inside_it(qapp):
    word = "Supercalifragilisticattention"
    font, lines = fitted_title(word, 12, 80.0, floor=10)
    assert len(lines) == 2 and "".join(lines) == word and _fits(font, lines, 80.0)


def test_a_title_longer_than_two_lines_is_elided_at_the_end_of_the_second(qapp):
    font, lines = fitted_title("word\n" * 2_000, 12, 114.0, floor=10)
    assert len(lines) == 2 and lines[1].endswith("…") and _fits(font, lines, 114.0)


def test_a_long_title_in_an_open_layer_is_drawn_on_two_lines(make_window):
    graph = load_preset("tiny-gpt")
    graph.node("layers").subgraph.node("attn").title = SMALL_TITLE
    w = make_window(graph)
    w.resize(1366, 768)
    lines = w.scene.node_items["layers"].inner_title_lines()["attn"]
    assert lines == ["Grouped-query", "attention"]
    assert not w.grab().isNull()  # it paints


def test_a_long_title_on_a_block_header_wraps_within_the_header(make_window):
    graph = load_preset("tiny-gpt")
    graph.node("head").title = LONG_TITLE
    w = make_window(graph)
    item = w.scene.node_items["head"]
    room = item.width - 2 * PAD - 20
    font, lines = fitted_title(item.node.label, 13, room, floor=11)
    assert len(lines) == 2 and " ".join(lines) == LONG_TITLE and _fits(font, lines, room)
    from tfstudio.graph.layout import HEADER_H
    assert 2 * QFontMetricsF(font).lineSpacing() <= HEADER_H
