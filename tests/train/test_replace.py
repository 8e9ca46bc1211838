"""Check, then replace: ``tfstudio train ... --force`` refuses a bad graph or corpus before it
touches the earlier run in --out; a new run sets the earlier one aside only once it is built, and
deletes it only once it has saved its first checkpoint. A new run that ends before that (stopped,
failed, killed) leaves the earlier run as it was."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfstudio.cli import main
from tfstudio.graph import save_graph
from tfstudio.presets import load_preset
from tfstudio.runs.checkpoint import find_checkpoint, step_of
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder
from tfstudio.train.events import Started
from tfstudio.train.trainer import Trainer
from train_stand_ins import TINY


def tiny_config(**changes) -> TrainConfig:
    return TrainConfig(**{**TINY, "steps": 3, "device": "cpu", "probe_every": 3, **changes})


def contents(folder: Path) -> dict[str, bytes]:
    """Every file of a run folder but its lock, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory) -> Path:
    """A trained run (checkpoints, metrics, probes), copied fresh for each test."""
    run = tmp_path_factory.mktemp("earlier") / "run"
    assert Trainer(load_preset("tiny-gpt"), tiny_config(), run_dir=run).run().kind == "Finished"
    assert (run / "probes").is_dir() and (run / "metrics.jsonl").exists()
    return run


@pytest.fixture
def run(earlier_run, tmp_path) -> Path:
    import shutil
    copy = tmp_path / "run"
    shutil.copytree(earlier_run, copy)
    return copy


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``tfstudio ARGV`` run in this process (the process is not what these tests check): its
    exit code, standard output and standard error."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def graph_with_three_heads(path: Path) -> Path:
    """tiny-gpt with heads=3 on d_model 64: a graph with errors."""
    save_graph(load_preset("tiny-gpt"), path)
    data = json.loads(path.read_text())
    layer = next(n for n in data["nodes"] if n["type"] == "group")
    attn = next(n for n in layer["subgraph"]["nodes"] if n["type"] == "attention")
    attn["params"].update(heads=3, kv_heads=3)
    path.write_text(json.dumps(data))
    return path


def test_force_with_a_graph_that_has_errors_leaves_the_earlier_run_as_it_was(run, tmp_path,
                                                                             capsys):
    before = contents(run)
    code, _, err = cli(capsys, "train", str(graph_with_three_heads(tmp_path / "bad.json")),
                       "--out", str(run), "--force", "--steps", "2", "--corpus", "sample:small")
    assert code == 2, err
    assert "does not split evenly into 3 heads" in err
    assert contents(run) == before


def test_force_with_a_too_short_validation_part_leaves_the_earlier_run_as_it_was(run, tmp_path,
                                                                                 capsys):
    corpus = tmp_path / "short.txt"
    corpus.write_text("the cat sat on the mat. " * 12)  # 288 bytes: 29 held out, < 65
    before = contents(run)
    code, _, err = cli(capsys, "train", "tiny-gpt", "--out", str(run), "--force", "--steps",
                       "2", "--corpus", str(corpus), "--seq-len", "64")
    assert code == 2, err
    assert "shorter than one window" in err
    assert contents(run) == before


def test_a_replacing_run_deletes_the_earlier_one_once_it_has_saved(run):
    assert step_of(find_checkpoint(run / "checkpoints").path) == 3
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=2, probe_every=0),
                      run_dir=run, overwrite=True)
    assert trainer.run().kind == "Finished"
    names = sorted(p.name for p in run.iterdir())
    assert names == [".lock", "checkpoints", "config.json", "graph.json", "metrics.jsonl",
                     "tokenizer.json"]  # no probes of the old run, nothing set aside
    assert [p.name for p in (run / "checkpoints").iterdir() if p.is_dir()] == ["step-00000002"]
    assert RunFolder(run).config().steps == 2


def test_a_replacing_run_stopped_before_its_first_checkpoint_puts_the_earlier_one_back(run):
    before = contents(run)
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=50), run_dir=run,
                      overwrite=True)
    trainer.listeners.append(lambda e: trainer.stop() if isinstance(e, Started) else None)
    end = trainer.run()
    assert end.kind == "Finished" and end.step == 0 and trainer.state.saved_step is None
    assert contents(run) == before


def test_a_replacement_killed_before_its_first_checkpoint_is_undone_at_the_next_start(run):
    before = contents(run)
    folder = RunFolder(run)
    folder.set_aside()  # what a replacing run killed after building leaves...
    (run / "config.json").write_text("{}")  # ...with its own setup files written
    started = []
    trainer = Trainer(load_preset("tiny-gpt"), tiny_config(steps=4), run_dir=run, resume=True,
                      listeners=[lambda e: started.append(e) if isinstance(e, Started) else 0])
    assert trainer.run().kind == "Finished"  # resumed the earlier run, which is back
    assert any(n.startswith("put back the earlier run") for n in started[0].notes)
    assert contents(run)["checkpoints/step-00000003/model.safetensors"] == \
        before["checkpoints/step-00000003/model.safetensors"]
    assert not list(run.glob(".replaced.*"))


def test_export_force_writes_its_files_only_once_the_export_has_succeeded(run, tmp_path,
                                                                          capsys):
    out = tmp_path / "exported"
    code, _, err = cli(capsys, "export", str(run), "--out", str(out))
    assert code == 0, err
    (out / "notes.txt").write_text("mine")  # a file of the user's, not the export's
    before = contents(out)
    code, _, err = cli(capsys, "export", str(graph_with_three_heads(tmp_path / "bad.json")),
                       "--out", str(out), "--force")
    assert code == 2, err
    assert contents(out) == before
    (out / "model.safetensors").write_bytes(b"old")
    code, stdout, err = cli(capsys, "export", str(run), "--out", str(out), "--force")
    assert code == 0, err
    after = contents(out)
    assert after["model.safetensors"] == before["model.safetensors"]  # rewritten
    assert after["notes.txt"] == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == []
    assert f"export hf: {out}" in stdout
