"""A training run in a child process (tfstudio.train.child), as the app trains: the same losses
as the trainer in this process, commands obeyed, a killed child or parent reported or survived."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.train.child import TrainingProcess, training_threads
from tfstudio.train.events import Failed, Finished, Probe, StepMetrics
from tfstudio.train.trainer import Trainer


def tiny_config(**changes) -> TrainConfig:
    settings = dict(corpus="task:reverse", tokenizer="char", steps=6, batch_size=4, seq_len=16,
                    warmup_steps=2, eval_every=3, eval_batches=1, device="cpu")
    settings.update(changes)
    return TrainConfig(**settings)


def events_of(child: TrainingProcess) -> list:
    child.start()
    return list(child.events())


@pytest.mark.parametrize("leave, torch_default, cores, expected", [
    (1, 2, 2, 1),     # two cores: one for the event loop
    (1, 4, 4, 3),
    (1, 8, 16, 8),    # hyper-threads: never more than torch's own default
    (1, 2, 1, 1),     # at least one
    (1, 2, None, 1),  # the core count unknown
    (0, 2, 2, 2),
])
def test_the_child_leaves_cores_to_its_parent(leave, torch_default, cores, expected):
    assert training_threads(leave, torch_default, cores) == expected


@pytest.mark.slow
def test_a_child_run_trains_exactly_as_the_trainer_in_this_process(tmp_path):
    here = []
    Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=tmp_path / "here",
            listeners=[here.append]).run()
    there = events_of(TrainingProcess(load_preset("tiny-gpt"), tiny_config(),
                                      tmp_path / "child"))
    losses = [[e.loss for e in events if isinstance(e, StepMetrics)] for events in (here, there)]
    assert len(losses[1]) == 6 and losses[1] == losses[0]
    assert isinstance(there[-1], Finished) and there[-1].reason == "completed"
    assert (tmp_path / "child" / "checkpoints" / "LATEST").exists()


@pytest.mark.slow
def test_commands_sent_before_the_child_starts_reach_its_trainer(tmp_path):
    child = TrainingProcess(load_preset("tiny-gpt"), tiny_config(steps=400, probe_every=2),
                            tmp_path / "run")
    child.send("set", "probe_text", "olleh")
    child.send("stop")
    events = events_of(child)
    assert isinstance(events[-1], Finished) and events[-1].reason == "stopped"
    assert events[-1].step < 400
    assert all(e.data["text"] == "olleh" for e in events if isinstance(e, Probe))
    with pytest.raises(ValueError, match="unknown command 'explode'"):
        child.send("explode")


@pytest.mark.slow
def test_a_killed_child_is_reported_as_a_failure_that_says_how(tmp_path):
    child = TrainingProcess(load_preset("tiny-gpt"), tiny_config(steps=5000), tmp_path / "run")
    child.start()
    events = []
    for event in child.events():
        events.append(event)
        if isinstance(event, StepMetrics) and event.step == 3:
            os.kill(child.pid, signal.SIGKILL)
    assert isinstance(events[-1], Failed) and events[-1].reason == "error"
    assert events[-1].step >= 3
    assert "killed by signal 9" in events[-1].message and "resume" in events[-1].message


PARENT = textwrap.dedent("""
    import os, signal, sys
    from tfstudio.presets import load_preset
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.child import TrainingProcess
    from tfstudio.train.events import StepMetrics

    if __name__ == "__main__":
        config = TrainConfig(corpus="task:reverse", tokenizer="char", steps=100000,
                             batch_size=4, seq_len=16, device="cpu")
        child = TrainingProcess(load_preset("tiny-gpt"), config, sys.argv[1])
        child.start()
        for event in child.events():
            if isinstance(event, StepMetrics) and event.step == 3:
                os.kill(os.getpid(), signal.SIGKILL)  # the app dies mid-run
""")


@pytest.mark.slow
def test_a_child_whose_parent_is_killed_stops_and_saves_its_weights(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    run_dir = tmp_path / "run"
    parent = subprocess.run([sys.executable, str(script), str(run_dir)], timeout=120)
    assert parent.returncode == -signal.SIGKILL
    metrics = run_dir / "metrics.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = [json.loads(line) for line in metrics.read_text().splitlines()]
        if lines and lines[-1]["kind"] == "Finished":
            break
        time.sleep(0.2)
    assert lines[-1]["kind"] == "Finished" and lines[-1]["reason"] == "stopped"
    assert 3 <= lines[-1]["step"] < 100000
    assert (run_dir / "checkpoints" / "LATEST").exists()
