"""Where the strip puts its legend and how far it zooms, without Qt
(gui/training/strip_layout.py). The strip on a real canvas: test_strip_telemetry.py."""
from __future__ import annotations

import pytest

from tfstudio.gui.training.strip_layout import (BAR_W, GAP, MIN_VIEWS_HEIGHT, STRIP_HEIGHT,
                                                STRIP_MARGIN, legend_box, strip_zoom, title_cut,
                                                topmost, views_height)

VIEW = (1200, 300)   # the strip's canvas, pixels
FRAME = 1


def test_the_legend_is_as_wide_as_its_widest_line_at_the_top_right_left_of_the_canvas():
    box = legend_box([150.0, 210.4], 15.0, 0, VIEW, FRAME)
    assert box.kept == 234                                  # 210 + 24 px of padding
    assert box.rect == (1200 - FRAME - GAP - 234, FRAME + GAP, 234, 10 + 8 + 30 + 8)
    assert box.margin == 234 + 2 * GAP
    short = legend_box([40.0], 15.0, 0, VIEW, FRAME)         # never narrower than its bar
    assert short.kept == BAR_W + 24 and short.rect[2] == BAR_W + 24


def test_the_legend_never_narrows_at_a_shorter_line_and_takes_at_most_a_third_of_the_view():
    wide = legend_box([210.0], 15.0, 0, VIEW, FRAME)
    narrower = legend_box([150.0], 15.0, wide.kept, VIEW, FRAME)
    assert narrower.kept == wide.kept and narrower.rect[2] == wide.rect[2]
    small = legend_box([600.0], 15.0, 0, (600, 300), FRAME)
    assert small.kept == 624 and small.rect[2] == 200            # a third of 600: lines elide
    tiny = legend_box([600.0], 15.0, 0, (300, 40), FRAME)
    assert tiny.rect[2] == BAR_W + 16                            # the bar whole, at least
    assert tiny.rect[3] == 40 - 2 * (FRAME + GAP)                # no taller than the view
    hidden = legend_box([], 15.0, wide.kept, VIEW, FRAME)
    assert (hidden.kept, hidden.margin, hidden.rect) == (0, 0, None)   # its margin given back


def test_the_strip_zooms_until_its_blocks_are_whole_never_past_100_percent():
    assert strip_zoom((400, 100), (1200, 300)) == 1.0
    assert strip_zoom((2380, 100), (1200, 300)) == pytest.approx(0.5)   # 2380 + 2 x 10 wide
    assert strip_zoom((400, 580), (1200, 300)) == pytest.approx(0.5)    # 600 tall
    assert STRIP_MARGIN == 10.0


def test_the_frames_title_lines_are_whole_or_out_of_view():
    assert title_cut(frame_top=0.0, shown_top=20.0, blocks_top=40.0)      # cut: move it out
    assert not title_cut(frame_top=0.0, shown_top=-5.0, blocks_top=40.0)  # whole in view
    assert not title_cut(frame_top=0.0, shown_top=40.0, blocks_top=40.0)  # already out
    assert not title_cut(frame_top=0.0, shown_top=0.0, blocks_top=40.0)   # its top edge: whole


def test_the_views_take_the_window_but_the_strip_which_grows_with_a_tall_window():
    assert views_height(600, 70) == 600 - 70 - STRIP_HEIGHT          # 14% would be 84 px
    assert views_height(768, 70) == 768 - 70 - 107                    # 14% of 768
    assert views_height(1080, 70) == 1080 - 70 - 151
    assert views_height(400, 70) == MIN_VIEWS_HEIGHT                  # never squashed


def test_the_strip_fits_the_topmost_then_leftmost_open_frame():
    assert topmost([(300.0, 40.0), (20.0, 40.0), (500.0, 10.0)]) == 2
    assert topmost([(300.0, 40.0), (20.0, 40.0)]) == 1      # level: the leftmost
    assert topmost([]) is None
