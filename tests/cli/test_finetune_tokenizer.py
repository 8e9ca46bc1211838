"""A fine-tune (--init-from) records in config.json the tokenizer it trained with: the source
run's, which it takes so the weights keep meaning the same tokens."""
from __future__ import annotations

import json

import pytest

from tfstudio.cli import main

SHORT = ["--corpus", "sample:small", "--steps", "2", "--seq-len", "16", "--batch-size", "2",
         "--eval-every", "2"]


@pytest.mark.slow  # two short trainings: ~6 s of CPU
def test_fine_tune_config_names_the_tokenizer_it_used(tmp_path):
    source, tuned = tmp_path / "char-run", tmp_path / "tuned"
    assert main(["train", "tiny-gpt", "--tokenizer", "char", *SHORT, "--out", str(source)]) == 0
    # no --tokenizer: the flag's default (byte) is not what the fine-tune uses
    assert main(["train", str(source / "graph.json"), "--init-from", str(source), *SHORT,
                 "--out", str(tuned)]) == 0
    config = json.loads((tuned / "config.json").read_text())
    assert config["tokenizer"] == "char"
    assert (json.loads((tuned / "tokenizer.json").read_text())
            == json.loads((source / "tokenizer.json").read_text()))
