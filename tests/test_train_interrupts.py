"""Stopping is saving: a real ``tfstudio train`` sent SIGINT, SIGTERM or SIGHUP finishes its
step, saves a checkpoint and its metrics line, says so in one line and exits 128 + the signal;
``--resume`` then continues from that step. A second signal ends the process at once, losing
nothing already saved. The app's training process obeys the same signals, and a lock left by a
writer that died is taken over with a note naming it and the step resumed from."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfstudio.presets import load_preset
from tfstudio.runs.checkpoint import find_checkpoint, step_of
from tfstudio.runs.config import TrainConfig
from tfstudio.train.child import TrainingProcess
from tfstudio.train.events import Finished, Started, StepMetrics, read_events
from tfstudio.train.trainer import Trainer
from train_stand_ins import TINY

ROOT = Path(__file__).resolve().parents[1]
TINY_FLAGS = ["--corpus", "sample:small", "--tokenizer", "byte", "--batch-size", "2",
              "--seq-len", "16", "--eval-every", "0", "--warmup-steps", "0"]


def cli_env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")


def train_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tfstudio", "train", "tiny-gpt", "--out", str(out),
            *TINY_FLAGS, *extra]


def logged_steps(run: Path) -> list[int]:
    return [e.step for e in read_events(run / "metrics.jsonl") if isinstance(e, StepMetrics)]


def resume(out: Path, *extra: str) -> int:
    """``tfstudio train --resume`` in this process (the signals are the other process's)."""
    from tfstudio.cli import main
    return main(train_command(out, "--resume", *extra)[3:])


def start_training(out: Path, *extra: str) -> subprocess.Popen:
    """A long ``tfstudio train`` that has trained at least one step."""
    proc = subprocess.Popen(train_command(out, "--steps", "100000", "--log-every", "1", *extra),
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while not ((out / "metrics.jsonl").exists() and logged_steps(out)):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never trained a step"
        time.sleep(0.1)
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_saves_the_step_it_stopped_at_and_resume_continues_from_it(tmp_path, signum):
    run = tmp_path / "run"
    proc = start_training(run)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    stopped = find_checkpoint(run / "checkpoints").path
    assert stopped is not None, err
    step = step_of(stopped)
    last = err.strip().splitlines()[-1]
    assert last == f"tfstudio train: stopped at step {step}; checkpoint saved; continue with " \
                   "--resume"
    events = read_events(run / "metrics.jsonl")
    assert logged_steps(run)[-1] == step  # the metrics line of the step it stopped at
    assert isinstance(events[-1], Finished) and events[-1].reason == "stopped"
    assert events[-2].kind == "CheckpointSaved" and events[-2].step == step
    if signum != signal.SIGINT:
        return
    assert resume(run, "--steps", str(step + 2), "--log-every", "1") == 0
    steps = logged_steps(run)
    assert steps[-3:] == [step, step + 1, step + 2]  # no step lost, none trained twice


@pytest.mark.slow
def test_a_second_sigint_ends_at_once_and_keeps_every_saved_checkpoint(tmp_path):
    run = tmp_path / "run"
    proc = start_training(run, "--checkpoint-every", "1")
    while find_checkpoint(run / "checkpoints").path is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    saved = find_checkpoint(run / "checkpoints")
    assert saved.path is not None and not saved.skipped, saved.skipped
    assert resume(run, "--steps", str(step_of(saved.path) + 1)) == 0
    assert not list((run / "checkpoints").glob(".*.partial"))


def test_a_second_signal_exits_with_its_code_without_calling_stop_again(tmp_path):
    script = ("import os, signal, time\n"
              "from tfstudio.train.signals import StopOnSignals\n"
              "calls = []\n"
              "with StopOnSignals(lambda: calls.append(1)) as s:\n"
              "    os.kill(os.getpid(), signal.SIGTERM)\n"
              "    time.sleep(0.2)\n"
              "    assert calls == [1] and s.received == signal.SIGTERM, calls\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "    time.sleep(5)\n"
              "raise SystemExit(0)\n")
    done = subprocess.run([sys.executable, "-c", script], env=cli_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130, done.stderr  # the second signal's own code, at once


def test_signal_handlers_are_restored_after_the_run():
    from tfstudio.train.signals import StopOnSignals
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignals(lambda: None):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def tiny_config(**changes) -> TrainConfig:
    return TrainConfig(**{**TINY, "steps": 3, "device": "cpu", **changes})


@pytest.mark.slow
def test_the_apps_training_process_saves_when_sent_sigterm(tmp_path):
    child = TrainingProcess(load_preset("tiny-gpt"), tiny_config(steps=100000, log_every=1),
                            tmp_path / "run")
    child.start()
    events = []
    for event in child.events():
        if isinstance(event, StepMetrics) and not any(isinstance(e, StepMetrics) for e in events):
            os.kill(child.pid, signal.SIGTERM)  # once: a second signal would end it at once
        events.append(event)
    end = events[-1]
    assert isinstance(end, Finished) and end.reason == "stopped", end
    assert events[-2].kind == "CheckpointSaved" and events[-2].step == end.step > 0
    assert step_of(find_checkpoint(tmp_path / "run" / "checkpoints").path) == end.step


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_writers_lock_is_taken_over_with_a_note_naming_it_and_the_step(tmp_path):
    run = tmp_path / "run"
    assert Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run().kind == "Finished"
    pid = dead_pid()
    (run / ".lock").write_text(f"{pid}\n")  # what a kill -9 mid-run leaves
    started = []
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=4), run_dir=run, resume=True,
                      listeners=[lambda e: started.append(e) if isinstance(e, Started) else 0])
    assert trainer.run().kind == "Finished"
    assert started[0].notes[0] == (
        f"the previous writer of this run (process {pid}) ended without finishing; resuming "
        "from its checkpoint of step 3 (steps it trained after that are trained again)")
    # a clean end leaves no PID behind: the next start has nothing to say
    again = []
    Trainer(load_preset("tiny-gpt"), tiny_config(steps=5), run_dir=run, resume=True,
            listeners=[lambda e: again.append(e) if isinstance(e, Started) else 0]).run()
    assert not any("previous writer" in n for n in again[0].notes)


@pytest.mark.parametrize("step, saved, line", [
    (41, 41, "stopped at step 41; checkpoint saved; continue with --resume"),
    (41, 40, "stopped at step 41; the checkpoint of step 40 is kept; continue with --resume"),
    (0, None, "stopped at step 0, before any training step; nothing to save"),
])
def test_the_stopped_line_says_what_is_on_disk(step, saved, line):
    from tfstudio.cli.train import stopped_line
    assert stopped_line(step, saved) == line
