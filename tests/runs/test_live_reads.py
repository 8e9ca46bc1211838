"""Reading a run while it trains: readers take the newest intact checkpoint and hold the run's
checkpoints from rotation while they load it (or retry once on the next), so reads during a
run that saves and rotates every step all succeed (issue 42: 8 of 8 failed, the checkpoint
picked was deleted under them)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tfstudio.presets import load_preset
from tfstudio.runs.checkpoint import find_checkpoint, held_from_rotation, save_checkpoint, step_of
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder
from tfstudio.train.events import CheckpointSaved
from tfstudio.train.trainer import Trainer
from train_stand_ins import TINY

ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition, timeout=120.0, what="the condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.01)


@pytest.mark.slow
def test_eight_concurrent_reads_while_a_run_saves_and_rotates_every_step_all_succeed(tmp_path):
    run = tmp_path / "run"
    config = TrainConfig(**{**TINY, "steps": 100000, "device": "cpu", "checkpoint_every": 1,
                            "keep_checkpoints": 1})
    saved = []
    trainer = Trainer(load_preset("tiny-gpt"), config, run_dir=run,
                      listeners=[lambda e: saved.append(e.step) if isinstance(
                          e, CheckpointSaved) else None])
    training = threading.Thread(target=trainer.run)
    training.start()
    try:
        wait_for(lambda: saved, what="the first checkpoint")
        results: list = [None] * 8

        def read(i):
            try:  # each reads again and again until the run has saved twice meanwhile
                start, reads = len(saved), 0
                while len(saved) < start + 2 and reads < 200:
                    RunFolder(run).load_model("cpu", memory_check=False)
                    reads += 1
                results[i] = "ok"
            except Exception as exc:  # noqa: BLE001 - the failure is the test's finding
                results[i] = f"{type(exc).__name__}: {exc}"
        first = len(saved)
        readers = [threading.Thread(target=read, args=(i,)) for i in range(8)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
        assert results == ["ok"] * 8
        assert len(saved) > first  # the run went on saving (and rotating) while they read
    finally:
        trainer.stop()
        training.join()
    assert len([p for p in (run / "checkpoints").iterdir() if p.name.startswith("step-")]) == 1


@pytest.fixture
def saved_run(tmp_path):
    run = tmp_path / "run"
    config = TrainConfig(**{**TINY, "steps": 2, "device": "cpu", "checkpoint_every": 1,
                            "keep_checkpoints": 1})
    assert Trainer(load_preset("tiny-gpt"), config, run_dir=run).run().reason == "completed"
    return run


def save_during_the_read(monkeypatch, run, saves, bypass_hold=False):
    """The live run saves ``saves`` checkpoints (keep_last 1) just as a reader starts
    loading the one it picked; with ``bypass_hold`` the picked one is deleted first, as by a
    save that began before the reader's hold."""
    import shutil

    import tfstudio.runs.folder as folder_module
    real = folder_module.load_checkpoint
    model = RunFolder(run).load_model("cpu")
    step = [step_of(find_checkpoint(run / "checkpoints").path)]

    def load_checkpoint(path, *args, **kwargs):
        if saves:
            if bypass_hold:
                shutil.rmtree(path)
            for _ in range(saves.pop()):
                step[0] += 1
                save_checkpoint(run / "checkpoints", step[0], model, None,
                                {"data": {"sampler": {}}}, keep_last=1)
        return real(path, *args, **kwargs)
    monkeypatch.setattr(folder_module, "load_checkpoint", load_checkpoint)


def test_a_reader_keeps_the_checkpoint_it_loads_from_a_run_saving_meanwhile(saved_run,
                                                                            monkeypatch):
    save_during_the_read(monkeypatch, saved_run, [2])
    model = RunFolder(saved_run).load_model("cpu")  # the old code: its checkpoint was pruned
    assert model is not None
    assert len(list((saved_run / "checkpoints").glob("step-*"))) == 3  # none pruned meanwhile


def test_a_checkpoint_deleted_before_the_hold_is_retried_once_on_the_newest(saved_run,
                                                                           monkeypatch):
    save_during_the_read(monkeypatch, saved_run, [1], bypass_hold=True)
    folder = RunFolder(saved_run)
    model = folder.load_model("cpu")
    assert model is not None and step_of(folder.latest()) == 3


