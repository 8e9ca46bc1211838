"""What the GUI does with a run's events and commands, without Qt
(gui/training/run_events.py): a drain's metrics into the series, its looks inside in order, its
start and end; the state each command leads to. A real run drained on its timer:
test_training.py."""
from __future__ import annotations

from tfstudio.gui.training.run_events import after_command, ended_state, take_events
from tfstudio.gui.training.series import RunSeries
from tfstudio.train.events import (CheckpointSaved, EvalMetrics, Failed, Finished, Probe,
                                   Started, StepMetrics)


def step(n: int, loss: float) -> StepMetrics:
    return StepMetrics(n, loss=loss, lr=1e-3, grad_norm=1.0, layer_grad_norms={},
                       tokens_per_s=100.0, elapsed_s=0.1 * n, tokens_seen=64 * n)


def test_a_drain_puts_the_metrics_in_the_series_and_keeps_every_look_in_order():
    series = RunSeries("tiny-gpt · 08:00:00")
    started = Started(0, total_steps=4, params=1234, device="cpu", precision="fp32",
                      objective="next-token")
    drained = take_events([started, step(1, 3.0), Probe(1, {"step": 1}), step(2, 2.5),
                           Probe(2, {"step": 2}), EvalMetrics(2, val_loss=2.6, perplexity=13.5),
                           CheckpointSaved(2, "/runs/a/checkpoints/step-2")], series)
    assert drained.started is started and drained.progressed and drained.end is None
    assert drained.probes == [{"step": 1}, {"step": 2}]           # the oldest first
    assert series.steps == [1, 2] and series.loss == [3.0, 2.5] and series.val_loss == [2.6]
    assert series.params == 1234 and series.total_steps == 4
    quiet = take_events([CheckpointSaved(3, "/c"), Probe(3, {"step": 3})], series)
    assert not quiet.progressed and quiet.started is None and quiet.probes == [{"step": 3}]
    assert take_events([], series) == type(quiet)()                # nothing: nothing to signal
    evaluated = take_events([EvalMetrics(4, val_loss=2.2, perplexity=9.0)], series)
    assert evaluated.progressed and series.val_loss == [2.6, 2.2]   # a new point to draw


def test_a_drain_ends_the_run_finished_or_failed():
    series = RunSeries("a")
    done = take_events([step(4, 1.0), Finished(4, "completed", 1.0)], series)
    assert isinstance(done.end, Finished) and ended_state(done.end) == "finished"
    failed = take_events([Failed(5, "nan", "the loss stopped being a number")], series)
    assert ended_state(failed.end) == "failed" and not failed.progressed


def test_pause_resume_and_stop_are_sent_only_in_the_states_they_change():
    assert after_command("running", "pause") == "paused"
    assert after_command("paused", "pause") is None
    assert after_command("paused", "resume") == "running"
    assert after_command("running", "resume") is None
    assert after_command("running", "stop") == after_command("paused", "stop") == "stopping"
    for state in ("idle", "stopping", "finished", "failed"):
        assert after_command(state, "stop") is None and after_command(state, "pause") is None
