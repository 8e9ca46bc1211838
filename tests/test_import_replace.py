"""``import-hf --force`` checks, then replaces: the new run is written beside the old one first,
so an import that fails half way (a full disk, a file-size limit) leaves the run already in
``--out`` exactly as it was, and one that succeeds leaves no file of the old run behind."""
from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tfstudio.cli import main
from tfstudio.runs.folder import RunFolder

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """A Hugging Face folder (config.json + model.safetensors) of a fresh tiny-gpt."""
    from tfstudio.export.hf_export import export_hf
    out = tmp_path_factory.mktemp("hf") / "tiny"
    export_hf("tiny-gpt", out)
    return out


@pytest.fixture
def old_run(exported, tmp_path) -> Path:
    """A run folder holding an earlier import, marked so that any rewrite of it shows: its
    graph is renamed and it has metrics and probes a new import would not write."""
    run = tmp_path / "run"
    assert main(["import-hf", str(exported), "--out", str(run)]) == 0
    graph = json.loads((run / "graph.json").read_text())
    graph["meta"]["name"] = "the earlier run"
    (run / "graph.json").write_text(json.dumps(graph))
    (run / "metrics.jsonl").write_text('{"kind": "StepMetrics", "step": 7}\n')
    (run / "probes").mkdir()
    (run / "probes" / "step-7.npz").write_bytes(b"earlier")
    return run


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".lock"}


def left_beside(run: Path) -> list[str]:
    """Staging or set-aside folders left next to or inside the run."""
    return sorted(p.name for p in [*run.parent.iterdir(), *run.iterdir()]
                  if p.name.startswith(".") and p.name != ".lock")


def test_a_successful_force_import_replaces_the_whole_earlier_run(exported, old_run, capsys):
    before = contents(old_run)
    assert main(["import-hf", str(exported), "--out", str(old_run), "--force"]) == 0
    after = contents(old_run)
    assert after != before
    assert json.loads(after["graph.json"])["meta"]["name"] != "the earlier run"
    # the earlier run's metrics and probes belonged to other weights: gone with it
    assert "metrics.jsonl" not in after and not any(k.startswith("probes") for k in after)
    assert RunFolder(old_run).checkpoint().path is not None
    assert left_beside(old_run) == []


def test_a_full_disk_during_a_force_import_leaves_the_earlier_run_as_it_was(
        exported, old_run, capsys, monkeypatch):
    import tfstudio.runs.checkpoint as checkpoint

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint, "save_checkpoint", full_disk)
    before = contents(old_run)
    assert main(["import-hf", str(exported), "--out", str(old_run), "--force"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"tfstudio import-hf: the disk of {old_run} is full while writing "
                   "the import; the run already there is as it was; free space and import "
                   "again")
    assert contents(old_run) == before
    assert left_beside(old_run) == []


def test_a_force_import_into_a_run_being_trained_is_refused_naming_the_writer(
        exported, old_run, capsys):
    with RunFolder(old_run).lock():
        before = contents(old_run)
        assert main(["import-hf", str(exported), "--out", str(old_run), "--force"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tfstudio import-hf: {old_run} is being written by another "
                          f"training run (process {os.getpid()})")
    assert contents(old_run) == before


def set_file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))  # the weights are ~530 KB


@pytest.mark.slow
def test_a_force_import_under_a_file_size_limit_is_one_line_and_loses_nothing(
        exported, old_run):
    """The user's command line, under ``ulimit -f``: the weights cannot be written."""
    before = contents(old_run)
    done = subprocess.run(
        [sys.executable, "-m", "tfstudio", "import-hf", str(exported), "--out", str(old_run),
         "--force"], env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
        capture_output=True, text=True, timeout=300, preexec_fn=set_file_size_limit)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"tfstudio import-hf: a file in {old_run} would pass the file-size limit (ulimit -f) "
        "while writing the import; the run already there is as it was; raise the limit and "
        "import again"]
    assert contents(old_run) == before
    assert left_beside(old_run) == []