def test_a_checkpoint_rotated_away_while_it_is_verified_is_not_called_damaged(tmp_path,
                                                                              monkeypatch):
    """A run saving every step prunes the checkpoint a reader is verifying: the reader takes
    the next one and says nothing was damaged (it said "skipped a damaged checkpoint ...
    state.json is missing; delete the damaged folder")."""
    import shutil

    import torch

    from tfstudio.runs import checkpoint as checkpoint_module
    model = torch.nn.Linear(2, 2)
    folder = tmp_path / "checkpoints"
    for step in (1, 2, 3):
        save_checkpoint(folder, step, model, None, {}, keep_last=5)
    real = checkpoint_module.checkpoint_problem

    def rotated_while_read(path):
        if path.name in ("step-00000003", "step-00000002"):    # LATEST's, then the next
            shutil.rmtree(path)
        return real(path)
    monkeypatch.setattr(checkpoint_module, "checkpoint_problem", rotated_while_read)
    choice = find_checkpoint(folder)
    assert choice.path.name == "step-00000001" and choice.skipped == []
    # a folder that stays, damaged, is still named
    monkeypatch.setattr(checkpoint_module, "checkpoint_problem", real)
    save_checkpoint(folder, 4, model, None, {}, keep_last=5)
    (folder / "step-00000004" / "state.json").unlink()
    damaged = find_checkpoint(folder)
    assert damaged.path.name == "step-00000001" and len(damaged.skipped) == 1
    assert "step-00000004" in damaged.skipped[0] and "missing" in damaged.skipped[0]


def test_a_held_run_keeps_every_checkpoint_until_the_reader_ends(tmp_path):
    """While a reader holds the checkpoints, saves delete none; the next save after it
    ends prunes them back to keep_last."""
    import torch
    model = torch.nn.Linear(2, 2)
    folder = tmp_path / "checkpoints"
    save_checkpoint(folder, 1, model, None, {}, keep_last=1)
    with held_from_rotation(folder):
        for step in (2, 3):
            save_checkpoint(folder, step, model, None, {}, keep_last=1)
        assert sorted(p.name for p in folder.glob("step-*")) == [
            "step-00000001", "step-00000002", "step-00000003"]
    save_checkpoint(folder, 4, model, None, {}, keep_last=1)
    assert sorted(p.name for p in folder.glob("step-*")) == ["step-00000004"]
    assert not list(folder.glob(".reader.*"))


def test_a_killed_readers_hold_is_ignored(tmp_path):
    import torch
    model = torch.nn.Linear(2, 2)
    folder = tmp_path / "checkpoints"
    save_checkpoint(folder, 1, model, None, {}, keep_last=1)
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    (folder / f".reader.{proc.pid}.0").touch()  # what a reader killed mid-read leaves
    save_checkpoint(folder, 2, model, None, {}, keep_last=1)
    assert sorted(p.name for p in folder.glob("step-*")) == ["step-00000002"]


def cli(*args):
    return [sys.executable, "-m", "tfstudio", *args]


@pytest.mark.slow
def test_eight_commands_read_a_run_while_it_trains(tmp_path):
    """generate, eval, explain and export, two of each at once, on a run saving and rotating
    every step: all exit 0."""
    run = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    trainer = subprocess.Popen(cli("train", "tiny-gpt", "--out", str(run), "--corpus",
                                   "sample:small", "--tokenizer", "byte", "--batch-size", "2",
                                   "--seq-len", "32", "--eval-every", "0", "--steps", "1000000",
                                   "--checkpoint-every", "1", "--keep-checkpoints", "1"),
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        wait_for(lambda: find_checkpoint(run / "checkpoints").path is not None,
                 what="the first checkpoint")
        first = step_of(find_checkpoint(run / "checkpoints").path)
        commands = []
        for i in range(2):
            commands += [cli("generate", str(run), "--prompt", "Once", "--max-new-tokens", "8"),
                         cli("eval", str(run), "--lengths", "16,32"),
                         cli("explain", str(run), "--text", "Once upon a time"),
                         cli("export", str(run), "--out", str(tmp_path / f"hf{i}"))]
        readers = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for c in commands]
        ends = [(r.args[3], *r.communicate(timeout=300), r.returncode) for r in readers]
        failed = [(name, err) for name, _, err, code in ends if code != 0]
        assert failed == []
        assert trainer.poll() is None
        assert step_of(find_checkpoint(run / "checkpoints").path) > first  # it went on
    finally:
        trainer.terminate()
        trainer.communicate(timeout=60)
