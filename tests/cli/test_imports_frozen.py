"""Each command that reads a run asks once for its imports made frozen (tfstudio/train/
preload.py: the real import is tested in a process of its own there), at the point torch
comes in, after the refusals that need no torch."""
import pytest

from tfstudio.cli import main
from tfstudio.presets import load_preset
from tfstudio.runs.config import TrainConfig
from tfstudio.train import preload
from tfstudio.train.trainer import Trainer


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("imports") / "run"
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=1, batch_size=2,
                         seq_len=16, eval_every=0)
    assert Trainer(load_preset("tiny-gpt"), config, run_dir=folder).run().kind == "Finished"
    return folder


@pytest.fixture
def frozen(monkeypatch):
    calls = []
    monkeypatch.setattr(preload, "import_frozen", lambda modules: calls.append(tuple(modules)))
    return calls


@pytest.mark.parametrize("command", [
    ["generate", "{run}", "--prompt", "Once", "--max-new-tokens", "2"],
    ["eval", "{run}", "--lengths", "8,16"],
    ["explain", "{run}", "--text", "Once"],
    ["explain", "tiny-gpt", "--text", "Once"],
    ["export", "{run}", "--out", "{tmp}/hf"],
])
def test_a_command_that_reads_a_run_asks_once_for_torch_frozen(run, tmp_path, frozen, command):
    argv = [a.format(run=run, tmp=tmp_path) for a in command]
    assert main(argv) == 0
    assert frozen == [preload.READING]


def test_import_hf_asks_once_for_torch_frozen(run, tmp_path, frozen):
    assert main(["export", str(run), "--out", str(tmp_path / "hf")]) == 0
    frozen.clear()
    assert main(["import-hf", str(tmp_path / "hf"), "--out", str(tmp_path / "back")]) == 0
    assert frozen == [preload.READING]


@pytest.mark.parametrize("command", [["explain", "{tmp}", "--text", "Once"],
                                     ["eval", "{run}", "--lengths", "8,x"],
                                     ["export", "{run}", "--out", "{run}/hf"]])
def test_a_refusal_before_the_model_comes_asks_for_no_imports(run, tmp_path, frozen, command):
    """A folder that is no run, a length that is no number, an --out inside the run it reads:
    one line, before torch."""
    assert main([a.format(run=run, tmp=tmp_path) for a in command]) == 2
    assert frozen == []
