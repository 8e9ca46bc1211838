"""Where a heatmap's cells go, without Qt (gui/training/heatmap_cells.py): each cell's size,
square cells centred, upright column labels, masked cells hatched in runs. The map drawn:
test_plots.py, test_heatmap_window.py, test_heatmap_thinned_labels.py."""
from __future__ import annotations

import numpy as np

import pytest

from tfstudio.gui.training.heatmap_cells import (SHADE_ALPHA, cell_size, cell_tip, centred_left,
                                                 grid_places, hover_shades, masked_runs,
                                                 rotate_labels)


def test_square_cells_are_the_largest_that_fit_both_ways_and_others_share_the_room():
    assert cell_size(400.0, 200.0, 10, 10, square=True) == (20.0, 20.0)    # the height decides
    assert cell_size(400.0, 200.0, 10, 20, square=False) == (20.0, 20.0)
    assert cell_size(400.0, 200.0, 4, 10, square=False) == (40.0, 50.0)
    assert cell_size(30.0, 30.0, 100, 100, square=True) == (1.0, 1.0)      # never under 1 px
    assert cell_size(400.0, 200.0, 10, 10, square=True, cell=14.0) == (14.0, 14.0)  # a window


def test_square_cells_are_centred_in_the_width_left_over():
    assert centred_left(50.0, 400.0, 20.0, 10, square=True) == 50.0 + 100.0
    assert centred_left(50.0, 400.0, 20.0, 10, square=False) == 50.0
    assert centred_left(50.0, 150.0, 20.0, 10, square=True) == 50.0        # wider: no shift


def test_column_labels_stand_upright_when_they_cannot_sit_side_by_side():
    assert not rotate_labels(widest=10.0, cell_width=14.0, stride=1)
    assert rotate_labels(widest=13.0, cell_width=14.0, stride=1)            # 2 px apart at least
    assert not rotate_labels(widest=13.0, cell_width=14.0, stride=2)        # every other one


def test_masked_cells_are_hatched_as_one_rectangle_per_run_in_a_row():
    causal = ~np.tril(np.ones((3, 3), bool))
    assert masked_runs(causal) == [(0, 1, 3), (1, 2, 3)]
    window = np.array([[True, False, True, True], [False] * 4])
    assert masked_runs(window) == [(0, 0, 1), (0, 2, 4)]
    assert masked_runs(np.zeros((2, 2), bool)) == []


def test_a_hovered_query_shades_each_key_by_how_much_it_reads_it_against_the_most():
    weights = np.array([0.5, 0.25, 0.005, 0.245, 0.9])
    allowed = np.array([True, True, True, True, False])       # the last key is masked
    shades = hover_shades(weights, allowed)
    assert shades[0] == SHADE_ALPHA and shades[1] == pytest.approx(SHADE_ALPHA / 2)
    assert shades[2] is None and shades[4] is None            # barely read; masked
    assert hover_shades(np.zeros(3), np.ones(3, bool)) == [None, None, None]


def test_a_cells_tooltip_names_its_tokens_and_its_value_or_that_it_is_masked():
    assert cell_tip(["a", "b"], ["a", "b"], 1, 0, 0.123456, True) == "b → a: 0.1235"
    assert cell_tip(["a", "b"], ["a", "b"], 0, 1, 0.0, False) == "a → b: masked"
    assert cell_tip([], [], 0, 1, 2.5e-7, True) == "2.5e-07"                # no labels


def test_a_grid_is_square_ish_with_a_colour_bar_per_row_when_the_maps_share_a_scale():
    assert grid_places(4, shared_scale=True) == [(0, 0, False), (0, 1, True), (1, 0, False),
                                                 (1, 1, True)]
    assert [bar for *_, bar in grid_places(5, shared_scale=True)] == \
        [False, False, True, False, True]                      # 3 columns; the last map too
    assert all(bar for *_, bar in grid_places(5, shared_scale=False))
    assert grid_places(1, True) == [(0, 0, True)] and grid_places(0, True) == []
