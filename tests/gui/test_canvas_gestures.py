"""The canvas's mouse and pointer rules (gui/canvas_gestures.py), without a QApplication."""
from tfstudio.gui.canvas_gestures import cursor_after_pan, landing_point, starts_pan


def test_the_middle_button_pans_and_the_left_one_only_while_space_is_held():
    assert starts_pan(middle=True, left=False, space_down=False)
    assert starts_pan(middle=False, left=True, space_down=True)
    assert not starts_pan(middle=False, left=True, space_down=False)   # selects and drags
    assert not starts_pan(middle=False, left=False, space_down=True)   # the right button


def test_a_pan_leaves_the_open_hand_while_space_is_held_else_the_arrow():
    assert cursor_after_pan(True) == "open_hand"
    assert cursor_after_pan(False) == "arrow"


def test_a_block_from_the_keyboard_lands_under_the_pointer_or_mid_canvas_when_it_is_off():
    size = (800, 600)
    assert landing_point((10, 20), size) == (10, 20)
    assert landing_point((0, 0), size) == (0, 0)
    assert landing_point((799, 599), size) == (799, 599)       # the last pixel is on it
    assert landing_point((800, 20), size) == (399, 299)        # one past: off, the centre
    assert landing_point((10, -1), size) == (399, 299)
    assert landing_point((-5, 700), (801, 601)) == (400, 300)
