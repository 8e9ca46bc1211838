"""The weights the GUI owns, without Qt (gui/training/model_host.py): which checkpoint of a run
folder a step asks for loads, run here on a worker that answers at once (the app's worker is
Qt's: test_background_jobs.py)."""
from __future__ import annotations

import hashlib
import json
import shutil

import torch

from tfstudio.gui.training.model_host import ModelHost


class AtOnce:
    """A worker that runs each job when it is submitted."""

    def submit(self, job, done, key="", error=None, **_):
        done(job())
        return 1


def loaded(run_dir, step=None) -> ModelHost:
    host, done = ModelHost(AtOnce()), []
    host.load(run_dir, lambda: done.append(True), error=None, step=step)
    assert done == [True] and host.ready and host.run_dir == run_dir
    return host


def test_a_run_loads_its_newest_weights_or_those_kept_nearest_a_step(finished_run):
    """finished_run keeps checkpoints at steps 1 and 2."""
    torch.set_num_threads(1)
    assert loaded(finished_run).step == 2
    assert loaded(finished_run, step=1).step == 1
    assert loaded(finished_run, step=5).step == 2          # past the last: the last
    host = loaded(finished_run, step=1)
    assert host.checkpoint.name.endswith("1") and host.skipped == []
    host.clear()
    assert not host.ready and host.run_dir is None and host.checkpoint is None


def test_a_damaged_checkpoint_is_passed_over_for_the_next_nearest(finished_run, tmp_path):
    run = shutil.copytree(finished_run, tmp_path / "run")
    first = sorted(p for p in (run / "checkpoints").iterdir() if p.is_dir())[0]
    for weights in first.glob("*.safetensors"):
        weights.write_bytes(b"damaged")
    host = loaded(run, step=1)
    assert host.step == 2 and host.checkpoint.name.endswith("2")


def moved_to_step(checkpoint, step: int):
    """``checkpoint`` made the one kept at ``step``: its folder, its state and its manifest."""
    state = checkpoint / "state.json"
    data = json.loads(state.read_text())
    data["step"] = step
    state.write_text(json.dumps(data))
    manifest = json.loads((checkpoint / "manifest.json").read_text())
    manifest["files"]["state.json"] = {"bytes": state.stat().st_size,
                                       "sha256": hashlib.sha256(state.read_bytes()).hexdigest()}
    (checkpoint / "manifest.json").write_text(json.dumps(manifest))
    return checkpoint.rename(checkpoint.with_name(f"step-{step:08d}"))


def test_between_two_checkpoints_the_earlier_one_loads(finished_run, tmp_path):
    """Checkpoints kept at steps 1 and 3: step 2 is as near to both, and the earlier loads."""
    run = shutil.copytree(finished_run, tmp_path / "run")
    second = sorted(p for p in (run / "checkpoints").iterdir() if p.is_dir())[-1]
    (run / "checkpoints" / "LATEST").write_text(moved_to_step(second, 3).name)
    assert loaded(run).step == 3                              # a checkpoint like any other
    host = loaded(run, step=2)
    assert host.checkpoint.name == "step-00000001" and host.step == 1
