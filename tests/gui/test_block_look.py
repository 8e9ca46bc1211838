"""How a block is drawn at a zoom (gui/block_look.py), without Qt: words only above a level of
detail, a title taking its icon's room and a summary one line when zoomed out, a problem
badge that stays readable, an open frame a shade off the canvas."""
from tfstudio.gui.block_look import (ICON_ROOM, WORDS_FROM_LOD, badge_size, frame_lighter,
                                     frame_summary, shows_words, summary_on_one_line,
                                     title_icon_room)


def test_words_are_drawn_only_above_the_level_of_detail_where_they_are_noise():
    assert WORDS_FROM_LOD == 0.3
    assert not shows_words(0.3) and shows_words(0.31) and shows_words(1.0)
    assert not shows_words(0.1)


def test_zoomed_out_a_title_takes_its_icons_room_but_a_groups_keeps_its_chevron():
    assert title_icon_room(1.1, False) == ICON_ROOM == 20.0
    assert title_icon_room(1.11, False) == 0.0
    assert title_icon_room(1.11, True) == title_icon_room(2.0, True) == ICON_ROOM


def test_zoomed_out_a_summary_is_one_line_else_it_wraps_over_its_count():
    assert not summary_on_one_line(1.2) and summary_on_one_line(1.21)
    assert not summary_on_one_line(1.0)


def test_a_badge_stays_about_eighteen_pixels_up_to_ninety_units_smaller_for_a_problem_inside():
    assert badge_size(1.0, True) == badge_size(3.0, True) == 20.0
    assert badge_size(0.9, True) == 20.0                      # 18 / 0.9 = 20: not yet grown
    assert badge_size(0.5, True) == 36.0                      # 18 pixels at half size
    assert badge_size(0.1, True) == badge_size(0.0, True) == 90.0
    assert badge_size(0.5, False) == 36.0 * 0.8 and badge_size(1.0, False) == 16.0


def test_an_open_frame_is_a_shade_off_a_light_canvas_and_lighter_on_a_dark_one():
    assert frame_lighter(129) == 103 and frame_lighter(250) == 103
    assert frame_lighter(128) == 135 and frame_lighter(30) == 135
    assert frame_summary("MHA 4 · GELU FFN", "2 copies") == "MHA 4 · GELU FFN  ·  2 copies"
    assert frame_summary("MHA 4 · GELU FFN", "") == "MHA 4 · GELU FFN"
