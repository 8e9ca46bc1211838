"""The curves' reading aids decided without Qt (gui/training/curve_math.py): where the readout
box stands beside the pointer, each layer's line in the per-layer plot, and the legends' columns
that let the plots fit the view. (Smoothing and the
readout's text: test_curve_reading.py.)"""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.curve_math import (LAYER_STYLES, STEP, WALL, GrowingArray,
                                              accuracy_points, layer_line, legend_columns,
                                              loss_axis, readout_at, smoothing_label,
                                              smoothing_weight, step_axis_final)

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


def plots_width(per_run: int, per_layer: int):
    """The plots' width with the legends in (runs, layers) columns: three columns of 250 px,
    or wider, the run names side by side over the first and the layers' over the other two."""
    def need(runs: int, layers: int) -> int:
        return max(750, runs * per_run, 250 + layers * per_layer)
    return need


def test_the_legends_stack_onto_more_rows_until_the_plots_fit_the_view_runs_first():
    """With the course open at 1366x768 the plots had 784 px: two runs' names side by side and
    six layers' pushed the third column out of view."""
    assert legend_columns(plots_width(300, 100), 1200, (2, 6)) == (2, 6, 0)     # it all fits
    assert legend_columns(plots_width(450, 80), 784, (2, 6)) == (1, 6, 0)      # the runs give
    assert legend_columns(plots_width(450, 120), 784, (2, 6)) == (1, 4, 0)     # then the layers
    assert legend_columns(plots_width(450, 150), 784, (2, 6)) == (1, 3, 0)


def test_plots_wider_than_the_view_with_one_column_each_keep_their_width_to_scroll():
    assert legend_columns(plots_width(900, 100), 784, (2, 6)) == (1, 1, 900)
    assert legend_columns(plots_width(300, 100), 700, (2, 6)) == (1, 1, 750)  # 3 x 250


def test_a_growing_array_converts_only_the_new_points_and_starts_over_when_replaced():
    growing, values = GrowingArray(), [1.0, 2.0]
    assert growing.sync(values).tolist() == [1.0, 2.0]
    values += [float(v) for v in range(3, 301)]       # past its first buffer of 256
    assert growing.sync(values).tolist() == values
    values[0] = 99.0                                     # an old point is never read again
    assert growing.sync(values)[0] == 1.0
    assert growing.sync([5.0]).tolist() == [5.0]        # a shorter list: a reloaded run
    assert growing.sync([]).size == 0 and isinstance(growing.sync([]), np.ndarray)


def test_the_smoothing_slider_reads_as_tensorboards_weight_from_raw_to_0_99():
    assert smoothing_weight(0) == 0.0 and smoothing_weight(60) == 0.6
    assert smoothing_weight(99) == 0.99
    assert smoothing_label(smoothing_weight(60)) == "Smoothing 0.60"
