"""The ink on a coloured strip or block (gui/ink.py), without a QApplication: dark on light
colours, white on dark ones, by luma (green counts most, blue least)."""
from tfstudio.gui.ink import DARK_INK, LIGHT_INK, readable_ink


def test_light_colours_get_dark_ink_and_dark_colours_white():
    assert readable_ink(1.0, 1.0, 1.0) == DARK_INK
    assert readable_ink(0.98, 0.85, 0.45) == DARK_INK   # a pale amber
    assert readable_ink(0.0, 0.0, 0.0) == LIGHT_INK
    assert readable_ink(0.2, 0.3, 0.7) == LIGHT_INK     # a deep blue


def test_the_ink_turns_dark_just_above_a_luma_of_062():
    grey = 0.62
    assert readable_ink(grey, grey, grey) == LIGHT_INK           # exactly at: still white
    assert readable_ink(grey + 0.001, grey + 0.001, grey + 0.001) == DARK_INK


def test_green_weighs_more_than_blue_and_red_more_than_blue():
    assert readable_ink(0.7, 0.7, 0.3) == DARK_INK    # luma 0.654
    assert readable_ink(0.7, 0.3, 0.7) == LIGHT_INK   # green and blue swapped: 0.465
    assert readable_ink(0.9, 0.6, 0.3) == DARK_INK    # a light orange: 0.656
    assert readable_ink(0.3, 0.6, 0.9) == LIGHT_INK   # red and blue swapped, a sky blue: 0.545
