"""The step bar's decisions (gui/training/step_slider.py, no Qt): the slider's steps, its
handle, and when the views follow training. test_zero_scale_and_follow checks the bar shows them."""
from __future__ import annotations

from tfstudio.gui.training.step_slider import (FOLLOW_TIP, NOTHING_TO_FOLLOW, follow_tip,
                                               follows_after_move, handle_at, slider_moves,
                                               step_at)

STEPS = [10, 20, 30]


def test_moving_back_replays_and_the_newest_look_of_a_live_run_follows_again():
    assert [follows_after_move(STEPS, i, live=True) for i in range(3)] == [False, False, True]
    # a finished or opened run: its newest look is just its last, nothing to follow
    assert not any(follows_after_move(STEPS, i, live=False) for i in range(3))
    assert (follow_tip(True), follow_tip(False)) == (FOLLOW_TIP, NOTHING_TO_FOLLOW)


def test_the_slider_moves_over_two_or_more_looks_and_its_handle_stands_on_the_step_shown():
    assert not slider_moves([]) and not slider_moves([10]) and slider_moves([10, 20])
    assert handle_at(STEPS, 20) == 1 and handle_at(STEPS, 30) == 2
    assert handle_at(STEPS, 25) is None and handle_at(STEPS, None) is None  # no look kept there
    assert [step_at(STEPS, i) for i in (-1, 0, 2, 3)] == [None, 10, 30, None]
