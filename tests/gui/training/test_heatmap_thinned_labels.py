"""Thinned heatmap row labels are whole glyphs (issue 27, item 8): when cells are smaller than a
line of text and every k-th token is labelled, each label is drawn in a band a line tall centred
on its row; drawn in the cell's own height, Qt clipped it to half glyphs. Whitespace and control
tokens get visible labels."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter

from tfstudio.gui.training.heatmap import Heatmap, _font, row_label_rect

N = 60


def thinned_map(qtbot) -> Heatmap:
    heatmap = Heatmap(labels=True, min_size=60)
    qtbot.addWidget(heatmap)
    heatmap.resize(330, 330)  # 60 rows in ~300 px: cells ~5 px, below a readable label
    heatmap.set_data(np.eye(N), rows=["Wg"] * N, cols=["Wg"] * N)
    return heatmap


def dark_rows(image: QImage, x0: int, x1: int) -> set[int]:
    """The pixel rows with ink (darker than mid grey) between columns x0 and x1."""
    return {y for y in range(image.height()) for x in range(x0, x1)
            if QColor(image.pixel(x, y)).lightness() < 110}


def test_a_thinned_row_label_is_drawn_whole_around_its_row(qtbot):
    heatmap = thinned_map(qtbot)
    labelled = heatmap.labelled_rows()
    area, cw, ch = heatmap._layout(heatmap.rect().toRectF())
    assert heatmap._label_stride > 1 and ch < 9  # thinned: cells smaller than a label
    line = QFontMetricsF(_font(heatmap.label_px, bold=True)).height()
    rects = [row_label_rect(area, r, ch, line) for r in labelled]
    assert all(r.height() >= line - 1e-6 for r in rects)
    assert all(a.bottom() <= b.top() + 1e-6 for a, b in zip(rects, rects[1:]))  # no overlap
    image = QImage(heatmap.size(), QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    heatmap.paint_into(painter, heatmap.rect().toRectF())
    painter.end()
    ink = dark_rows(image, 0, int(area.left()) - 4)
    row = labelled[1]
    cell_top, cell_bottom = area.top() + row * ch, area.top() + (row + 1) * ch
    band = {y for y in ink if rects[1].top() - 1 <= y <= rects[1].bottom() + 1}
    # the glyphs reach past their cell's few pixels: a label cut to the cell would not
    assert band and (min(band) < cell_top - 1 or max(band) > cell_bottom + 1)
    assert max(band) - min(band) + 1 >= 0.6 * QFontMetricsF(_font(heatmap.label_px)).ascent()


def test_whitespace_and_control_tokens_are_labelled_visibly(qtbot):
    heatmap = Heatmap(labels=True)
    qtbot.addWidget(heatmap)
    tokens = [" ", "\n", "\t", "a b", "\x01", ""]
    heatmap.set_data(np.zeros((6, 6)), rows=tokens, cols=tokens)
    assert heatmap.rows == heatmap.cols == ["␣", "↵", "⇥", "a␣b", "\\x01", "∅"]
