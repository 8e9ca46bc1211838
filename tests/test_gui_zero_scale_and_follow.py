"""Two things a student reads off the attention tab: the colour scale of attention weights
starts at 0 (so a 0.4-0.6 map looks flat, not sharp), and "Follow training" ticks again when the
step slider comes back to the newest snapshot."""
import numpy as np
import pytest

from tfstudio.gui.training.attention_view import AttentionView
from tfstudio.gui.training.heatmap import Heatmap


@pytest.fixture
def heatmap(qtbot):
    def make(matrix):
        h = Heatmap()
        qtbot.addWidget(h)
        h.set_data(np.asarray(matrix))
        return h
    return make


def test_attention_weights_are_coloured_from_zero(heatmap):
    flat = heatmap([[0.4, 0.6], [0.6, 0.4]])
    assert flat.value_range == (0.0, 0.6)
    # the same 0.4 and 0.6 in a map that holds a real 0: drawn in the same colours (the
    # cell image, one pixel per cell)
    with_zero = heatmap([[0.4, 0.6], [0.6, 0.0]])
    assert flat._image.pixel(0, 0) == with_zero._image.pixel(0, 0)   # 0.4
    assert flat._image.pixel(0, 1) == with_zero._image.pixel(0, 1)   # 0.6
    assert with_zero._image.pixel(1, 1) != with_zero._image.pixel(0, 0)  # 0 differs from 0.4


def test_follow_unticks_on_an_older_snapshot_and_ticks_again_on_the_newest(qtbot):
    view = AttentionView()
    qtbot.addWidget(view)
    requested = []
    view.step_requested.connect(requested.append)
    view.set_steps([10, 20, 30], current=30)
    assert view.follow.isChecked()
    view.slider.setValue(0)
    assert not view.follow.isChecked() and requested == [10]
    view.slider.setValue(1)
    assert not view.follow.isChecked() and requested == [10, 20]
    view.slider.setValue(2)
    assert view.follow.isChecked() and requested == [10, 20, 30]


def test_the_slider_moves_over_two_or_more_snapshots_only(qtbot):
    """From a survivor of the gui/training mutation sample: one snapshot gives a still slider
    with one position; two give a slider that moves over both."""
    view = AttentionView()
    qtbot.addWidget(view)
    view.set_steps([10], current=10)
    assert not view.slider.isEnabled() and view.slider.maximum() == 0
    view.set_steps([10, 20], current=20)
    assert view.slider.isEnabled() and (view.slider.minimum(), view.slider.maximum()) == (0, 1)
