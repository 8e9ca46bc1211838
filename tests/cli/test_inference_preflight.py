"""Commands that build a model without training it refuse one that cannot fit before building it
(a d_model of 10^6 asked torch for 12 TB and ended in an internal error), and a command's --out
that is a file is one line naming it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tfstudio.runs.preflight as preflight
from tfstudio.cli import main
from tfstudio.cli.errors import UsageError, check_out_folder
from tfstudio.graph import save_graph
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.train.trainer import Trainer


def huge_graph(path: Path) -> Path:
    save_graph(load_preset("tiny-gpt"), path)
    data = json.loads(path.read_text())
    next(n for n in data["nodes"] if n["type"] == "token_embedding")["params"]["d_model"] = 10 ** 6
    path.write_text(json.dumps(data))
    return path


def test_export_of_a_graph_too_big_to_build_is_refused_before_building(tmp_path, capsys):
    graph = huge_graph(tmp_path / "huge.json")
    assert main(["export", str(graph), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tfstudio export: exporting {graph} needs about ") and \
        "x 4 bytes x 2 copies while loading" in err, err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("trained") / "run"
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=1, batch_size=2,
                         seq_len=16, warmup_steps=0, eval_every=0, device="cpu")
    assert Trainer(load_preset("tiny-gpt"), config, run_dir=run).run().kind == "Finished"
    return run


def test_eval_refuses_a_run_whose_model_does_not_fit(trained, tmp_path, capsys, monkeypatch):
    from tfstudio.graph.cost import estimate_cost
    from tfstudio.runs.folder import RunFolder
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    params = estimate_cost(RunFolder(run).graph()).total_params
    monkeypatch.setattr(preflight, "available_memory", lambda device: (1000, "this machine"))
    assert main(["eval", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"tfstudio eval: evaluating {run} needs about "
                   f"{preflight.human_bytes(params * 4 * 2)} ({params:,} parameters x 4 bytes x "
                   "2 copies while loading) but this machine has 1.0 kB free; use a machine (or "
                   "--device) with more memory, or a smaller model")
    assert not (run / "lengths.json").exists()


def test_an_out_that_is_a_file_is_one_line_naming_it(tmp_path):
    file = tmp_path / "report.txt"
    file.write_text("x")
    with pytest.raises(UsageError) as caught:
        check_out_folder(file)
    assert str(caught.value) == f"--out {file} is a file, not a folder; choose another --out"
    check_out_folder(tmp_path)            # a folder: fine
    check_out_folder(tmp_path / "new")    # not there yet: fine


def test_explain_of_a_graph_too_big_to_build_is_refused_before_building(tmp_path, capsys):
    graph = huge_graph(tmp_path / "huge.json")
    assert main(["explain", str(graph), "--text", "abc"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tfstudio explain: explaining {graph} needs about ") and \
        "x 4 bytes x 1 copies while loading" in err, err
