"""The canvas's zoom rules, without a window (gui/zoom_rules.py): the zoom's bounds, a wheel
notch, what fit-to-view settles on and centres, the height it can spare, and the part of a
block "show it" centres, and how big text and wire labels are drawn. The view applies them (test_interaction, test_refit, test_canvas)."""
import pytest

from tfstudio.gui.zoom_rules import (LEGIBLE_ZOOM, MAX_ZOOM, MIN_LABEL_PIXELS, MIN_ZOOM, clamped,
                                     fit_centre, fit_zoom, shown_part, spare_height, stepped,
                                     text_boost, wheel_steps, wire_label_pixels)


def test_zooming_stays_between_the_smallest_and_the_largest_zoom():
    assert clamped(1.3) == 1.3
    assert clamped(50.0) == MAX_ZOOM and clamped(0.001) == MIN_ZOOM
    assert stepped(MAX_ZOOM, 1) == MAX_ZOOM                  # one more notch in: no further
    assert stepped(MAX_ZOOM, -1) == pytest.approx(MAX_ZOOM / 1.15)


def test_a_wheel_notch_zooms_by_fifteen_percent_and_a_trackpad_by_its_part_of_one():
    assert wheel_steps(120) == 1 and wheel_steps(-240) == -2
    assert stepped(1.0, wheel_steps(120)) == pytest.approx(1.15)
    assert stepped(1.0, wheel_steps(-120)) == pytest.approx(1 / 1.15)
    assert stepped(1.0, wheel_steps(60)) == pytest.approx(1.15 ** 0.5)   # half a notch
    assert stepped(0.8, wheel_steps(0)) == 0.8


def test_fit_to_view_never_magnifies_past_full_size_nor_shrinks_below_legible():
    assert fit_zoom(2.4) == 1.0                              # a small graph: 100%, not 240%
    assert fit_zoom(0.85) == 0.85                            # fits legibly: as fitted
    assert fit_zoom(0.3) == LEGIBLE_ZOOM                     # too big: legible, the rest a pan away


def test_a_fit_at_the_legible_zoom_centres_the_whole_picture_if_it_fits_else_the_main_layer():
    tight, main_layer = (0, 0, 900, 500), (100, 50, 300, 400)
    assert fit_centre(tight, (0, 0, 1000, 600), main_layer) == (450, 250)
    assert fit_centre(tight, (0, 0, 1000, 450), main_layer) == (250, 250)   # too short
    assert fit_centre(tight, (0, 0, 850, 600), main_layer) == (250, 250)    # too narrow


def test_the_canvas_spares_the_height_its_picture_does_not_need_at_the_legible_zoom():
    assert spare_height(500, 600) == int(600 - (500 * LEGIBLE_ZOOM + 4))  # 246 pixels to give
    assert spare_height(500, 354) == 0                                    # none: 350 + 4 needed
    assert spare_height(900, 354) == 0                                    # never negative


def test_show_it_centres_a_block_that_fits_whole_and_a_big_one_from_its_top_left():
    visible = (0, 0, 800, 600)
    assert shown_part((100, 200, 180, 60), visible) == (90, 190, 200, 80)   # whole, with room
    x, y, w, h = shown_part((100, 200, 3000, 1200), visible)
    assert (x, y, w, h) == (90, 190, 800, 600)              # its top-left corner fills the view


def test_text_grows_when_zoomed_out_below_eighty_percent_up_to_half_again():
    assert text_boost(1.0) == 1.0 and text_boost(0.8) == 1.0         # near full size: as drawn
    assert text_boost(0.64) == pytest.approx(1.25)                   # 0.8 / 0.64
    assert text_boost(0.3) == 1.5 and text_boost(0.0) == 1.5         # never past 1.5


def test_a_wire_label_shrinks_to_the_gap_between_its_blocks_but_stays_readable_on_screen():
    assert wire_label_pixels(1.0, room=200, width=60) == 10          # room enough: as drawn
    assert wire_label_pixels(1.0, room=64, width=60) == pytest.approx(10 * 50 / 60)  # to the gap
    assert wire_label_pixels(1.0, room=44, width=60) == 8            # 5 would not read: 7.5 -> 8
    assert wire_label_pixels(0.5, room=1000, width=90) == 15         # zoomed out: enlarged
    # at 72% the floor is 7.5 / 0.72 = 10.4 scene pixels, in whole pixels 11 (10 drew 7.2)
    assert wire_label_pixels(0.72, room=30, width=80) == 11
    assert 11 * 0.72 >= MIN_LABEL_PIXELS > 10 * 0.72
