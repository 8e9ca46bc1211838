"""tfstudio train's own steps before training (tfstudio/cli/train.py)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# runs the command line in a fresh interpreter and says whether torch was imported
PROBE = ("import sys; from tfstudio.cli import main; code = main(sys.argv[1:]); "
         "print('torch' in sys.modules); sys.exit(code)")


@pytest.mark.parametrize("broken,said", [("graph", "not valid json"),
                                          ("corpus", "no such file")])
def test_a_refused_input_is_told_before_torch_is_imported(tmp_path, broken, said):
    """A graph file that is not JSON, a corpus that is not there: one line, exit 2, without
    importing torch first (~2 CPU-s; compare --jobs starts a train process per run)."""
    graph, corpus = tmp_path / "graph.json", tmp_path / "corpus.txt"
    graph.write_text("{" if broken == "graph" else '"tiny-gpt"')
    if broken != "corpus":
        corpus.write_text("a small corpus " * 50)
    args = [str(graph) if broken == "graph" else "tiny-gpt", "--corpus", str(corpus),
            "--out", str(tmp_path / "run")]
    done = subprocess.run([sys.executable, "-c", PROBE, "train", *args],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=120)
    [line] = done.stderr.strip().splitlines()
    assert done.returncode == 2 and line.startswith("tfstudio train: ") and said in line.lower()
    assert done.stdout.strip() == "False"
    assert not (tmp_path / "run").exists()


def test_a_run_imports_what_training_needs_frozen_before_it_builds_its_trainer(tmp_path,
                                                                               monkeypatch):
    """The imports of a run (torch, torch._dynamo, the trainer) are made without the cyclic
    collector, once every refusal has passed (tfstudio/train/preload.py)."""
    from tfstudio.cli import main
    from tfstudio.train import preload, trainer

    frozen, built = [], []
    monkeypatch.setattr(preload, "import_frozen", lambda modules: frozen.append(tuple(modules)))
    init = trainer.Trainer.__init__

    def record(self, *args, **kwargs):
        built.append(len(frozen))
        init(self, *args, **kwargs)
    monkeypatch.setattr(trainer.Trainer, "__init__", record)
    assert main(["train", "tiny-gpt", "--out", str(tmp_path / "run"), "--steps", "1",
                 "--batch-size", "2", "--seq-len", "16", "--eval-every", "0"]) == 0
    assert frozen == [preload.TRAINING] and built == [1]
