"""Runs verify what they read: a checkpoint's manifest records the sha256 of the run's graph.json
and tokenizer.json, its state.json the settings a resume keeps, so a file changed after training
(a tokenizer alphabet cut, its kind changed, special ids of 10^9, a config.json emptied to {},
``lr: "abc"``, a changed d_model) is one line and exit 2 for every command that reads the run,
never an internal error and never a silent success. A checkpoint whose state lacks the data
position a resume needs falls back to an older one."""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfstudio.cli import main
from tfstudio.presets import load_preset
from tfstudio.runs.checkpoint import find_checkpoint, step_of
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder
from tfstudio.train.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A tiny run with a char tokenizer and checkpoints at steps 2 and 4."""
    run = tmp_path_factory.mktemp("trained") / "run"
    config = TrainConfig(corpus="sample:small", tokenizer="char", steps=4, batch_size=2,
                         seq_len=16, warmup_steps=0, eval_every=0, device="cpu",
                         checkpoint_every=2)
    assert Trainer(load_preset("tiny-gpt"), config, run_dir=run).run().kind == "Finished"
    return run


@pytest.fixture
def run(trained, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    return copy


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def cut_alphabet(run):
    edit_json(run / "tokenizer.json", lambda d: d.update(alphabet=d["alphabet"][:20]))


def kind_to_byte(run):
    edit_json(run / "tokenizer.json", lambda d: d.update(kind="byte"))


def special_id(value):
    def change(run):
        edit_json(run / "tokenizer.json", lambda d: d["specials"].update({"<|pad|>": value}))
    return change


def empty_config(run):
    (run / "config.json").write_text("{}")


def lr_abc(run):
    edit_json(run / "config.json", lambda d: d.update(lr="abc"))


def narrower_model(run):
    def change(d):
        next(n for n in d["nodes"] if n["type"] == "token_embedding")["params"]["d_model"] = 32
    edit_json(run / "graph.json", change)


CHANGED_TOKENIZER = "tokenizer.json was changed after step-00000004 was written"
CASES = {
    "alphabet cut to 20": (cut_alphabet, CHANGED_TOKENIZER),
    "kind changed to byte": (kind_to_byte, CHANGED_TOKENIZER),
    "special id 10^9": (special_id(10 ** 9), CHANGED_TOKENIZER),
    "special id -3": (special_id(-3), CHANGED_TOKENIZER),
    "config.json is {}": (empty_config, "config.json says corpus 'sample' but step-00000004 "
                                        "was trained with 'sample:small'"),
    'lr: "abc"': (lr_abc, "config.json is damaged (lr must be a number; got 'abc')"),
    "d_model changed": (narrower_model, "graph.json was changed after step-00000004"),
}
COMMANDS = {
    "train --resume": lambda run, tmp: ["train", "tiny-gpt", "--out", str(run), "--resume",
                                        "--steps", "6"],
    "generate": lambda run, tmp: ["generate", str(run), "--max-new-tokens", "4"],
    "eval": lambda run, tmp: ["eval", str(run)],
    "export": lambda run, tmp: ["export", str(run), "--out", str(tmp / "exported")],
    "explain": lambda run, tmp: ["explain", str(run), "--text", "the cat"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
def test_a_run_file_changed_after_training_is_one_line_and_exit_2(run, tmp_path, capsys, case,
                                                                  command):
    damage, says = CASES[case]
    damage(run)
    code = main(COMMANDS[command](run, tmp_path))
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and says in err, err
    assert "internal error" not in err


def test_special_ids_out_of_range_are_refused_even_without_a_manifest_record(run):
    """A run whose checkpoints predate the recorded sha256: the tokenizer checks itself."""
    from tfstudio.data import load_tokenizer
    from tfstudio.data.errors import DataError
    special_id(-3)(run)
    with pytest.raises(DataError, match="its special tokens .* are not the ones this char"):
        load_tokenizer(run / "tokenizer.json")


def test_a_bpe_tokenizer_with_special_ids_past_its_table_is_refused(tmp_path):
    from tfstudio.data import build_tokenizer, load_corpus, load_tokenizer
    from tfstudio.data.errors import DataError
    tokenizer = build_tokenizer("bpe:300", load_corpus("sample:small"))
    path = tmp_path / "tokenizer.json"
    tokenizer.save(path)
    assert load_tokenizer(path).specials == tokenizer.specials  # as saved: fine
    edit_json(path, lambda d: d["specials"].update({"<|pad|>": 10 ** 9}))
    with pytest.raises(DataError, match=f"{path}: BPE special tokens .* are not the ids after"):
        load_tokenizer(path)


@pytest.mark.parametrize("data, says", [
    ({"lr": "abc"}, "lr must be a number; got 'abc'"),
    ({"steps": 2.5}, "steps must be a whole number; got 2.5"),
    ({"steps": True}, "steps must be a whole number; got True"),
    ({"compile": 1}, "compile must be true or false; got 1"),
    ({"corpus": 5}, "corpus must be a string; got 5"),
    ([1, 2], "expected a JSON object of settings, got list"),
])
def test_saved_settings_of_the_wrong_type_are_refused_naming_the_setting(data, says):
    with pytest.raises(ValueError) as caught:
        TrainConfig.from_dict(data)
    assert str(caught.value) == says


def test_saved_settings_of_the_right_type_load():
    config = TrainConfig.from_dict({"lr": 1, "steps": 7, "compile": True, "corpus": "x"})
    assert (config.lr, config.steps, config.compile, config.corpus) == (1, 7, True, "x")


def test_a_checkpoint_that_lost_its_manifest_falls_back_to_the_one_before(run):
    newest = run / "checkpoints" / "step-00000004"
    (newest / "manifest.json").unlink()
    choice = find_checkpoint(run / "checkpoints")
    assert step_of(choice.path) == 2
    assert choice.skipped == [f"{newest / 'manifest.json'} is missing (this checkpoint was "
                              "written with one)"]


def test_the_only_checkpoint_without_its_manifest_is_refused_in_one_line(run, capsys):
    (run / "checkpoints" / "step-00000004" / "manifest.json").unlink()
    shutil.rmtree(run / "checkpoints" / "step-00000002")
    assert main(["generate", str(run), "--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "manifest.json is missing" in err, err


def test_an_older_checkpoint_without_a_data_position_falls_back(run):
    """Checkpoints written before manifests: what can be checked is, the data position too."""
    newest = run / "checkpoints" / "step-00000004"
    (newest / "manifest.json").unlink()
    edit_json(newest / "state.json", lambda d: (d.pop("manifest"), d.update(data={})))
    choice = find_checkpoint(run / "checkpoints")
    assert step_of(choice.path) == 2
    assert choice.skipped == [f'{newest / "state.json"} has no "data" position a resume can '
                              "continue from"]
    end = Trainer(load_preset("tiny-gpt"), TrainConfig(steps=5), run_dir=run, resume=True).run()
    assert end.kind == "Finished" and end.step == 5


def test_a_changed_d_model_without_a_manifest_record_is_one_line(run, capsys):
    """Checkpoints written before the manifest recorded graph.json: torch's ~40 lines of
    "size mismatch" become the first one and a count."""
    narrower_model(run)
    for step in (2, 4):
        edit_json(run / "checkpoints" / f"step-0000000{step}" / "manifest.json",
                  lambda d: d.pop("setup"))
    assert main(["generate", str(run), "--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "the weights do not fit this graph (embed.weight: copying a param with shape " \
           "torch.Size([" in err and "more tensors); was the graph changed" in err


def test_eval_on_a_run_it_cannot_write_prints_its_results_and_says_so(run, capsys,
                                                                    monkeypatch):
    from tfstudio.experiments import lengths

    def read_only(result, path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    monkeypatch.setattr(lengths, "save", read_only)
    assert main(["eval", str(run)]) == 2
    out, err = capsys.readouterr()
    assert "positions" in out  # the results are shown, not lost
    assert err.strip() == (f"tfstudio eval: could not save {run / 'lengths.json'} (Read-only "
                           "file system); the results are the lines above")


@pytest.mark.slow
def test_a_cut_tokenizer_is_refused_by_the_real_command_line(run):
    cut_alphabet(run)
    done = subprocess.run([sys.executable, "-m", "tfstudio", "generate", str(run),
                           "--max-new-tokens", "4"],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tfstudio generate: {run / 'tokenizer.json'} was changed after step-00000004 was "
        "written (its sha256 differs), so the weights no longer mean what they meant; restore "
        "it from a copy of the run"]
    assert RunFolder(run).exists()
