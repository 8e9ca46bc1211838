"""Each command that trains or reads a run imports torch once, with the cyclic collector off,
then freezes it (tfstudio/train/preload.py): at the point torch comes in, after the refusals
that need no torch."""
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
def test_a_command_that_reads_a_run_imports_torch_frozen_once(run, tmp_path, frozen, command):
    argv = [a.format(run=run, tmp=tmp_path) for a in command]
    assert main(argv) == 0
    assert frozen == [preload.READING]


def test_import_hf_imports_torch_frozen_once(run, tmp_path, frozen):
    assert main(["export", str(run), "--out", str(tmp_path / "hf")]) == 0
    frozen.clear()
    assert main(["import-hf", str(tmp_path / "hf"), "--out", str(tmp_path / "back")]) == 0
    assert frozen == [preload.READING]


@pytest.mark.parametrize("command", [["explain", "{tmp}", "--text", "Once"],
                                     ["eval", "{run}", "--lengths", "8,x"]])
def test_a_refusal_before_the_model_comes_imports_nothing(run, tmp_path, frozen, command):
    """A folder that is no run, a length that is no number: one line, before torch."""
    assert main([a.format(run=run, tmp=tmp_path) for a in command]) == 2
    assert frozen == []
