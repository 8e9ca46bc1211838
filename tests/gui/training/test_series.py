"""A run's numbers as the Train workspace writes them (gui/training/series.py, no Qt): the
progress line under the bar, from the run's own series and state. Each part flips with the data
it comes from; the panel that shows it: test_training.py."""
from __future__ import annotations

from types import SimpleNamespace

from tfstudio.gui.training.series import (RunSeries, duration, header_line, latest_figures,
                                          progress_line, still_logging)

NBSP = "\u00a0"


def series(steps: int = 30, total: int = 100, seconds_per_step: float = 2.0) -> RunSeries:
    return RunSeries("tiny-gpt · 08:00:00", steps=list(range(1, steps + 1)),
                     loss=[3.0 - 0.01 * i for i in range(steps)],
                     tokens_per_s=[100.0] * (steps - 20) + [300.0] * 20,
                     elapsed_s=[seconds_per_step * i for i in range(1, steps + 1)],
                     total_steps=total)


def run(state: str, active: bool, reason: str | None = None):
    """A training run as the line reads it: its state, whether it trains, why it ended."""
    return SimpleNamespace(state=state, active=active,
                           end_event=SimpleNamespace(reason=reason) if reason else None)


def parts(line: str) -> list[str]:
    return [part.replace(NBSP, " ") for part in line.split(" · ")]


def test_a_training_runs_line_gives_its_figures_speed_and_time_left():
    line = progress_line(series(), run("running", True))
    # 70 steps left at 2 s a step; the speed is the mean of the last 20 steps, not the last one
    assert parts(line) == ["step 30 of 100", "loss 2.7100", "300 tokens/s", "ETA 2:20"]
    assert all(" " not in part for part in line.split(" · "))  # wraps between parts only
    assert parts(progress_line(series(seconds_per_step=60.0), run("running", True)))[-1] == \
        "ETA 1:10:00"


def test_a_paused_or_ended_run_counts_no_time_left():
    assert parts(progress_line(series(), run("paused", True)))[-1] == "paused"
    ended = parts(progress_line(series(), run("finished", False, "stopped")))
    assert ended[-1] == "300 tokens/s" and not any(p.startswith("ETA") for p in ended)


def test_a_line_that_follows_a_run_the_views_do_not_show_names_it_and_its_state():
    assert progress_line(series(), run("running", True), named=True).startswith(
        f"tiny-gpt{NBSP}·{NBSP}08:00:00{NBSP}(training): step")
    for state, active, reason, said in (("finished", False, "stopped", "stopped"),
                                        ("finished", False, "completed", "completed"),
                                        ("failed", False, "error", "failed")):
        line = progress_line(series(), run(state, active, reason), named=True)
        assert line.replace(NBSP, " ").startswith(f"tiny-gpt · 08:00:00 ({said}): "), line


def test_a_duration_reads_as_a_clock():
    assert [duration(s) for s in (0.4, 42, 59.6, 61, 3599, 3600, 3725)] == \
        ["0 s", "42 s", "1:00", "1:01", "59:59", "1:00:00", "1:02:05"]


def test_the_curves_header_names_the_run_shown_and_its_newest_figures_each_with_its_step():
    series = RunSeries("tiny-gpt", steps=[10, 22], loss=[2.9, 2.50561], total_steps=400,
                       val_steps=[20], val_loss=[2.612], accuracy=[0.4])
    assert header_line("tiny-gpt · 04:33:47", latest_figures(series)) == (
        "tiny-gpt · 04:33:47 · step 22 of 400 · loss 2.5056 · val 2.6120 at step 20 · acc 40% "
        "at step 20")
    at_newest = RunSeries("tiny-gpt", steps=[10, 20], loss=[2.9, 2.5], val_steps=[20],
                          val_loss=[2.612], accuracy=[0.4])  # evaluated at its newest step
    assert latest_figures(at_newest) == "step 20 · loss 2.5000 · val 2.6120 · acc 40%"
    assert header_line("r", latest_figures(RunSeries("r"))) == "r · no step logged yet"


def test_plots_hold_their_range_while_any_run_drawn_still_logs_points():
    live, done, stopped = RunSeries("a"), RunSeries("b"), RunSeries("c")
    done.end, stopped.end = "completed", "stopped"
    assert still_logging([live, done])              # one run still trains
    assert not still_logging([done, stopped])       # every one ended: fit the data
    assert not still_logging([])                    # nothing drawn grows
