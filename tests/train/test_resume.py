"""Resuming: a finished run says so and how to extend it; an extension is recorded and keeps
the learning-rate schedule continuous; runs that cannot continue exactly are refused."""
import json
import math

import pytest

import tfstudio
from tfstudio.cli import main
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder
from tfstudio.train import trainer as trainer_module
from tfstudio.train.events import read_events
from tfstudio.train.start import FSDP_RESUME
from tfstudio.train.trainer import Trainer

CFG = dict(corpus="sample:small", tokenizer="byte", steps=12, batch_size=4, seq_len=32,
           eval_every=0, warmup_steps=3, lr=3e-3, min_lr_ratio=0.1)


def schedule(step, total, lr=3e-3, warmup=3, min_ratio=0.1):
    """Warmup then cosine to lr * min_ratio at ``total``, flat afterwards (written out here)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / (total - warmup))
    return lr * (min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * progress)) / 2)


def logged_lr(run_dir):
    return {e.step: e.lr for e in read_events(RunFolder(run_dir).metrics_path)
            if e.kind == "StepMetrics"}


def train(run_dir, resume=False, **settings):
    return Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**CFG, **settings}),
                   run_dir=run_dir, resume=resume).run()


def test_resuming_a_finished_run_says_so_and_how_to_extend_it(tmp_path, capsys):
    run = tmp_path / "run"
    assert train(run).kind == "Finished"
    before = (run / "metrics.jsonl").read_text()
    # no --steps: the run's own 12, not the default 500
    assert main(["train", "tiny-gpt", "--out", str(run), "--resume"]) == 0
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "already finished at step 12" in line and "--steps N (more than 12)" in line
    assert (run / "metrics.jsonl").read_text() == before
    assert RunFolder(run).config().steps == 12


def test_an_extension_is_recorded_and_continues_the_schedule(tmp_path, capsys):
    run = tmp_path / "run"
    train(run)
    assert main(["train", "tiny-gpt", "--out", str(run), "--resume", "--steps", "16"]) == 0
    assert "completed at step 16" in capsys.readouterr().err
    saved = json.loads((run / "config.json").read_text())
    assert (saved["steps"], saved["lr_decay_steps"]) == (16, 12)
    lrs = logged_lr(run)
    assert sorted(lrs) == list(range(1, 17))
    # the logged rate of step s is the schedule's at s - 1 (set before the step), with the
    # cosine still ending at step 12: no jump at the seam, flat at the floor afterwards
    for step, lr in lrs.items():
        assert lr == pytest.approx(schedule(step - 1, total=12), rel=1e-9)
    assert lrs[13] == pytest.approx(3e-4) and lrs[13] <= lrs[12]


def test_extending_a_stopped_run_keeps_its_cosine_horizon(tmp_path):
    run = tmp_path / "run"
    first = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**CFG), run_dir=run)
    first.listeners.append(lambda e: e.kind == "StepMetrics" and e.step == 6 and first.stop())
    first.run()
    assert train(run, resume=True, steps=20).step == 20
    for step, lr in logged_lr(run).items():
        assert lr == pytest.approx(schedule(step - 1, total=12), rel=1e-9)


def test_resuming_past_the_requested_steps_is_refused(tmp_path):
    run = tmp_path / "run"
    train(run)
    end = train(run, resume=True, steps=8)
    assert (end.kind, end.reason) == ("Failed", "refused")
    assert "at step 12, past --steps 8" in end.message


def test_resuming_a_sharded_run_is_refused_in_a_single_process(tmp_path, monkeypatch):
    """An FSDP checkpoint gathers whole weights but no optimizer state; resuming it in any
    launch mode would silently restart AdamW."""
    run = tmp_path / "run"
    # what the FSDP path hands the checkpoint writer: gathered whole weights, so no optimizer
    monkeypatch.setattr(trainer_module, "full_weights",
                        lambda model, dist, parallel: dict(model.state_dict()))
    assert train(run, parallel="fsdp", steps=4).kind == "Finished"
    monkeypatch.undo()
    end = train(run, resume=True, parallel="fsdp", steps=8)
    assert (end.kind, end.reason) == ("Failed", "refused") and end.message == FSDP_RESUME
    assert "--parallel fsdp is not supported" in FSDP_RESUME and "ddp" in FSDP_RESUME
    assert train(run, resume=True, steps=8).message == FSDP_RESUME  # whatever is asked now

    def never(graph):
        raise AssertionError("the model was built before the refusal")

    monkeypatch.setattr("tfstudio.compiler.compile_graph", never)  # refused before building
    assert train(run, resume=True, steps=8).message == FSDP_RESUME


def test_resuming_an_imported_run_points_to_init_from(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import save_checkpoint
    folder = RunFolder(tmp_path / "imported")
    graph = tfstudio.load_graph("tiny-gpt")
    from tfstudio.data import build_tokenizer, load_corpus
    folder.write_setup(graph, TrainConfig(), build_tokenizer("byte", load_corpus("sample:small")))
    save_checkpoint(folder.checkpoints, 0, compile_graph(graph), None,
                    {"tokens_seen": 0, "imported_from": "/somewhere"})
    end = train(folder.path, resume=True)
    assert end.reason == "refused" and f"--init-from {folder.path}" in end.message
