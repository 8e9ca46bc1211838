"""Planning a run (tfstudio/train/start.py): the lock first, refusals in their own words, resuming
and init_from, sharded runs, the memory check."""
import os

import pytest
import torch
from train_stand_ins import TINY, TWO_RANKS

import tfstudio
from tfstudio.data.simple_tokenizers import ByteTokenizer, CharTokenizer
from tfstudio.runs.config import TrainConfig
from tfstudio.train import start as start_module
from tfstudio.train.distributed import DistInfo
from tfstudio.train.start import FSDP_RESUME, RunRefused, plan_start


@pytest.fixture
def run_copy(finished_run, tmp_path):
    import shutil

    from tfstudio.runs.folder import RunFolder
    shutil.copytree(finished_run, tmp_path / "run")
    return RunFolder(tmp_path / "run")


def _plan(config, folder=None, *, resume=False, overwrite=False, dist=None, tokenizer=None,
          lock=None, graph="tiny-gpt"):
    return plan_start(tfstudio.load_graph(graph), config, folder=folder, resume=resume,
                      overwrite=overwrite, dist=dist or DistInfo(), tokenizer=tokenizer, lock=lock)


def test_a_new_run_is_planned_on_the_cpu_in_fp32_without_replacing_anything(tmp_path):
    from tfstudio.runs.folder import RunFolder
    cfg = TrainConfig(**TINY, device="cpu", precision="auto")
    tok = ByteTokenizer()
    start = _plan(cfg, RunFolder(tmp_path / "new"), tokenizer=tok)
    assert (start.device, start.precision, start.checkpoint) == (torch.device("cpu"), "fp32", None)
    assert start.config is cfg and start.tokenizer is tok and start.graph.meta["name"] == "tiny-gpt"
    assert not start.replace_old and not start.config_changed and start.finished_note == ""
    assert start.state == {}


def test_settings_and_file_errors_are_refusals_in_their_own_words(tmp_path):
    with pytest.raises(RunRefused, match=r"^steps must be at least 1; got 0$"):
        _plan(TrainConfig(**{**TINY, "steps": 0}))
    with pytest.raises(RunRefused, match=r"^fp16 training needs a GPU; use bf16 or fp32 on the "
                                         r"CPU$"):
        _plan(TrainConfig(**TINY, device="cpu", precision="fp16"))
    with pytest.raises(RunRefused, match=r"^cannot resume without a run folder \(--out\)$"):
        _plan(TrainConfig(**TINY), resume=True)


def test_the_lock_is_taken_before_anything_else(tmp_path, run_copy):
    from tfstudio.runs.lock import RunLock
    lock = RunLock(run_copy.path)
    _plan(TrainConfig(**TINY), run_copy, resume=True, lock=lock)
    assert lock.path.read_text() == f"{os.getpid()}\n"
    with pytest.raises(RunRefused, match="is being written by another training run"):
        _plan(TrainConfig(**TINY), run_copy, resume=True, lock=run_copy.lock())
    lock.release()


def test_a_folder_with_a_run_is_replaced_only_with_overwrite(run_copy):
    with pytest.raises(RunRefused) as refused:
        _plan(TrainConfig(**TINY), run_copy)
    assert str(refused.value) == (f"{run_copy.path} already holds a trained run; continue it "
                                  "with --resume, choose another --out, or replace it with --force")
    assert _plan(TrainConfig(**TINY), run_copy, overwrite=True).replace_old


