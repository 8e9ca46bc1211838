"""The curves' reading aids decided without Qt (gui/training/curve_math.py): where the readout
box stands beside the pointer, and each layer's line in the per-layer plot. (Smoothing and the
readout's text: test_curve_reading.py.)"""
from __future__ import annotations

from tfstudio.gui.training.curve_math import (LAYER_STYLES, STEP, WALL, accuracy_points,
                                              layer_line, loss_axis, readout_at, step_axis_final)

AREA = (1000, 500)   # the plots' right and bottom edges
BOX = (200, 60)


def test_the_readout_stands_right_of_and_below_the_pointer_else_where_it_fits():
    assert readout_at((100, 100), BOX, AREA) == (116, 116)
    assert readout_at((900, 100), BOX, AREA) == (900 - 16 - 200, 116)   # no room right: left
    assert readout_at((100, 480), BOX, AREA) == (116, 480 - 16 - 60)    # no room below: above
    assert readout_at((900, 480), BOX, AREA) == (684, 404)
    assert readout_at((100, 30), (200, 600), AREA) == (116, 0)  # taller than the room: at the top


def test_past_five_layers_the_line_styles_repeat_at_half_the_width():
    lines = [layer_line(i, 2.0) for i in range(7)]
    assert [style for style, _ in lines] == [0, 1, 2, 3, 4, 0, 1]
    assert [width for _, width in lines] == [2.0] * LAYER_STYLES + [1.0, 1.0]


def test_the_accuracy_curve_has_the_evaluations_that_measured_one():
    assert accuracy_points([40, 80, 120], [0.25, None, 0.5]) == ([40, 120], [0.25, 0.5])
    assert accuracy_points([40, 80], [None, None]) == ([], [])      # a text corpus
    assert accuracy_points([], []) == ([], [])


def test_a_step_axis_ends_at_the_longest_runs_last_step_and_wall_time_has_no_end():
    assert step_axis_final([300, 2000], STEP) == 2000
    assert step_axis_final([300, 2000], WALL) == 0
    assert step_axis_final([], STEP) == 0


def test_a_log_loss_axis_says_so_and_labels_only_its_decades():
    assert loss_axis(True) == ("cross-entropy (log scale)", 1)
    assert loss_axis(False) == ("cross-entropy", 2)
