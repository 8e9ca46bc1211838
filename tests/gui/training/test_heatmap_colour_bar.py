"""A colour bar's two end labels are whole (issue 27, item 8): "-0.19" and "0.082" were cut, and
so were the small and large values of other maps (a learned table at its random start, the
similarity of wide sinusoidal positions), until every label fit the width beside the bar."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetricsF

from tfstudio.gui.training.heatmap import COLOUR_BAR_LABEL_W
from tfstudio.gui.training.heatmap_paint import bar_label, font


@pytest.mark.parametrize("value, text", [
    (-0.19, "-0.19"), (0.082, "0.082"), (-16.0, "-16"), (1.0, "1"), (0.0, "0"),
    (-0.0039, "-0.0039"), (-0.00012, "-1.2e-4"), (-2.5e-7, "-2.5e-7"), (384.0, "3.8e2"),
    (-1234.0, "-1.2e3")])
def test_a_colour_bar_label_keeps_two_digits_and_fits_beside_the_bar(qtbot, value, text):
    assert bar_label(value) == text
    assert float(text) == pytest.approx(value, rel=0.05)  # what it says is the value
    assert QFontMetricsF(font(10)).horizontalAdvance(text) <= COLOUR_BAR_LABEL_W