def test_init_from_needs_a_run_with_a_checkpoint_and_brings_its_tokenizer(tmp_path, run_copy):
    from tfstudio.runs.folder import RunFolder
    with pytest.raises(RunRefused) as none:
        _plan(TrainConfig(**TINY, init_from=str(tmp_path / "nothing")))
    assert str(none.value) == (f"--init-from {tmp_path / 'nothing'}: not a tfstudio run folder "
                               "(no config.json/graph.json)")
    start = _plan(TrainConfig(**TINY, init_from=str(run_copy.path)), RunFolder(tmp_path / "new"))
    assert start.tokenizer.vocab_size == 260 and start.checkpoint is None
    given = CharTokenizer("ab")
    assert _plan(TrainConfig(**TINY, init_from=str(run_copy.path)),
                 tokenizer=given).tokenizer is given
    import shutil
    for step in ("step-00000001", "step-00000002"):
        weights = run_copy.checkpoints / step / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:50])
    with pytest.raises(RunRefused) as damaged:
        _plan(TrainConfig(**TINY, init_from=str(run_copy.path)))
    text = str(damaged.value)
    assert text.startswith(f"--init-from {run_copy.path}: no checkpoint there to start from (")
    assert "step-00000002" in text and "model.safetensors" in text
    shutil.rmtree(run_copy.checkpoints)
    with pytest.raises(RunRefused) as empty:
        _plan(TrainConfig(**TINY, init_from=str(run_copy.path)))
    assert str(empty.value) == f"--init-from {run_copy.path}: no checkpoint there to start from"


def test_resuming_keeps_the_saved_data_and_schedule_settings(run_copy):
    asked = TrainConfig(**{**TINY, "steps": 5, "lr": 0.5, "seed": 1, "batch_size": 4,
                           "eval_every": 3, "log_every": 2})
    start = _plan(asked, run_copy, resume=True)
    saved = run_copy.config()
    for name in start_module.KEPT_ON_RESUME:
        if name != "lr_decay_steps":
            assert getattr(start.config, name) == getattr(saved, name), name
    assert (start.config.lr, start.config.seed, start.config.batch_size) == (0.01, 7, 2)
    assert (start.config.steps, start.config.eval_every, start.config.log_every) == (5, 3, 2)
    assert start.config.lr_decay_steps == 2 and start.config_changed   # the horizon stays
    assert start.checkpoint == run_copy.checkpoints / "step-00000002"
    assert start.state["step"] == 2 and "optimizer" in start.state
    assert start.tokenizer.vocab_size == 260 and start.graph.meta["name"] == "tiny-gpt"
    assert (start.device, start.precision) == (torch.device("cpu"), "fp32")
    assert start.finished_note == ""
    same = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)
    assert not same.config_changed and same.config.lr_decay_steps == 0


def test_resuming_a_finished_run_says_where_its_learning_rate_would_continue(run_copy):
    import json

    from tfstudio.train.optim import lr_at
    start = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)
    rate = lr_at(2, lr=0.01, warmup=1, total=2, min_ratio=0.1)    # = 0.01 * 0.1
    assert rate == pytest.approx(1e-3)
    assert start.finished_note == (
        f"{run_copy.path} already finished at step 2; to train further, resume with --steps N "
        f"(more than 2): the learning rate continues at the end of its schedule, {rate:.2e}")
    assert not start.config_changed
    config = json.loads(run_copy.config_path.read_text())       # a run with its own horizon
    run_copy.config_path.write_text(json.dumps({**config, "lr_decay_steps": 4}))
    note = _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True).finished_note
    assert note.endswith(f"{lr_at(2, lr=0.01, warmup=1, total=4, min_ratio=0.1):.2e}")
    assert not note.endswith(f"{rate:.2e}")
    with pytest.raises(RunRefused) as past:
        _plan(TrainConfig(**{**TINY, "steps": 1}), run_copy, resume=True)
    assert str(past.value) == (f"{run_copy.path} is at step 2, past --steps 1; resume with "
                               "--steps N (more than 2) to train further")


