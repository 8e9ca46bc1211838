"""Explain's colours, decided without Qt (gui/training/explain_colours.py): a vector's strip on a
scale symmetric around zero, and a logit-lens cell's shade."""
from __future__ import annotations

import math

from tfstudio.gui.training.explain_colours import lens_rgb, strip_rgb, strip_scale


def test_a_strip_shows_its_strongest_values_in_full_colour_and_zero_white():
    """The same values and colours as test_explain_view's strip, whose widget paints these."""
    picked = [-2.0, -1.0, 0.0, 1.0, 2.0, float("nan"), 0.5, -0.5]
    scale = strip_scale(picked)
    assert scale == 2.0                                   # the largest finite |value|
    assert [strip_rgb(v, scale) for v in picked] == [
        (0, 0, 255), (127, 127, 255), (255, 255, 255), (255, 127, 127), (255, 0, 0),
        (160, 160, 160), (255, 191, 191), (191, 191, 255)]
    zeros = [0.0, 0.0, 0.0, float("inf")]                 # no scale: white; masked: grey
    assert [strip_rgb(v, strip_scale(zeros)) for v in zeros] == [
        (255, 255, 255), (255, 255, 255), (255, 255, 255), (160, 160, 160)]


def test_a_strips_scale_is_symmetric_and_a_value_past_it_is_clamped():
    assert strip_scale([-3.0, 1.0, -math.inf]) == 3.0     # a negative can set it; inf cannot
    assert strip_scale([]) == 0.0
    assert strip_rgb(6.0, 3.0) == strip_rgb(3.0, 3.0) == (255, 0, 0)
    assert strip_rgb(-6.0, 3.0) == (0, 0, 255)
    assert strip_rgb(1.5, 3.0) == (255, 127, 127) and strip_rgb(-1.5, 3.0) == (127, 127, 255)


def test_a_lens_cell_is_darker_the_surer_it_is():
    assert lens_rgb(0) == (255, 255, 255) and lens_rgb(1) == (40, 80, 180)
    assert sum(lens_rgb(0.9)) < sum(lens_rgb(0.2)) < sum(lens_rgb(0.0))
    assert lens_rgb(-0.5) == lens_rgb(0) and lens_rgb(2) == lens_rgb(1)  # clamped
