"""A long probe text keeps the attention heatmap's token labels readable at 1366x768: the map
shows a window of readable cells and every token is a scroll away."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

N_TOKENS = 100


def long_snapshot(n: int = N_TOKENS) -> dict:
    rng = np.random.default_rng(1)
    allowed = np.tril(np.ones((n, n), bool))
    w = np.where(allowed, rng.random((4, n, n)), 0.0)
    w /= w.sum(-1, keepdims=True)
    tokens = [f"w{i}" for i in range(n)]  # every label different, so each one can be found
    return {"step": 10, "text": " ".join(tokens), "tokens": {"tokens": tokens},
            "attention": {"layers.0.attn": {"weights": w, "allowed": allowed,
                                            "query_role": "tokens", "key_role": "tokens",
                                            "cross": False}}}


def shown_heatmap(window, qtbot):
    window.training.show_panel()
    panel = window.training.panel
    panel.tabs.setCurrentWidget(panel.attention)
    panel.attention.show_snapshot(long_snapshot())
    qtbot.wait(100)
    QApplication.processEvents()
    heatmap = panel.attention.heatmap
    assert heatmap.isVisible() and len(heatmap.rows) == N_TOKENS
    return heatmap


def wheel(widget, dy: int, modifiers=Qt.NoModifier) -> None:
    at = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(at, QPointF(widget.mapToGlobal(at.toPoint())), QPoint(0, 0),
                        QPoint(0, dy), Qt.NoButton, modifiers, Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


@pytest.mark.slow
def test_a_100_token_probe_keeps_labels_readable_and_every_token_reachable(window, qtbot):
    heatmap = shown_heatmap(window, qtbot)
    assert heatmap.label_font_px() >= 9
    assert heatmap.windowed  # 100 readable rows do not fit in a laptop's height
    _, cw, ch = heatmap._layout(heatmap.rect().toRectF())
    assert ch >= 9 and cw >= 9
    for bar, visible in ((heatmap.vbar, heatmap.visible_rows),
                         (heatmap.hbar, heatmap.visible_cols)):
        assert bar.isVisible()
        assert bar.maximum() + bar.pageStep() == N_TOKENS  # the bar spans the whole text
        seen: set[int] = set()
        for value in range(bar.minimum(), bar.maximum() + 1):
            bar.setValue(value)
            assert heatmap.label_font_px() >= 9
            seen.update(visible())
        assert seen == set(range(N_TOKENS))  # every token is reachable
    heatmap.grab()  # paints the last window without error


def test_the_wheel_moves_along_the_diagonal_and_hover_names_the_shown_cell(window, qtbot):
    heatmap = shown_heatmap(window, qtbot)
    heatmap.scroll_to(0, 0)
    wheel(heatmap, -120)  # one notch down: rows and columns move together
    assert heatmap.first_row == heatmap.first_col == 3
    assert heatmap.vbar.value() == 3 and heatmap.hbar.value() == 3
    wheel(heatmap, -120, Qt.ShiftModifier)  # Shift: the keys only
    assert (heatmap.first_row, heatmap.first_col) == (3, 6)
    heatmap.scroll_to(10_000, 10_000)  # past the end: clamped to the last window
    assert heatmap.visible_rows()[-1] == N_TOKENS - 1
    assert heatmap.visible_cols()[-1] == N_TOKENS - 1
    area, cw, ch = heatmap._layout(heatmap.rect().toRectF())
    row, col = heatmap.cell_at(QPointF(area.left() + cw / 2, area.top() + ch / 2))
    assert (row, col) == (heatmap.visible_rows()[0], heatmap.visible_cols()[0])
    assert "of 100×100" in heatmap.window_caption()


def test_a_short_text_shows_the_whole_map_without_scroll_bars(qtbot):
    from tfstudio.gui.training.heatmap import Heatmap
    heatmap = Heatmap(scrollable=True)
    qtbot.addWidget(heatmap)
    heatmap.resize(700, 500)
    heatmap.show()
    tokens = list("abcdefghij")
    heatmap.set_data(np.tril(np.ones((10, 10))), tokens, tokens)
    assert not heatmap.windowed and not heatmap.vbar.isVisible()
    assert list(heatmap.visible_rows()) == list(range(10)) and heatmap.label_font_px() >= 9


# ---------------------------------------------------------------------- the window, without Qt
def test_a_window_holds_as_many_cells_as_fit_and_stays_inside_the_map():
    from tfstudio.gui.training.heatmap_window import fitted
    window = fitted(0, 0, 30, 40, N_TOKENS, N_TOKENS)        # 30 rows and 40 columns fit
    assert (window.rows, window.cols) == (range(0, 30), range(0, 40)) and window.windowed
    last = fitted(10_000, 10_000, 30, 40, N_TOKENS, N_TOKENS)  # past the end: the last window
    assert (last.rows, last.cols) == (range(70, 100), range(60, 100))
    first = fitted(-5, -1, 30, 40, N_TOKENS, N_TOKENS)
    assert (first.first_row, first.first_col) == (0, 0)
    small = fitted(3, 3, 30, 40, 10, 10)                    # all of a short text fits
    assert (small.rows, small.cols) == (range(10), range(10)) and not small.windowed
    assert fitted(0, 0, 0, 0, N_TOKENS, N_TOKENS).n_rows == 1  # never less than one cell
    # scrolled one row at a time, every token comes into view
    seen = set()
    for first in range(N_TOKENS):
        seen.update(fitted(first, 0, 30, 40, N_TOKENS, N_TOKENS).rows)
    assert seen == set(range(N_TOKENS))


def test_the_wheel_moves_down_the_text_along_the_diagonal_of_a_token_map():
    from tfstudio.gui.training.heatmap_window import WHEEL_ROWS, fitted, wheel_target
    window = fitted(10, 20, 30, 40, N_TOKENS, N_TOKENS)
    down = WHEEL_ROWS
    assert wheel_target(window, 0, -120, False, True) == (10 + down, 20 + down)  # a token map
    assert wheel_target(window, 0, -120, False, False) == (10 + down, None)      # keys ≠ queries
    assert wheel_target(window, 0, 120, False, True) == (10 - down, 20 - down)   # up
    assert wheel_target(window, 0, -120, True, True) == (None, 20 + down)        # Shift: columns
    assert wheel_target(window, -120, 0, False, True) == (None, 20 + down)       # sideways
    assert wheel_target(window, 0, -10, False, True) == (11, 21)  # a touchpad's nudge: one row
    assert wheel_target(window, 0, 10, False, True) == (9, 19)


def test_the_caption_and_the_cell_under_the_mouse_count_from_the_first_row_shown():
    from tfstudio.gui.training.heatmap_window import cell_under, fitted
    window = fitted(10_000, 0, 30, 40, N_TOKENS, N_TOKENS)
    assert window.caption().startswith("rows 71–100 and columns 1–40 of 100×100 shown")
    area = (50.0, 20.0, 50.0 + 40 * 14, 20.0 + 30 * 14)      # 14-px cells from (50, 20)
    assert cell_under(window, 50 + 7, 20 + 7, area, 14, 14) == (70, 0)  # the first cell shown
    assert cell_under(window, 50 + 14 * 3 + 1, 20 + 14 * 2 + 1, area, 14, 14) == (72, 3)
    assert cell_under(window, 10, 20 + 7, area, 14, 14) == (70, -2)  # over its row's label
    assert cell_under(window, area[2] + 5, 20 + 7, area, 14, 14) == (70, -1)  # right of them
    assert cell_under(window, 50 + 7, 5, area, 14, 14) == (-1, 0)    # above the cells


def test_a_scroll_bar_shows_only_along_hidden_cells_and_spans_the_whole_text():
    from tfstudio.gui.training.heatmap_window import ScrollBar, fitted, scroll_bars
    window = fitted(10, 20, 30, 40, N_TOKENS, N_TOKENS)
    vertical, horizontal = scroll_bars(window, windowed=True)
    assert vertical == ScrollBar(True, N_TOKENS - 30, 30, 10)   # maximum + page: all 100
    assert horizontal == ScrollBar(True, N_TOKENS - 40, 40, 20)
    rows_only = fitted(0, 0, 30, 200, N_TOKENS, N_TOKENS)       # every column fits
    assert [bar.needed for bar in scroll_bars(rows_only, True)] == [True, False]
    assert scroll_bars(window, windowed=False) == (ScrollBar(False), ScrollBar(False))
    short = fitted(0, 0, 30, 40, 10, 10)
    assert scroll_bars(short, short.windowed) == (ScrollBar(False), ScrollBar(False))