def test_resuming_without_a_usable_checkpoint_is_refused_with_the_reason(tmp_path, run_copy):
    import json
    import shutil

    from tfstudio.runs.folder import RunFolder
    state_path = run_copy.checkpoints / "step-00000002" / "state.json"
    state = json.loads(state_path.read_text())

    def refusal(**changes):
        # an older checkpoint (no manifest, and no word of one): what the checks still read
        changed = {k: v for k, v in {**state, **changes}.items()
                   if v is not None and k != "manifest"}
        state_path.write_text(json.dumps(changed))
        (run_copy.checkpoints / "step-00000002" / "manifest.json").unlink(missing_ok=True)
        with pytest.raises(RunRefused) as refused:
            _plan(TrainConfig(**{**TINY, "steps": 4}), run_copy, resume=True)
        return str(refused.value)
    ckpt = run_copy.checkpoints / "step-00000002"
    assert refusal(optimizer=None) == (
        f"{ckpt} holds no optimizer state, so the run cannot continue exactly; start a new run "
        f"from its weights (--init-from {run_copy.path})")
    assert refusal(optimizer=None, imported_from="hf") == (
        f"{run_copy.path} was imported, not trained here, so it has no optimizer state to "
        f"resume; train from its weights with --init-from {run_copy.path}")
    config = json.loads(run_copy.config_path.read_text())
    run_copy.config_path.write_text(json.dumps({**config, "parallel": "fsdp"}))
    assert refusal(optimizer=None) == FSDP_RESUME             # also in a single process
    run_copy.config_path.write_text(json.dumps(config))
    assert refusal(rng=None) == (
        f"{ckpt / 'state.json'} lacks the rng state a resume needs; start a new run from its "
        f"weights (--init-from {run_copy.path})")
    assert refusal(data=None, rng=[1]).startswith(f"{ckpt / 'state.json'} lacks the data and "
                                                  "rng state")
    empty = RunFolder(tmp_path / "empty")
    empty.write_setup(tfstudio.load_graph("tiny-gpt"), TrainConfig(), ByteTokenizer())
    with pytest.raises(RunRefused) as none:
        _plan(TrainConfig(**TINY), empty, resume=True)
    assert str(none.value) == (f"cannot resume: {empty.path} has no checkpoint; start a new run "
                               "instead (drop --resume)")
    shutil.copytree(run_copy.path, tmp_path / "damaged")
    damaged = RunFolder(tmp_path / "damaged")
    for step in ("step-00000001", "step-00000002"):
        weights = damaged.checkpoints / step / "model.safetensors"
        weights.write_bytes(b"")
    with pytest.raises(RunRefused) as skipped:
        _plan(TrainConfig(**TINY), damaged, resume=True)
    assert str(skipped.value).startswith(f"{damaged.path} has no intact checkpoint: ")


def test_sharded_runs_refuse_probes_and_resuming_under_torchrun():
    probes = TrainConfig(**TINY, parallel="fsdp", probe_every=5)
    with pytest.raises(RunRefused) as refused:
        start_module._check_parallel(probes, TWO_RANKS, resuming=False)
    assert str(refused.value) == (
        "probes read the whole model on one process, which a sharded (--parallel fsdp) model "
        "does not have; set --probe-every 0 or train with ddp")
    with pytest.raises(RunRefused) as resumed:
        start_module._check_parallel(TrainConfig(**TINY, parallel="fsdp"), TWO_RANKS, True)
    assert str(resumed.value) == FSDP_RESUME
    start_module._check_parallel(probes, DistInfo(), resuming=True)          # one process
    start_module._check_parallel(TrainConfig(**TINY, probe_every=5), TWO_RANKS, True)   # ddp


