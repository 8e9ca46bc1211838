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
import threading
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


def sampler_step(trainer) -> int:
    """Micro-batches the run's data has served (0 before the data is built)."""
    try:
        return trainer.pipeline.state_dict()["sampler"]["step"]
    except AttributeError:
        return 0


def signal_when(condition, *signums, timeout: float = 60.0) -> threading.Thread:
    """A thread that sends this process ``signums`` once ``condition()`` holds (polled)."""
    def watch():
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.005)
        sent.append(time.monotonic())
        for signum in signums:
            os.kill(os.getpid(), signum)
    sent: list[float] = []
    thread = threading.Thread(target=watch, daemon=True)
    thread.sent = sent
    thread.start()
    return thread


def test_a_stop_between_micro_batches_answers_at_once_and_gives_the_step_up(tmp_path):
    """SIGTERM lands inside a step of 5,000 micro-batches (the old loop ran them all first)."""
    from tfstudio.train.signals import StopOnSignals
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=2, grad_accum=5000),
                      run_dir=tmp_path / "run")
    watcher = signal_when(lambda: trainer.session is not None and sampler_step(trainer) >= 3,
                          signal.SIGTERM)
    with StopOnSignals(trainer.stop, abandon=trainer.abandon) as signals:
        end = trainer.run()
    answered = time.monotonic() - watcher.sent[0]
    assert signals.received == signal.SIGTERM
    assert isinstance(end, Finished) and end.reason == "stopped" and end.step == 0
    assert answered < 2.0, f"the stop took {answered:.1f} s"
    assert sampler_step(trainer) == 0  # the given-up step's micro-batches are put back


def test_a_second_sigint_before_any_checkpoint_still_saves_the_last_whole_step(tmp_path):
    """Two Ctrl+C inside a forward pass, no checkpoint yet (--checkpoint-every 0): the second
    gives the step up at once (the old handler ended the process, saving nothing); the run
    saves the steps before it, and resuming continues with no gap."""
    from tfstudio.runs.checkpoint import read_state
    from tfstudio.train.signals import StopOnSignals
    run, accum = tmp_path / "run", 4
    config = tiny_config(steps=100000, grad_accum=accum, checkpoint_every=0, log_every=1)
    trainer = Trainer(load_preset("tiny-gpt"), config, run_dir=run)
    forwards_after = []

    def press_twice(module, inputs):
        if forwards_after:
            forwards_after.append(1)
        elif trainer.step >= 2 and sampler_step(trainer) % accum == 2:
            forwards_after.append(0)
            # os.kill from this thread runs the handler before it returns: two presses,
            # the second while this forward pass is still going
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            forwards_after.append("the forward pass went on")

    def on_start(event):
        if isinstance(event, Started):
            trainer.model.register_forward_pre_hook(press_twice)
    trainer.listeners.append(on_start)
    with StopOnSignals(trainer.stop, abandon=trainer.abandon) as signals:
        end = trainer.run()
    assert signals.abandoned and end.reason == "stopped" and end.step >= 2, end
    assert forwards_after == [0], forwards_after  # cut short at the second press
    saved = find_checkpoint(run / "checkpoints").path
    assert saved is not None and step_of(saved) == end.step
    # the data position is that of the whole steps: the half step's batches were put back
    assert read_state(saved)["data"]["sampler"]["step"] == end.step * accum
    again = Trainer(load_preset("tiny-gpt"), tiny_config(**{**config.to_dict(),
                                                             "steps": end.step + 1}),
                    run_dir=run, resume=True)
    assert again.run().reason == "completed"
    assert logged_steps(run)[-2:] == [end.step, end.step + 1]


def test_a_third_signal_ends_the_process_at_once(tmp_path):
    script = ("import os, signal, time\n"
              "from tfstudio.train.signals import StopOnSignals\n"
              "calls = []\n"
              "with StopOnSignals(lambda: calls.append('stop'),\n"
              "                   abandon=lambda: calls.append('abandon')) as s:\n"
              "    for _ in range(2):\n"
              "        os.kill(os.getpid(), signal.SIGTERM)\n"
              "        time.sleep(0.05)\n"
              "    assert calls == ['stop', 'abandon'], calls\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "    time.sleep(5)\n"
              "raise SystemExit(0)\n")
    done = subprocess.run([sys.executable, "-c", script], env=cli_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130, done.stderr


@pytest.mark.slow
def test_sigterm_is_answered_within_seconds_with_a_billion_micro_batches(tmp_path):
    run = tmp_path / "run"
    proc = subprocess.Popen(train_command(run, "--grad-accum", "1000000000", "--steps", "2"),
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while not ((run / "metrics.jsonl").exists() and any(
            isinstance(e, Started) for e in read_events(run / "metrics.jsonl"))):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10, err
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == ("tfstudio train: stopped at step 0, before any "
                                            "training step; nothing to save")


@pytest.mark.slow
def test_two_sigints_before_the_first_checkpoint_save_the_steps_trained(tmp_path):
    run = tmp_path / "run"
    proc = start_training(run, "--checkpoint-every", "0", "--grad-accum", "50")
    proc.send_signal(signal.SIGINT)
    lines = []
    while not lines or "stopping after this step" not in lines[-1]:
        lines.append(proc.stderr.readline())
        assert lines[-1], "".join(lines)
    proc.send_signal(signal.SIGINT)  # the second press, once the first was heard
    _, err = proc.communicate(timeout=60)
    err = "".join(lines) + err
    assert proc.returncode == 130, err
    saved = find_checkpoint(run / "checkpoints").path
    assert saved is not None, err
    assert err.strip().splitlines()[-1] == (f"tfstudio train: stopped at step {step_of(saved)}; "
                                            "checkpoint saved; continue with --resume")
