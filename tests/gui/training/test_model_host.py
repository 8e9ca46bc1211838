"""The weights the GUI owns, without Qt (gui/training/model_host.py): which checkpoint of a run
folder a step asks for loads, run here on a worker that answers at once (the app's worker is
Qt's: test_background_jobs.py)."""
from __future__ import annotations

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
