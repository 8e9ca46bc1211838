"""The canvas's mouse, key and pointer rules (gui/canvas_gestures.py), without a QApplication."""
from tfstudio.gui.canvas_gestures import (chosen_goes, cursor_after_pan, key_action, landing_point,
                                         starts_pan)


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


def test_space_readies_a_pan_until_let_go_and_escape_lets_go_of_a_wire_being_drawn():
    assert key_action("space", True, False, False) == "space_down"
    assert key_action("space", False, False, False) == "space_up"
    assert key_action("space", True, True, False) is None          # a held key repeating
    assert key_action("space", False, True, True) is None
    assert key_action("escape", True, False, True) == "cancel_wire"
    assert key_action("escape", True, False, False) is None        # no wire in hand: Qt's
    assert key_action("escape", False, False, True) is None        # on the press, not the release
    assert key_action("delete", True, False, True) is None         # the window's shortcuts


def test_a_block_chosen_in_the_search_goes_onto_its_wire_else_where_the_search_opened():
    wire = object()  # the wire let go in empty space (scene_wiring.LooseWire)
    assert chosen_goes(wire, (10.0, 20.0), (300.0, 400.0)) == ("wire", wire)
    assert chosen_goes(None, (10.0, 20.0), (300.0, 400.0)) == ("at", (10.0, 20.0))
    assert chosen_goes(None, None, (300.0, 400.0)) == ("at", (300.0, 400.0))   # the pointer
    assert chosen_goes(None, (0.0, 0.0), (300.0, 400.0)) == ("at", (0.0, 0.0))  # the origin too
