"""A full disk is a clear line: a checkpoint the disk refuses (ENOSPC, EFBIG) ends the run with
"no space left on ... while saving step N; the previous checkpoint (step M) is intact; free
space and --resume" (exit 2 on the command line), removes its half-written folder, and leaves
LATEST on the previous checkpoint; a failing metrics.jsonl never hides the first error; a
half-written folder of a writer that has ended is removed when the next run starts."""
from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import safetensors.torch
from safetensors import SafetensorError

from tfstudio.presets import load_preset
from tfstudio.runs.checkpoint import find_checkpoint
from tfstudio.runs.disk import disk_refusal
from tfstudio.runs.config import TrainConfig
from tfstudio.train.events import Failed, MetricsLog, read_events
from tfstudio.train.trainer import Trainer
from train_stand_ins import TINY, file_size_limit

ROOT = Path(__file__).resolve().parents[2]


def tiny_config(**changes) -> TrainConfig:
    return TrainConfig(**{**TINY, "steps": 4, "device": "cpu", "checkpoint_every": 2, **changes})


def full_disk_after(monkeypatch, saves: int, error: Exception) -> None:
    """The model file of every checkpoint after the first ``saves`` meets ``error`` (the
    checkpoint writer imports safetensors' save_model when it writes: replaced at its home)."""
    real = safetensors.torch.save_model
    count = [0]

    def save_model(model, filename, *args, **kwargs):
        count[0] += 1
        if count[0] > saves:
            with open(filename, "wb") as f:
                f.write(b"\0" * 1000)  # the disk took part of it before it filled
            raise error
        return real(model, filename, *args, **kwargs)
    monkeypatch.setattr(safetensors.torch, "save_model", save_model)


ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
# what safetensors raises for the same fault (its Rust side's words)
ENOSPC_RUST = SafetensorError("Error while serializing: I/O error: No space left on device "
                              "(os error 28)")


@pytest.mark.parametrize("error", [ENOSPC, ENOSPC_RUST], ids=["OSError", "SafetensorError"])
def test_a_full_disk_while_saving_ends_in_one_line_and_keeps_the_previous_checkpoint(
        tmp_path, monkeypatch, error):
    run = tmp_path / "run"
    full_disk_after(monkeypatch, saves=1, error=error)
    end = Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run()
    assert isinstance(end, Failed) and end.reason == "disk"
    assert end.message == (f"the disk of {run} is full while saving step 4; the "
                           "previous checkpoint (step 2) is intact; free space and --resume")
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["LATEST", "step-00000002"]
    assert (run / "checkpoints" / "LATEST").read_text() == "step-00000002"
    assert read_events(run / "metrics.jsonl")[-1] == end
    monkeypatch.undo()  # space is back: the run resumes from step 2 and finishes
    again = Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run, resume=True).run()
    assert again.kind == "Finished" and again.step == 4


def test_a_full_disk_before_any_checkpoint_says_that_none_was_written(tmp_path, monkeypatch):
    run = tmp_path / "run"
    full_disk_after(monkeypatch, saves=0, error=ENOSPC)
    end = Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run()
    assert end.message == (f"the disk of {run} is full while saving step 2; no "
                           "checkpoint of this run was written yet; free space and train again")
    assert list((run / "checkpoints").iterdir()) == []


def test_a_failing_metrics_file_never_hides_the_first_error(tmp_path, monkeypatch):
    run = tmp_path / "run"
    full_disk_after(monkeypatch, saves=1, error=ENOSPC)
    real = MetricsLog.__call__

    def write(self, event):
        if isinstance(event, Failed):  # the disk is full for the last line too
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        real(self, event)
    monkeypatch.setattr(MetricsLog, "__call__", write)
    end = Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run()
    assert end.reason == "disk" and "while saving step 4" in end.message


def test_a_full_disk_while_writing_metrics_names_the_file(tmp_path, monkeypatch):
    run = tmp_path / "run"
    real = MetricsLog.__call__

    def write(self, event):
        if event.step == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        real(self, event)
    monkeypatch.setattr(MetricsLog, "__call__", write)
    end = Trainer(load_preset("tiny-gpt"), tiny_config(log_every=1), run_dir=run).run()
    assert end.reason == "disk"
    assert end.message == (f"the disk of {run / 'metrics.jsonl'} is full at step 3; "
                           "the previous checkpoint (step 2) is intact; free space and --resume")


