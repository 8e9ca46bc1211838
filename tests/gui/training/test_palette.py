"""The training views' colours as numbers, without Qt (gui/training/palette.py): a colour per
run that repeats past ten, and the ramps of heatmaps and telemetry. As Qt colours and whole
arrays: test_honest_colour.py, test_smooth_canvas.py."""
from __future__ import annotations

from tfstudio.gui.training.palette import DIVERGING, SEQUENTIAL, ramp_rgb, series_rgb


def test_each_run_has_its_own_colour_and_they_repeat_past_ten():
    assert series_rgb(0) == (0x4e, 0x79, 0xa7) and series_rgb(1) == (0xf2, 0x8e, 0x2b)
    assert len({series_rgb(i) for i in range(10)}) == 10
    assert series_rgb(10) == series_rgb(0) and series_rgb(23) == series_rgb(3)


def test_a_ramp_runs_between_its_stops_and_clamps_what_lies_outside():
    assert ramp_rgb(0.0) == SEQUENTIAL[0][1] and ramp_rgb(1.0) == SEQUENTIAL[-1][1]
    assert ramp_rgb(0.25) == SEQUENTIAL[1][1]
    assert ramp_rgb(0.125) == (222, 235, 247)          # halfway between the first two stops
    assert ramp_rgb(-3.0) == ramp_rgb(0.0) and ramp_rgb(7.0) == ramp_rgb(1.0)
    assert ramp_rgb(float("nan")) == ramp_rgb(0.0)      # NaN as 0
    assert ramp_rgb(0.5, "diverging") == DIVERGING[2][1] == (247, 247, 247)  # white at 0
    assert ramp_rgb(0.0, "negative") == SEQUENTIAL[-1][1]   # dark at the most negative end
    assert ramp_rgb(1.0, "negative") == SEQUENTIAL[0][1]
