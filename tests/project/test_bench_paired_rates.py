"""The latency bench's paired measures (bench/bench_gui_latency.py, ``--paired`` and
``--threads-paired``): a segment's step rate over its neighbours', on step logs made up from
known rates."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_gui_latency import PAIRED_FROM_STEP, ThreadToggle, neighbour_ratios  # noqa: E402

from tfstudio.train.events import EvalMetrics, StepMetrics  # noqa: E402

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


def test_the_thread_toggle_reads_the_rate_on_fewer_threads_over_all():
    """A made-up trainer that steps at 100/s on two threads and 92/s on one, fed to the
    toggle as the trainer feeds its listeners: the toggle sets the threads it steps on."""
    threads = [2]
    toggle = ThreadToggle(1, 2, set_threads=lambda n: threads.__setitem__(0, n),
                          segment_s=SEGMENT_S)
    t, switched_at = 0.0, []
    for step in range(1, 3000):
        t += 1 / (100.0 if threads[0] == 2 else 92.0)
        before = threads[0]
        toggle(StepMetrics(step, 1.0, 1e-3, 1.0, {}, 1e4, t, 1024 * step))
        toggle(EvalMetrics(step, 1.0, 2.7, None))  # other events are not steps
        if threads[0] != before:
            switched_at.append((step, t))
    assert toggle.steps == list(range(1, 3000))
    assert toggle.bounds[0] == (pytest.approx(PAIRED_FROM_STEP / 100.0), False)  # on all first
    assert switched_at[0][0] > PAIRED_FROM_STEP
    gaps = [b - a for (_, a), (_, b) in zip(switched_at, switched_at[1:])]
    assert gaps and all(SEGMENT_S <= g < SEGMENT_S + 0.02 for g in gaps)
    ratios = toggle.ratios()
    assert len(ratios) >= 3
    assert ratios == pytest.approx([0.92] * len(ratios), abs=0.01)


def test_the_thread_toggle_without_steps_past_the_start_has_nothing_to_say():
    toggle = ThreadToggle(1, 2, set_threads=lambda n: pytest.fail("switched too early"))
    for step in range(1, PAIRED_FROM_STEP):
        toggle(StepMetrics(step, 1.0, 1e-3, 1.0, {}, 1e4, step / 100, 1024 * step))
    assert toggle.ratios() == []


def test_the_verdict_judges_latency_and_the_paired_measure_not_the_cli_ratio():
    from bench_gui_latency import passes, verdict_line

    tabs = {"curves": {"p99": 12.0, "gui_over_cli": 0.40},  # a ratio far below the old 0.95
            "attention": {"p99": 9.5, "gui_over_cli": 0.45}}
    paired = {"curves": {"median": 0.985}, "attention": {"median": 0.990}}
    assert verdict_line(tabs, paired) == "worst_tab_p99_ms=12.0 paired_min=0.985"
    assert passes(tabs, paired)
    paired["attention"]["median"] = 0.95  # the GUI takes 5% of the trainer on one tab
    assert verdict_line(tabs, paired).endswith("paired_min=0.950") and not passes(tabs, paired)
    paired["attention"]["median"] = 0.99
    tabs["curves"]["p99"] = 17.0  # a frame missed at 60 Hz
    assert not passes(tabs, paired)
    assert not passes(tabs, {})   # a measure not taken is not a pass
