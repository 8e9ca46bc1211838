"""A colour bar's two end labels are whole (issue 27, item 8): "-0.19" and "0.082" were cut, and
so were the small and large values of other maps (a learned table at its random start, the
similarity of wide sinusoidal positions), until every label fit the width beside the bar. The
text is a rule (:func:`~tfstudio.gui.training.heatmap_scale.bar_label`, checked without Qt); that
it fits is the font's, checked once for every label."""
from __future__ import annotations

import pytest

from tfstudio.gui.training.heatmap_scale import bar_label

LABELS = [
    (-0.19, "-0.19"), (0.082, "0.082"), (-16.0, "-16"), (1.0, "1"), (0.0, "0"),
    (-0.0039, "-0.0039"), (-0.00012, "-1.2e-4"), (-2.5e-7, "-2.5e-7"), (384.0, "3.8e2"),
    (-1234.0, "-1.2e3")]


@pytest.mark.parametrize("value, text", LABELS)
def test_a_colour_bar_label_keeps_two_digits_in_at_most_seven_characters(value, text):
    assert bar_label(value) == text
    assert float(text) == pytest.approx(value, rel=0.05)  # what it says is the value
    assert len(text) <= 7


def test_every_colour_bar_label_fits_beside_the_bar(qtbot):
    from PySide6.QtGui import QFontMetricsF

    from tfstudio.gui.training.heatmap import COLOUR_BAR_LABEL_W
    from tfstudio.gui.training.heatmap_paint import font

    metrics = QFontMetricsF(font(10))
    for value, _ in LABELS:
        assert metrics.horizontalAdvance(bar_label(value)) <= COLOUR_BAR_LABEL_W, value
