"""Two things a student reads off the attention tab: the colour scale of attention weights
starts at 0 (so a 0.4-0.6 map looks flat, not sharp), and "Follow training" ticks again when the
workspace's step bar (the one step control, under every view of the model's insides) comes
back to the newest snapshot."""
import numpy as np
import pytest

from tfstudio.gui.training.heatmap import Heatmap
from tfstudio.gui.training.step_bar import StepBar


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
    """The Train workspace's one step control (under Attention, Positions, Next token and
    Experts): going back stops following training, the newest snapshot follows it again."""
    bar = StepBar()
    qtbot.addWidget(bar)
    requested, following = [], []
    bar.step_requested.connect(requested.append)
    bar.follow_toggled.connect(following.append)
    bar.set_steps([10, 20, 30], current=30)
    assert bar.follow.isChecked() and bar.shown_step() == 30
    bar.slider.setValue(0)
    assert not bar.follow.isChecked() and requested == [10] and following == [False]
    assert bar.shown_step() == 10
    bar.slider.setValue(1)
    assert not bar.follow.isChecked() and requested == [10, 20] and following == [False]
    bar.slider.setValue(2)
    assert bar.follow.isChecked() and requested == [10, 20, 30]
    assert following == [False, True]


def test_the_slider_moves_over_two_or_more_snapshots_only(qtbot):
    """From a survivor of the gui/training mutation sample: one snapshot gives a still slider
    with one position; two give a slider that moves over both."""
    bar = StepBar()
    qtbot.addWidget(bar)
    bar.set_steps([10], current=10)
    assert not bar.slider.isEnabled() and bar.slider.maximum() == 0
    bar.set_steps([10, 20], current=20)
    assert bar.slider.isEnabled() and (bar.slider.minimum(), bar.slider.maximum()) == (0, 1)
    assert bar.shown_step() == 20
