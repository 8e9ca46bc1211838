"""compare on a synthetic task: the report gives answer accuracy (from the runs' evaluation
events), and asks for nothing a task cannot give (loss by position) before training."""
from __future__ import annotations

import json

import pytest

from tfstudio.cli import main

TASK = ["--corpus", "task:reverse", "--tokenizer", "char", "--steps", "2", "--seq-len", "32",
        "--batch-size", "4"]


@pytest.mark.slow  # one short training and its report
def test_compare_on_a_task_reports_answer_accuracy(tmp_path, capsys):
    out = tmp_path / "task"
    assert main(["compare", "tiny-gpt", "--vary", "attention=mqa", *TASK, "--out", str(out)]) == 0
    records = [json.loads(x) for x in
               (out / "runs" / "attention-mqa" / "seed-1337" / "metrics.jsonl").read_text()
               .splitlines()]
    accuracy = [r["accuracy"] for r in records if r["kind"] == "EvalMetrics"][-1]
    report = (out / "report.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| variant"))
    row = next(line for line in report.splitlines() if line.startswith("| attention=mqa"))
    cells = dict(zip(header.split("|"), row.split("|")))
    assert cells[" answer accuracy "].strip() == f"{accuracy:.1%}"
    assert "Counting baselines" not in report  # a task has no token stream to count


def test_compare_on_a_task_refuses_loss_by_position_before_training(tmp_path, capsys):
    out = tmp_path / "task"
    status = main(["compare", "tiny-gpt", "--vary", "attention=mqa", *TASK,
                   "--eval-lengths", "32,64", "--out", str(out)])
    assert status == 2 and "drop --eval-lengths" in capsys.readouterr().err
    assert not (out / "runs").exists()
