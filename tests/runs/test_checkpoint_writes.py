"""How checkpoints reach the disk, seen from a real (tiny) run: each is written under a
temporary name and appears under its final name only when whole; a write that fails leaves
LATEST on the previous checkpoint and no half-written folder under a checkpoint's name; pruning
keeps exactly ``keep_checkpoints`` (the newest)."""
import re

import pytest

import tfstudio
from tfstudio.runs.config import TrainConfig
from tfstudio.train.trainer import Trainer

TINY = dict(corpus="sample:small", tokenizer="byte", batch_size=2, seq_len=16,
            warmup_steps=0, eval_every=0, checkpoint_every=1)
STEP_FOLDER = re.compile(r"step-(\d+)")


def step_folders(checkpoints) -> list[int]:
    return sorted(int(m.group(1)) for p in checkpoints.iterdir()
                  if p.is_dir() and (m := STEP_FOLDER.fullmatch(p.name)))


def spy_on_optimizer_save(trainer: Trainer, during):
    """Calls ``during(step)`` while a checkpoint is being written: the optimizer's state is
    read then, after the checkpoint's folder exists and the weights are in it."""
    def on_event(event):
        if event.kind == "Started":
            real = trainer.optimizer.state_dict

            def state_dict():
                during(trainer.step)
                return real()
            trainer.optimizer.state_dict = state_dict
    trainer.listeners.append(on_event)


def test_checkpoint_appears_under_its_name_only_when_complete(tmp_path):
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=3),
                      run_dir=tmp_path)
    seen = []

    def during(step):
        names = [p.name for p in (tmp_path / "checkpoints").iterdir()]
        seen.append((step, names))
    spy_on_optimizer_save(trainer, during)
    assert trainer.run().kind == "Finished"
    assert [step for step, _ in seen] == [1, 2, 3]
    for step, names in seen:
        assert f"step-{step:08d}" not in names, f"step {step} written into its final folder"
        assert any(n.endswith(".partial") for n in names), names
    assert step_folders(tmp_path / "checkpoints") == [2, 3]


def test_failed_write_leaves_latest_on_the_previous_whole_checkpoint(tmp_path):
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=4),
                      run_dir=tmp_path)

    def during(step):
        if step == 2:
            raise OSError(28, "No space left on device")
    spy_on_optimizer_save(trainer, during)
    end = trainer.run()
    assert end.kind == "Failed" and end.step == 2
    checkpoints = tmp_path / "checkpoints"
    assert step_folders(checkpoints) == [1]  # no half-written step-00000002
    assert (checkpoints / "LATEST").read_text().strip() == "step-00000001"
    # and the run resumes from that checkpoint
    again = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=4),
                    run_dir=tmp_path, resume=True)
    starts = []
    again.listeners.append(lambda e: e.kind == "Started" and starts.append(e.step))
    assert again.run().kind == "Finished" and starts == [1]


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_pruning_keeps_exactly_the_newest(tmp_path, keep):
    steps = 5
    cfg = TrainConfig(**TINY, steps=steps, keep_checkpoints=keep)
    assert Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=tmp_path).run().kind \
        == "Finished"
    checkpoints = tmp_path / "checkpoints"
    assert step_folders(checkpoints) == list(range(steps - keep + 1, steps + 1))
    assert (checkpoints / "LATEST").read_text().strip() == f"step-{steps:08d}"
    assert not list(checkpoints.glob(".*.partial"))


def test_cleanup_removes_abandoned_partials_and_keeps_a_live_writers(tmp_path):
    """Found by mutation testing: a partial folder without a writer PID (older runs) or of a
    dead writer is removed on the next checkpoint; a live writer's partial is never touched."""
    import os
    import subprocess
    import sys

    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    legacy = checkpoints / ".step-00000009.partial"
    abandoned = checkpoints / f".step-00000009.{dead}.partial"
    live = checkpoints / f".step-00000009.{os.getppid()}.partial"   # our parent: alive
    for folder in (legacy, abandoned, live):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"half")
    cfg = TrainConfig(**{**TINY, "checkpoint_every": 0}, steps=1)
    assert Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=tmp_path,
                   overwrite=True).run().kind == "Finished"
    assert not legacy.exists() and not abandoned.exists()
    assert (live / "model.safetensors").read_bytes() == b"half"
    assert step_folders(checkpoints) == [1]
