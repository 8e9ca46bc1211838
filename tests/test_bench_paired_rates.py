"""The latency bench's paired measure (bench/bench_gui_latency.py, ``--paired``): a running
segment's step rate over its asleep neighbours', on step logs made up from known rates."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_gui_latency import neighbour_ratios  # noqa: E402

SEGMENT_S = 3.0


def step_log(rate_at, seconds: float) -> tuple[list[int], list[float]]:
    """Steps 0, 1, 2, ... at the times a trainer running at ``rate_at(t)`` steps/s logs them."""
    steps, at, t = [0], [0.0], 0.0
    while t < seconds:
        t += 1 / rate_at(t)
        steps.append(steps[-1] + 1)
        at.append(t)
    return steps, at


def alternating(segments: int, first_runs: bool = True) -> list[tuple[float, bool | None]]:
    bounds = [(k * SEGMENT_S, (k % 2 == 0) == first_runs) for k in range(segments)]
    return bounds + [(segments * SEGMENT_S, None)]


def test_a_constant_cost_reads_as_itself():
    bounds = alternating(9)  # runs, sleeps, runs, ...: four running segments have both sides

    def rate(t):  # 100 steps/s asleep, 10% fewer while the event loop runs
        return 90.0 if int(t // SEGMENT_S) % 2 == 0 else 100.0

    ratios = neighbour_ratios(bounds, *step_log(rate, 9 * SEGMENT_S))
    assert len(ratios) == 3  # segments 2, 4, 6 (0 has no asleep one before it; 8 none after)
    assert ratios == pytest.approx([0.9] * 3, abs=0.01)


def test_a_machine_slowing_steadily_does_not_read_as_cost():
    bounds = alternating(11)

    def rate(t):  # the same speed awake or asleep, the machine 40% slower by the end
        return 100.0 * (1 - 0.4 * t / (11 * SEGMENT_S))

    ratios = neighbour_ratios(bounds, *step_log(rate, 11 * SEGMENT_S))
    assert len(ratios) == 4
    assert ratios == pytest.approx([1.0] * 4, abs=0.01)
    # a comparison of whole segments far apart would read the drift as a cost of ~30%
    assert rate(10 * SEGMENT_S) / rate(0) < 0.7


def test_segments_with_too_few_steps_are_left_out():
    bounds = alternating(5)
    steps, at = step_log(lambda t: 2.0, 5 * SEGMENT_S)  # ~5 steps per segment
    assert neighbour_ratios(bounds, steps, at) == []