def test_the_memory_check_sees_the_graph_and_device_as_they_will_be_built(monkeypatch):
    from tfstudio.train.start import Start, _check_memory
    calls = []
    monkeypatch.setattr(start_module, "check_training_memory",
                        lambda graph, **kw: calls.append((graph, kw)))
    cfg = TrainConfig(**{**TINY, "grad_accum": 3, "parallel": "fsdp"})
    start = Start(cfg, tfstudio.load_graph("tiny-gpt"), CharTokenizer("abc"),
                  torch.device("cuda"), "bf16")
    _check_memory(start, TWO_RANKS)
    graph, kw = calls[-1]
    sizes = {n.params["vocab_size"] for _, n in graph.walk() if "vocab_size" in n.params}
    assert sizes == {CharTokenizer("abc").vocab_size}
    assert kw == {"batch": 2, "seq_len": 16, "grad_accum": 3, "precision": "bf16",
                  "device": "cuda:1", "world_size": 2, "sharded": True}
    start.tokenizer, start.device, start.config = None, torch.device("cpu"), TrainConfig(**TINY)
    _check_memory(start, DistInfo())
    graph, kw = calls[-1]
    assert graph is start.graph
    assert (kw["device"], kw["world_size"], kw["sharded"]) == ("cpu", 1, False)
    _check_memory(Start(cfg, start.graph, None, torch.device("cuda"), "bf16"), DistInfo())
    assert (calls[-1][1]["device"], calls[-1][1]["sharded"]) == ("cuda", False)


def test_the_memory_check_is_skipped_when_asked_or_when_nothing_will_train(monkeypatch,
                                                                         run_copy):
    calls = []
    monkeypatch.setattr(start_module, "_check_memory", lambda start, dist: calls.append(start))
    _plan(TrainConfig(**TINY, no_memory_check=True))
    assert calls == []
    _plan(TrainConfig(**{**TINY, "steps": 2}), run_copy, resume=True)   # already finished
    assert calls == []
    start = _plan(TrainConfig(**TINY))
    assert calls == [start]


def test_a_run_too_big_for_memory_is_refused_before_anything_is_built():
    with pytest.raises(RunRefused, match="--no-memory-check"):
        _plan(TrainConfig(**{**TINY, "batch_size": 20_000_000, "device": "cpu"}))


def test_a_planned_sharded_run_under_torchrun_refuses_probes_and_resuming(run_copy, tmp_path):
    from tfstudio.runs.folder import RunFolder
    fsdp = {**TINY, "parallel": "fsdp", "no_memory_check": True}
    with pytest.raises(RunRefused, match="^probes read the whole model on one process"):
        _plan(TrainConfig(**fsdp, probe_every=2), dist=TWO_RANKS)
    with pytest.raises(RunRefused) as resumed:
        _plan(TrainConfig(**fsdp), run_copy, resume=True, dist=TWO_RANKS)
    assert str(resumed.value) == FSDP_RESUME
    new = _plan(TrainConfig(**fsdp), RunFolder(tmp_path / "new"), dist=TWO_RANKS)
    assert new.checkpoint is None and new.config.parallel == "fsdp"


def test_a_warm_up_longer_than_the_run_is_cut_to_its_steps_once_for_every_caller(tmp_path):
    """30 steps with warm-up 50 never reached the learning rate asked for (0.0015 at step 25
    against 0.003): the plan every caller goes through (CLI, the app's Train, Compare's
    variants) cuts it, says so, and config.json keeps the cut value."""
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import StepMetrics
    from tfstudio.train.trainer import Trainer

    long_warmup = TrainConfig(**{**TINY, "steps": 4, "warmup_steps": 50, "lr": 0.003})
    start = _plan(long_warmup, RunFolder(tmp_path / "plan"), tokenizer=ByteTokenizer())
    assert start.config.warmup_steps == 4
    assert any("warm-up cut from 50 to 4 steps" in note for note in start.notes)
    within = TrainConfig(**{**TINY, "steps": 4, "warmup_steps": 3})
    assert _plan(within, RunFolder(tmp_path / "p2"), tokenizer=ByteTokenizer()).notes == []

    rates = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), long_warmup, run_dir=tmp_path / "run",
                      listeners=[lambda e: isinstance(e, StepMetrics) and rates.append(e.lr)])
    assert trainer.run().reason == "completed"
    assert rates[-1] == pytest.approx(0.003)        # the rate asked for, at the last step
    assert rates == sorted(rates)
    assert RunFolder(tmp_path / "run").config().warmup_steps == 4
