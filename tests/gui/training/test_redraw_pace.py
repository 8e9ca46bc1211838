"""How often the Train workspace redraws while a run trains (gui/training/redraw_pace.py, no
Qt): a share of what the last redraw cost, within bounds."""
from __future__ import annotations

from tfstudio.gui.training.redraw_pace import (MAX_PROBE_WAIT_MS, MAX_REDRAW_MS,
                                               PLOT_REDRAW_MS, plot_interval_ms, probe_wait_ms)


def test_the_plots_redraw_four_times_a_second_unless_a_redraw_costs_more_than_its_share():
    assert plot_interval_ms(1.0) == PLOT_REDRAW_MS == 250   # a fast machine: 4 a second
    assert plot_interval_ms(6.0) == 400                      # 6 ms is 1.5 % of 400 ms
    assert plot_interval_ms(12.0) == 800                     # twice the cost, twice the wait
    assert plot_interval_ms(500.0) == MAX_REDRAW_MS          # never less than every 2 s


def test_a_live_look_waits_until_its_last_redraw_is_two_percent_of_the_time_since():
    # drawn at t=10 s for 20 ms: the next may come at 10 + 0.02 / 0.02 = 11 s
    assert probe_wait_ms(10.0, 0.020, 10.25) == 750
    assert probe_wait_ms(10.0, 0.020, 11.0) == 0             # due: now
    assert probe_wait_ms(10.0, 0.020, 12.0) == 0
    assert probe_wait_ms(10.0, 0.200, 10.0) == MAX_PROBE_WAIT_MS  # a slow redraw: 2 s at most
    assert probe_wait_ms(0.0, 0.0, 5.0) == 0                 # a new run: nothing drawn yet
