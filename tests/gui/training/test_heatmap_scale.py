"""Where a heatmap's values sit on its colour scale, without Qt (gui/training/heatmap_scale.py).
(The scale's range and its end labels: test_honest_colour.py, test_heatmap_colour_bar.py; the
cells drawn: test_zero_scale_and_follow.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from tfstudio.gui.training.heatmap_scale import on_scale, scale_range


def test_attention_weights_sit_on_a_scale_from_zero_whatever_else_the_map_holds():
    """A 0.4-0.6 map is not stretched to look sharp: its 0.4 and 0.6 sit where they sit in a
    map that holds a real 0."""
    flat = np.array([[0.4, 0.6], [0.6, 0.4]])
    with_zero = np.array([[0.4, 0.6], [0.6, 0.0]])
    on_flat = on_scale(flat, scale_range(flat, "sequential"))
    on_zero = on_scale(with_zero, scale_range(with_zero, "sequential"))
    assert on_flat[0, 0] == pytest.approx(0.4 / 0.6) == on_zero[0, 0]
    assert on_flat[0, 1] == on_zero[0, 1] == 1.0
    assert on_zero[1, 1] == 0.0


def test_a_signed_map_sits_around_the_middle_and_a_flat_range_keeps_its_values():
    values = np.array([-2.0, 0.0, 1.0])
    assert on_scale(values, scale_range(values, "diverging")).tolist() == [0.0, 0.5, 0.75]
    assert on_scale(np.array([3.0, 3.5]), (3.0, 3.0)).tolist() == [0.0, 0.5]
