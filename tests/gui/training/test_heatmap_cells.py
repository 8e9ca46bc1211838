"""Where a heatmap's cells go, without Qt (gui/training/heatmap_cells.py): each cell's size,
square cells centred, upright column labels, masked cells hatched in runs. The map drawn:
test_plots.py, test_heatmap_window.py, test_heatmap_thinned_labels.py."""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.heatmap_cells import (cell_size, centred_left, masked_runs,
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
