"""The range a plot's axis shows, decided from its data without Qt (gui/training/axis_range.py):
held steady while a run grows, moving in 1-2-5 steps, and fitted to the data once it no longer
grows."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tfstudio.gui.training.axis_range import (STEADY_FILL, STEADY_SLACK, SteadyRange,
                                              steady_range, step_axis_end)

finite = st.floats(-1e6, 1e6, allow_nan=False)

# a gradient norm that starts high and settles: 3.9 at step 1, 0.48 at its lowest
GRAD_NORM = [3.9, 3.43, 2.93, 2.53, 2.2, 2.0, 1.78, 1.55, 1.4, 1.24, 1.15, 1.04, 0.87, 0.89,
             0.74, 0.76, 0.66, 0.69, 0.63, 0.58, 0.57, 0.51, 0.5, 0.54, 0.53, 0.52, 0.48, 0.54,
             0.53, 0.5]


def test_a_range_is_rounded_outwards_and_holds_while_the_data_stays_well_inside():
    # span 3.3 with 5% headroom each side is 3.63; a quarter of it is 0.91, so the unit is 0.5:
    # 2.0 - 0.165 rounds down to 1.5 and 5.3 + 0.165 up to 5.5
    assert steady_range((2.0, 5.3), None) == (1.5, 5.5)
    assert steady_range((2.1, 5.0), (1.5, 5.5)) == (1.5, 5.5)  # inside, fills 2.9 / 4.0
    assert steady_range((1.4, 5.0), (1.5, 5.5)) != (1.5, 5.5)  # below it
    assert steady_range((4.0, 5.0), (1.5, 5.5)) != (1.5, 5.5)  # fills a quarter of it
    assert steady_range((1.0, 1900.0), None) == (0.0, 2000.0)  # steps never show below zero
    assert steady_range((-0.5, 99.5), None) == (0.0, 120.0)  # a pen's width below zero: on it
    assert steady_range((1e-3, 1e-3), None) == (0.0, 2e-3)  # one value: in the middle
    assert steady_range((-2.0, -2.0), None) == (-4.0, 0.0)
    assert steady_range((0.0, 0.0), None) == (-1.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(finite, finite, st.one_of(st.none(), st.tuples(finite, finite)))
def test_the_range_always_holds_the_data_and_the_data_fills_at_least_half(a, b, current):
    lo, hi = min(a, b), max(a, b)
    if hi - lo < 1e-6 * max(1.0, abs(lo)):
        return  # one value, within rounding
    if current is not None:
        current = (min(current), max(current))
    low, high = steady_range((lo, hi), current)
    slack = STEADY_SLACK * (high - low)  # (a pen's width past an edge counts as on it)
    assert low - slack <= lo and hi <= high + slack
    assert hi - lo >= STEADY_FILL * (high - low) * (1 - 1e-9)
    assert current is not None or lo < 0 or low >= 0
    assert steady_range((lo, hi), (low, high)) == (low, high)  # and then holds still


def test_a_run_of_20000_steps_moves_its_step_axis_a_few_times_not_at_every_refresh():
    ranges, current = [], None
    for step in range(20, 20_001, 20):  # a refresh every 20 steps: 1,000 of them
        current = steady_range((1.0, float(step)), current)
        ranges.append(current)
    changes = sum(1 for before, after in zip(ranges, ranges[1:]) if before != after)
    # pyqtgraph's own automatic range moves at each of the 1,000 refreshes; this one grows by at
    # least its headroom (5%) and rounds up to a 1-2-5 unit, which is 33 moves on this run
    assert changes <= 40
    assert all(low == 0.0 and high * (1 + STEADY_SLACK) >= step for (low, high), step
               in zip(ranges, range(20, 20_001, 20)))


def test_a_live_runs_step_axis_moves_through_1_2_5_ends_and_lands_on_its_last_step():
    ends = [step_axis_end(step, 2000) for step in range(1, 2001)]
    assert sorted(set(ends)) == [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]
    assert ends[94 - 1] == 100 and ends[96 - 1] == 200  # 5% past step 96 is 100.8
    assert all(end >= step for step, end in enumerate(ends, 1))
    assert step_axis_end(2500, 2000) == 2500  # a run resumed past its planned end


def test_a_step_axis_ends_at_the_runs_last_step_whatever_the_pen_adds():
    assert step_axis_end(20000 + 33.0, 20000) == 20000  # a pen's half width, in steps
    assert step_axis_end(2500, 2000) == 2500  # a run resumed past its planned end


def redrawn_at(points: list[int], ended: bool) -> tuple[SteadyRange, tuple[float, float]]:
    """The gradient-norm axis after redraws with the first ``points`` of GRAD_NORM shown, the
    last of them all 30; then one more of all 30, the run still growing or ``ended``."""
    axis = SteadyRange()
    for n in points:
        shown = GRAD_NORM[:n]
        axis.show((min(shown), max(shown)))
    if ended:
        axis.ended()
    return axis, axis.show((min(GRAD_NORM), max(GRAD_NORM)))


def test_an_ended_runs_range_is_its_datas_whatever_redraws_came_on_the_way():
    """The finished run's gradient-norm axis showed 0.5-4.5 or 0-4.5, by when redraws came."""
    every_step, few = list(range(1, 31)), [1, 5, 30]
    # while the run grows, a held range stays where the redraws left it (steady, on purpose)
    assert redrawn_at(every_step, ended=False)[1] == (0.5, 4.5)
    assert redrawn_at(few, ended=False)[1] == (0.0, 4.5)
    # ended, both show the range the data decides: 0.48 - 5% of the span rounds down to 0
    fitted = steady_range((0.48, 3.9), None)
    assert fitted == (0.0, 4.5)
    axis, shown = redrawn_at(every_step, ended=True)
    assert shown == redrawn_at(few, ended=True)[1] == fitted
    # and it holds: a pen's width more or less in the reported extent moves nothing
    assert axis.show((0.47, 3.91)) == axis.show((0.49, 3.89)) == fitted
