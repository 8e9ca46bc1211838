"""Colour scales that do not mislead (issue 27, item 3): attention weights are probabilities,
drawn on a fixed 0-1 scale unless per-map contrast is asked for by name; a bias that is never
positive gets a one-sided scale; a learned position table shows the rows training reached and
marks the others."""
from __future__ import annotations

import numpy as np
import pytest

from tfstudio.gui.training.attention_view import AttentionView
from tfstudio.gui.training.colours import colour_ramp
from tfstudio.gui.training.heatmap_scale import scale_range
from tfstudio.gui.training.positions_view import PositionsView


def test_scale_ranges_start_at_zero_not_at_the_data_minimum():
    weights = np.array([[0.05, 0.18], [0.11, 0.07]])
    assert scale_range(weights, "sequential") == (0.0, pytest.approx(0.18))
    assert scale_range(np.array([-0.19, 0.082]), "diverging") == (-0.19, 0.19)
    bias = np.array([[0.0, -1.5], [-16.0, 0.0]])
    assert scale_range(bias, "negative") == (-16.0, 0.0)
    assert scale_range(np.array([np.nan, -np.inf, 0.3]), "sequential") == (0.0, 0.3)


def test_the_negative_ramp_is_white_at_zero_and_darkest_at_its_most_negative_end():
    white, dark = colour_ramp(np.array([1.0, 0.0]), "negative")  # 1: the scale's 0
    assert tuple(white) == tuple(colour_ramp(np.array([0.0]), "sequential")[0])
    assert tuple(dark) == tuple(colour_ramp(np.array([1.0]), "sequential")[0])


def encoder_look(peak: float = 0.18, tokens: int = 6, heads: int = 2) -> dict:
    """A bidirectional look whose rows sum to 1 and whose largest weight is ``peak``."""
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 1.0, size=(heads, tokens, tokens))
    weights /= weights.sum(-1, keepdims=True)
    weights[:, 0, :] = (1 - peak) / (tokens - 1)
    weights[:, 0, 0] = peak
    weights = np.minimum(weights, peak)
    weights /= weights.sum(-1, keepdims=True)
    names = [f"t{i}" for i in range(tokens)]
    return {"step": 3, "text": " ".join(names), "tokens": {"tokens": names},
            "attention": {"encoder.0.attn": {
                "weights": weights, "allowed": np.ones((tokens, tokens), bool),
                "query_role": "tokens", "key_role": "tokens"}}}


def test_attention_is_drawn_on_zero_to_one_unless_contrast_is_asked_for(qtbot):
    view = AttentionView()
    qtbot.addWidget(view)
    look = encoder_look()
    top = float(look["attention"]["encoder.0.attn"]["weights"].mean(0).max())
    view.show_snapshot(look)
    assert view.heatmap.value_range == (0.0, 1.0)
    # the darkest cell of a flat head is pale: the colour of its weight on the 0-1 ramp
    darkest = view.heatmap._buffer[..., :3].astype(int).sum(-1).min()
    assert darkest == colour_ramp(np.array([top]))[0].astype(int).sum()
    assert darkest > 3 * 150
    view.head.setCurrentIndex(view.head.findData("grid"))
    assert [m.value_range for m in view.grid.maps[:2]] == [(0.0, 1.0)] * 2

    view.contrast.setChecked(True)  # the explicit, labelled option: each map to its maximum
    maps = view.grid.maps[:2]
    for h, heatmap in enumerate(maps):
        w = look["attention"]["encoder.0.attn"]["weights"][h]
        assert heatmap.value_range == (0.0, pytest.approx(float(w.max())))
    view.head.setCurrentIndex(view.head.findData("average"))
    assert view.heatmap.value_range == (0.0, pytest.approx(top))
    assert "colours 0 to its largest weight" in view.heatmap.title


def test_alibi_bias_gets_a_one_sided_scale_shared_by_its_heads(qtbot):
    view = PositionsView()
    qtbot.addWidget(view)
    slopes = np.array([0.5, 0.0156, 0.0039])
    distance = np.arange(8)[:, None] - np.arange(8)[None, :]
    bias = -slopes[:, None, None] * np.maximum(distance, 0)[None].astype(float)
    view.show_positions({"alibi": {"bias": bias, "slopes": slopes}}, "test")
    maps = view.pages["alibi"].grid.maps[:3]
    assert all(m.value_range == (pytest.approx(float(bias.min())), 0.0) for m in maps)
    assert all(m.kind == "negative" for m in maps)
    assert "Never positive" in view.pages["alibi"].caption.text()


def test_a_learned_table_shows_its_trained_rows_and_marks_the_rest_on_request(qtbot):
    view = PositionsView()
    qtbot.addWidget(view)
    view.show()
    rng = np.random.default_rng(1)
    table = rng.normal(0, 0.02, size=(256, 8))
    table[:17] = rng.normal(0, 0.06, size=(17, 8))
    learned = {"learned": {"table": table, "similarity": table[:17] @ table[:17].T}}
    view.show_positions(learned, "test", trained=17)
    page = view.pages["learned" if "learned" in view.pages else "table"]
    assert page.table.matrix.shape == (17, 8)
    assert "rows 0–16 of 256, the run's sequence length" in page.table.title
    assert view.all_rows.isVisible() and not page.trained_end.isVisible()
    view.all_rows.setChecked(True)
    assert page.table.matrix.shape == (256, 8)
    assert "from 17, past the run's sequence length, never trained" in page.table.title
    assert page.trained_end.isVisible() and page.trained_end.value() == 16.5
    view.show_positions(learned, "an untrained graph", trained=None)  # nothing known: all rows
    assert page.table.matrix.shape == (256, 8) and not view.all_rows.isVisible()


def test_the_diverging_ramp_is_blue_below_white_at_zero_and_red_above():
    blue, white, red = (tuple(int(c) for c in rgb)
                        for rgb in colour_ramp(np.array([0.0, 0.5, 1.0]), "diverging"))
    assert white == (247, 247, 247)
    assert blue[2] > blue[0] and red[0] > red[2]


def test_the_mean_of_the_heads_is_titled_with_the_number_of_heads(qtbot):
    view = AttentionView()
    qtbot.addWidget(view)
    view.show_snapshot(encoder_look(tokens=6, heads=2))
    assert view.heatmap.title.startswith("encoder.0.attn · mean of 2 heads")


def test_every_masked_cell_is_hatched_and_no_allowed_one():
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    from tfstudio.gui.training.heatmap_paint import paint_mask
    masked = np.array([[False, True, False, True, True, False, True],
                       [True, False, False, False, True, True, True]])
    cell = 16
    image = QImage(cell * masked.shape[1], cell * masked.shape[0], QImage.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    paint_mask(painter, masked, QRectF(image.rect()), cell, cell)
    painter.end()
    pixels = np.array([[image.pixelColor(x, y).lightness() for x in range(image.width())]
                       for y in range(image.height())])
    inked = np.array([[(pixels[r * cell + 1:(r + 1) * cell - 1,
                                c * cell + 1:(c + 1) * cell - 1] < 255).any()
                       for c in range(masked.shape[1])] for r in range(masked.shape[0])])
    assert (inked == masked).all()