@pytest.mark.parametrize("error, expected", [
    (OSError(errno.ENOSPC, "x"), "the disk of {where} is full"),
    (OSError(errno.EFBIG, "x"), "a file in {where} would pass the file-size limit (ulimit -f)"),
    (OSError(errno.EDQUOT, "x"), "the disk quota for {where} is used up"),
    (SafetensorError("Error while serializing: I/O error: File too large (os error 27)"),
     "a file in {where} would pass the file-size limit (ulimit -f)"),
    (SafetensorError('IoError(Os { code: 28, kind: StorageFull, message: "No space" })'),
     "the disk of {where} is full"),
    (OSError(errno.EACCES, "x"), "{where} may not be written here (permission denied)"),
    (OSError(errno.EROFS, "x"), "{where} is on a read-only disk"),
    (OSError(errno.ENOENT, "x"), None),
    (SafetensorError("Error while serializing: (os error 2)"), None),
    (ValueError("os error 28"), None),
])
def test_only_writes_the_disk_refused_are_called_a_full_disk(error, expected):
    assert disk_refusal(error) == expected


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_half_written_checkpoints_of_ended_writers_are_removed_when_a_run_starts(tmp_path):
    run = tmp_path / "run"
    Trainer(load_preset("tiny-gpt"), tiny_config(steps=2), run_dir=run).run()
    left = run / "checkpoints" / f".step-00000003.{dead_pid()}.partial"
    left.mkdir()
    (left / "model.safetensors").write_bytes(b"\0" * 100)
    # a resume that stops at once saves nothing, so only the start can have removed it
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=3), run_dir=run, resume=True)
    trainer.listeners.append(lambda e: trainer.stop() if e.kind == "Started" else None)
    assert trainer.run().kind == "Finished"
    assert not left.exists()


def set_file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))  # the weights are ~530 KB


@pytest.mark.slow
def test_a_file_size_limit_is_a_clear_line_and_exit_2(tmp_path):
    """``ulimit -f`` (``prlimit --fsize``): the writes fail with EFBIG."""
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "tfstudio", "train", "tiny-gpt", "--out", str(run), "--corpus",
         "sample:small", "--tokenizer", "byte", "--batch-size", "2", "--seq-len", "16",
         "--steps", "3", "--eval-every", "0"],
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"), capture_output=True,
        text=True, timeout=180, preexec_fn=set_file_size_limit)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"tfstudio train: a file in {run} would pass the file-size limit (ulimit -f) while "
        "saving step 3; no checkpoint of this run was written yet; raise the limit and train "
        "again")
    assert list((run / "checkpoints").iterdir()) == []  # no half-written folder left
    assert find_checkpoint(run / "checkpoints").path is None


def test_a_write_no_command_caught_is_still_one_line_naming_its_folder(tmp_path):
    from tfstudio.cli import refused_write
    report = tmp_path / "compare" / "report.md"
    assert refused_write(OSError(errno.ENOSPC, "No space left on device", str(report))) == (
        f"the disk of {report.parent} is full while writing report.md; the files written "
        "before it are whole; free space and run it again")
    assert refused_write(OSError(errno.ENOENT, "No such file", str(report))) is None


def test_a_whole_write_the_disk_refuses_leaves_the_file_as_it_was(tmp_path):
    from tfstudio.runs.disk import write_whole
    page = tmp_path / "report.html"
    write_whole(page, "the earlier report")
    with file_size_limit(1000), pytest.raises(OSError) as refused:
        write_whole(page, "x" * 5000)
    assert refused.value.errno == errno.EFBIG
    assert page.read_text() == "the earlier report" and sorted(tmp_path.iterdir()) == [page]


def test_a_comparison_whose_every_run_the_disk_refused_says_why_in_its_last_line(tmp_path,
                                                                                capsys):
    from tfstudio.cli import main
    out = tmp_path / "cmp"
    with file_size_limit(300_000):  # tiny-gpt's checkpoint weights are ~530 KB
        code = main(["compare", "tiny-gpt", "--vary", "norm=pre,post", "--out", str(out),
                     "--steps", "2", "--seeds", "1", "--corpus", "sample:small", "--tokenizer",
                     "byte", "--batch-size", "2", "--seq-len", "16"])
    assert code == 2
    run = out / "runs" / "norm-pre" / "seed-1"
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "tfstudio compare: every run failed; the first, norm=pre (seed 1): a file in "
        f"{run} would pass the file-size limit (ulimit -f) while saving step 2; no checkpoint "
        "of this run was written yet; raise the limit and train again")


def test_a_run_folder_on_a_read_only_disk_is_one_sentence_not_the_os_error(tmp_path,
                                                                           monkeypatch):
    """EROFS as the run takes its folder (a read-only --out): the issue's raw
    "[Errno 30] Read-only file system: ..." becomes the sentence every write path says."""
    from tfstudio.runs.lock import RunLock
    run = tmp_path / "run"

    def read_only(self):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(run))
    monkeypatch.setattr(RunLock, "acquire", read_only)
    end = Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run()
    assert (end.reason, end.message) == ("refused", (
        f"{run} is on a read-only disk as the run starts; nothing was trained; choose a "
        "writable folder and train again"))


def test_a_whole_write_on_a_read_only_disk_raises_the_writes_own_error(tmp_path,
                                                                       monkeypatch):
    """On a read-only disk the clean-up's unlink fails too; the error said is the write's (a
    screenshot whose clean-up raised left the app running, never exiting)."""
    from pathlib import Path as P

    from tfstudio.runs.disk import write_whole

    def refuse(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
    monkeypatch.setattr(P, "write_text", refuse)
    monkeypatch.setattr(P, "unlink", refuse)
    with pytest.raises(OSError) as refused:
        write_whole(tmp_path / "report.md", "text")
    assert refused.value.errno == errno.EROFS and refused.value.__context__ is None
