"""Only every WALK_KEPT_EVERY-th look inside takes the walk (a walk is a third of a snapshot file
and more time than the rest of the look), in its event and its file alike, and Explain says
which step's walk it shows when a newer look has none."""
from __future__ import annotations

import pytest
import torch

import tfstudio
from tfstudio.gui.training.explain_view import ExplainView
from tfstudio.probes import SnapshotStore
from tfstudio.probes.snapshot import WALK_KEPT_EVERY, keeps_walk
from tfstudio.runs import TrainConfig
from tfstudio.train.trainer import Trainer

torch.set_num_threads(1)


def test_every_fifth_look_takes_the_walk():
    assert WALK_KEPT_EVERY == 5
    kept = [step for step in range(0, 201, 10) if keeps_walk(step, 10)]
    assert kept == [0, 50, 100, 150, 200]
    assert [s for s in range(13) if keeps_walk(s, 1)] == [0, 5, 10]
    assert keeps_walk(7, 0) == keeps_walk(7, 1)   # never probing divides by nothing


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 12-step run looking inside at every step, and the looks it emitted."""
    cfg = TrainConfig(tokenizer="byte", steps=12, batch_size=2, seq_len=32, eval_every=100,
                      log_every=1, probe_every=1)
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), cfg,
                      run_dir=tmp_path_factory.mktemp("walks") / "run")
    looks = []
    trainer.listeners.append(lambda e: looks.append(e) if type(e).__name__ == "Probe" else None)
    assert trainer.run().kind == "Finished"
    return SnapshotStore(trainer.run_folder.path), looks


def test_a_run_takes_the_walk_at_every_fifth_look_only(run):
    store, looks = run
    assert store.steps() == list(range(13))
    assert [s for s in store.steps() if "walk" in store.load(s)] == [0, 5, 10]
    assert [e.data["step"] for e in looks] == list(range(13))
    assert [e.data["step"] for e in looks if "walk" in e.data] == [0, 5, 10]


def test_explain_names_the_step_of_the_walk_it_shows(qtbot, run):
    store, _ = run
    view = ExplainView()
    qtbot.addWidget(view)
    view.show_snapshot(store.load(10))
    assert view.snapshot_step == 10 and view.status.text().startswith("Training, step 10:")
    shown = len(view.pictures())
    view.show_snapshot(store.load(12))             # its file kept no walk
    assert view.snapshot_step == 10 and len(view.pictures()) == shown
    assert "The look at step 12 carries no walk" in view.status.text()
    assert "this is still step 10's" in view.status.text()
