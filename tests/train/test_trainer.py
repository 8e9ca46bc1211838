"""The trainer (tfstudio/train/trainer.py): one step's gradients worked out by autograd in the test,
evaluation, clipping, logging and checkpoint schedules, faults and their messages, whole runs."""
import contextlib
import math
import time
from types import SimpleNamespace

import pytest
import torch
from train_stand_ins import TINY, FixedLogits, stand_in_session

import tfstudio
from tfstudio.data.masking import IGNORE_INDEX
from tfstudio.data.simple_tokenizers import ByteTokenizer, CharTokenizer
from tfstudio.runs.config import TrainConfig
from tfstudio.train.distributed import DistInfo
from tfstudio.train.events import RouterMetrics, StepMetrics
from tfstudio.train.objectives import Batch
from tfstudio.train.trainer import Trainer


def _trainer(**cfg):
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, **cfg}),
                      listeners=[events.append])
    return trainer, events


def test_the_divergence_message_names_the_checkpoint_that_exists():
    trainer, _ = _trainer(lr=0.5)
    trainer.state.step = 6
    assert trainer._diverged("the loss became nan") == (
        "the loss became nan at step 7. Training stopped; no checkpoint was written yet "
        "(--checkpoint-every N keeps one every N steps). Lower the learning rate (now 0.5), "
        "keep gradient clipping on, or use fp32")
    trainer.state.saved_step = 4
    assert "Training stopped; the checkpoint of step 4 is kept. Lower" in \
        trainer._diverged("the loss became nan")


def test_step_metrics_report_tokens_per_second_and_model_flops_utilisation():
    trainer, events = _trainer()
    session = stand_in_session(trainer, model=SimpleNamespace(blocks=lambda: []),
                               flops_per_token=6.0, peak_flops=1000.0)
    trainer.state.step, trainer.state.tokens_seen, trainer.state.grad_norm = 3, 96, 0.5
    trainer.state.layer_norms = {"embed": 0.25}
    clock = time.perf_counter()
    trainer._emit_step(2.5, 0.01, 64, 0.5, clock)
    (m,) = events
    assert 0.0 <= m.elapsed_s < 60.0                   # seconds since the run's clock started
    assert m.layer_grad_norms == {"embed": 0.25}
    assert m.layer_grad_norms is not trainer.state.layer_norms   # a copy: later steps change it
    assert isinstance(m, StepMetrics) and m.step == 3 and m.tokens_seen == 96
    assert m.tokens_per_s == 128.0                     # 64 tokens in 0.5 s
    assert m.mfu == pytest.approx(6.0 * 128.0 / 1000.0)
    assert (m.loss, m.lr, m.grad_norm) == (2.5, 0.01, 0.5)
    trainer._emit_step(2.5, 0.01, 64, 2.0, 0.0)        # slower than a second: still counted
    assert events[-1].tokens_per_s == 32.0
    trainer._emit_step(2.5, 0.01, 64, 0.0, 0.0)        # no time measured: 0, not a division
    assert events[-1].tokens_per_s == 0.0 and events[-1].mfu == 0.0
    trainer.dist = DistInfo(world_size=2)              # tokens/s of all ranks, peak of one
    trainer._emit_step(2.5, 0.01, 64, 0.5, 0.0)
    assert events[-1].mfu == pytest.approx(6.0 * 128.0 / (1000.0 * 2))
    trainer.dist = DistInfo()
    session.peak_flops = None                          # unknown peak (CPUs): no MFU
    trainer._emit_step(2.5, 0.01, 64, 0.5, 0.0)
    assert events[-1].mfu is None


def test_router_loads_are_reported_with_the_step_and_balance_loss():
    trainer, events = _trainer()
    moe = SimpleNamespace(last_expert_load=torch.tensor([0.75, 0.25]))
    stand_in_session(trainer, model=SimpleNamespace(blocks=lambda: [
        (("layers", 0, "moe"), moe), (("embed",), SimpleNamespace())]))
    trainer.state.step, trainer.state.aux_loss = 5, 0.125
    trainer._emit_step(1.0, 0.1, 8, 0.1, 0.0)
    router = events[-1]
    assert isinstance(router, RouterMetrics) and router.step == 5
    assert router.expert_load == {"layers.0.moe": [0.75, 0.25]} and router.aux_loss == 0.125


def _eval_trainer(batches, reports_accuracy):
    trainer, events = _trainer(eval_batches=3)
    asked = []

    def val_batches(n, batch_size):
        asked.append((n, batch_size))
        return batches
    stand_in_session(trainer, pipeline=SimpleNamespace(val_batches=val_batches,
                                                       reports_accuracy=reports_accuracy))
    return trainer, events, asked


def test_evaluation_averages_the_batch_losses_and_counts_accuracy_over_labels():
    logits = torch.tensor([[[3.0, 0.0], [0.0, 3.0]]])
    model = FixedLogits(logits)
    good = Batch((torch.zeros(1, 2),), torch.tensor([[0, 1]]))            # both right
    half = Batch((torch.zeros(1, 2),), torch.tensor([[1, IGNORE_INDEX]]))  # one wrong label
    trainer, events, asked = _eval_trainer([good, half], reports_accuracy=True)
    trainer.session.model = model
    model.train()
    trainer.state.step = 9
    trainer._evaluate()
    lse = float(torch.logsumexp(torch.tensor([3.0, 0.0]), 0))
    losses = [lse - 3.0, lse - 0.0]                     # mean over each batch's labels
    (ev,) = events
    assert ev.step == 9 and asked == [(3, 2)]
    assert ev.val_loss == pytest.approx(sum(losses) / 2)
    assert ev.perplexity == pytest.approx(math.exp(sum(losses) / 2))
    assert ev.accuracy == pytest.approx(2 / 3)          # 2 of the 3 labelled positions
    assert model.training                               # back to training mode


def test_evaluation_without_accuracy_and_with_huge_or_no_losses():
    logits = torch.tensor([[[200.0, 0.0]]])
    wrong = Batch((torch.zeros(1, 1),), torch.tensor([[1]]))
    trainer, events, _ = _eval_trainer([wrong], reports_accuracy=False)
    trainer.session.model = FixedLogits(logits)
    trainer._evaluate()
    assert events[-1].accuracy is None and events[-1].val_loss == pytest.approx(200.0)
    assert events[-1].perplexity == pytest.approx(math.exp(50.0))   # capped, not inf
    nothing, quiet, _ = _eval_trainer([], reports_accuracy=True)
    nothing.session.model = FixedLogits(logits)
    nothing._evaluate()
    assert quiet == []


def test_out_of_memory_message_names_what_to_reduce():
    trainer, _ = _trainer(batch_size=4, seq_len=32)
    stand_in_session(trainer)
    trainer.state.step = 2
    assert trainer._oom_message() == (
        "out of memory on cpu at step 3. Reduce the batch size (now 4; keep the effective "
        "batch with grad_accum), the sequence length (now 32) or the model's width/depth; on "
        "a GPU, bf16 halves activation memory")


def test_a_run_logs_evaluates_probes_and_checkpoints_on_schedule(tmp_path):
    from tfstudio.train.events import CheckpointSaved, EvalMetrics, Finished, Probe
    from tfstudio.train.optim import lr_at
    events = []
    cfg = TrainConfig(**{**TINY, "steps": 5, "log_every": 2, "eval_every": 3, "eval_batches": 1,
                         "probe_every": 4, "checkpoint_every": 2, "lr": 0.01,
                         "warmup_steps": 2, "keep_checkpoints": 5})
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=tmp_path / "run",
                      listeners=[events.append])
    end = trainer.run()
    assert isinstance(end, Finished) and end.reason == "completed" and end.step == 5
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [2, 4, 5]                  # every 2nd and the last
    assert [e.tokens_seen for e in steps] == [2 * 32, 4 * 32, 5 * 32]   # batch 2 x 16 tokens
    for e in steps:  # one step's 32 tokens took less than the whole run so far
        assert e.tokens_per_s * e.elapsed_s > 32
    for e in steps:  # the rate the step was taken with (schedule counted from step 0)
        assert e.lr == pytest.approx(lr_at(e.step - 1, lr=0.01, warmup=2, total=5,
                                           min_ratio=cfg.min_lr_ratio))
    assert [e.step for e in events if isinstance(e, EvalMetrics)] == [3, 5]
    assert [e.step for e in events if isinstance(e, Probe)] == [0, 4]
    assert [e.step for e in events if isinstance(e, CheckpointSaved)] == [2, 4, 5]
    assert end.final_loss == pytest.approx(steps[-1].loss)
    last_lr = lr_at(4, lr=0.01, warmup=2, total=5, min_ratio=cfg.min_lr_ratio)
    assert [g["lr"] for g in trainer.optimizer.param_groups] == \
        pytest.approx([last_lr] * len(trainer.optimizer.param_groups))   # what AdamW stepped with


def test_stopping_from_a_listener_ends_after_that_step_with_its_loss(tmp_path):
    from tfstudio.train.events import CheckpointSaved, Finished, Probe
    events = []

    def listener(event):
        events.append(event)
        if isinstance(event, StepMetrics) and event.step == 2:
            trainer.stop()
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, "steps": 50}),
                      run_dir=tmp_path / "run", listeners=[listener])
    end = trainer.run()
    assert isinstance(end, Finished) and (end.reason, end.step) == ("stopped", 2)
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [1, 2] and end.final_loss == pytest.approx(steps[-1].loss)
    assert [e.step for e in events if isinstance(e, CheckpointSaved)] == [2]
    assert not [e for e in events if isinstance(e, Probe)]       # probe_every 0: never


def test_every_step_trains_in_train_mode_whatever_left_the_model_in_eval():
    """The evaluation puts train mode back; a listener (or anything else) that leaves the model
    in eval mode between steps does not make the next step train without dropout."""
    modes = []

    def listener(event):
        if event.kind == "Started":
            trainer.model.register_forward_hook(lambda m, i, o: modes.append(m.training))
        elif isinstance(event, StepMetrics):
            trainer.model.eval()
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**{**TINY, "steps": 4, "eval_every": 0}), listeners=[listener])
    assert trainer.run().reason == "completed"
    assert modes == [True] * 4


def test_a_run_stopped_before_its_first_step_has_no_loss():
    trainer, events = _trainer(steps=5)
    trainer.stop()
    end = trainer.run()
    assert (end.reason, end.step, end.final_loss) == ("stopped", 0, None)
    assert not [e for e in events if isinstance(e, StepMetrics)]


def test_layer_groups_are_named_by_their_first_two_keys_and_the_rest_is_other():
    from tfstudio.train.trainer import _layer_parameter_groups
    embed, attn, mlp, head = (torch.nn.Linear(2, 2) for _ in range(4))
    stray = torch.nn.Parameter(torch.zeros(3))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = torch.nn.ModuleList([embed, attn, mlp, head])
            self.stray = stray

        def blocks(self):
            return [(("embed",), embed), (("layers", 0, "attn"), attn),
                    (("layers", 0, "mlp"), mlp), (("head",), head), (("tied",), head)]

    groups = _layer_parameter_groups(Model())
    ids = {name: [id(p) for p in ps] for name, ps in groups.items()}
    assert ids == {"embed": [id(embed.weight), id(embed.bias)],
                   "layers.0": [id(p) for p in (attn.weight, attn.bias, mlp.weight, mlp.bias)],
                   "head": [id(head.weight), id(head.bias)],   # a shared module counted once
                   "other": [id(stray)]}


def _clip_trainer(clip):
    trainer, _ = _trainer(grad_clip=clip)
    params = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2)),
              torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
    for p, g in zip(params, ([3.0, 0.0], [0.0, 4.0], [12.0], None)):
        p.grad = None if g is None else torch.tensor(g)
    holder = torch.nn.Module()
    holder.ps = torch.nn.ParameterList(params)
    stand_in_session(trainer, model=holder,
                     layer_params={"a": params[:2], "b": params[2:3], "frozen": params[3:]})
    return trainer, params


@pytest.mark.parametrize("log", [True, False])
def test_clipping_scales_every_gradient_to_the_limit_logged_or_not(log):
    trainer, params = _clip_trainer(clip=1.0)
    trainer.state.layer_norms = {"before": 1.0}
    trainer._measure_and_clip(log=log)
    assert trainer.state.grad_norm == pytest.approx(13.0)   # sqrt(3² + 4² + 12²), before clipping
    scale = 1.0 / 13.0
    assert params[0].grad.tolist() == pytest.approx([3 * scale, 0.0], rel=1e-5)
    assert params[2].grad.tolist() == pytest.approx([12 * scale], rel=1e-5)
    assert params[3].grad is None
    if log:   # per layer: 5, 12, and 0 for a layer without gradients
        assert trainer.state.layer_norms == pytest.approx({"a": 5.0, "b": 12.0, "frozen": 0.0})
    else:
        assert trainer.state.layer_norms == {"before": 1.0}


@pytest.mark.parametrize("log", [True, False])
def test_clipping_off_measures_but_leaves_the_gradients(log):
    trainer, params = _clip_trainer(clip=0.0)
    trainer._measure_and_clip(log=log)
    assert trainer.state.grad_norm == pytest.approx(13.0)
    assert params[0].grad.tolist() == [3.0, 0.0] and params[2].grad.tolist() == [12.0]


class TwoWeights(torch.nn.Module):
    """logits = (w1 * x, w2 * x) per position; w2 takes part only in rows whose flag is set
    (so a step can leave it without a gradient); aux = 0.5 * w1²."""

    def __init__(self):
        super().__init__()
        self.w1, self.w2 = torch.nn.Parameter(torch.tensor(0.3)), torch.nn.Parameter(
            torch.tensor(-0.2))
        self.rows_seen: list[int] = []

    def forward(self, x, flag):
        self.rows_seen.append(x.shape[0])
        second = torch.where(flag[:, None], self.w2 * x, torch.zeros_like(x)) if flag.any() \
            else torch.zeros_like(x)
        return torch.stack([self.w1 * x, second], dim=-1)

    def aux_loss(self):
        return 0.5 * self.w1 ** 2


class Synced(torch.nn.Module):
    """A DDP stand-in: records on which micro-batches the gradient sync was skipped."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.skipped, self.calls = inner, [], 0

    def forward(self, *inputs):
        self.calls += 1
        return self.inner(*inputs)

    @contextlib.contextmanager
    def no_sync(self):
        self.skipped.append(self.calls)
        yield


def _micro_batches(n, flags):
    g = torch.Generator().manual_seed(0)
    return [Batch((torch.randn(4, 3, generator=g), torch.tensor(flags[i])),
                  torch.randint(0, 2, (4, 3), generator=g)) for i in range(n)]


def _step_trainer(model, batches, *, momentum=0.0, **cfg):
    trainer, _ = _trainer(grad_clip=0.0, batch_size=4, **cfg)
    asked = []

    def train_batch(n):
        asked.append(n)
        return batches[len(asked) - 1]
    stand_in_session(trainer, pipeline=SimpleNamespace(train_batch=train_batch), model=model,
                     train_model=model,
                     optimizer=torch.optim.SGD(model.parameters(), lr=1.0, momentum=momentum),
                     scaler=torch.amp.GradScaler("cpu", enabled=False),
                     layer_params={"all": list(model.parameters())})
    return trainer, asked


def _expected(batches, rows=slice(None)):
    """Loss, aux and gradients of the mean over micro-batches, by autograd on a fresh model."""
    ref = TwoWeights()
    losses, auxes, total = [], [], 0.0
    for b in batches:
        x, flag = b.inputs[0][rows], b.inputs[1][rows]
        logits = ref(x, flag)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, 2), b.labels[rows].reshape(-1))
        losses.append(float(ce.detach()))
        auxes.append(float(ref.aux_loss().detach()))
        total = total + (ce + ref.aux_loss()) / len(batches)
    total.backward()
    return (sum(losses) / len(losses), sum(auxes) / len(auxes),
            float(ref.w1.grad), float(ref.w2.grad))


def test_gradient_accumulation_averages_micro_batches():
    batches = _micro_batches(3, [[True] * 4] * 3)
    model = TwoWeights()
    trainer, asked = _step_trainer(model, batches, grad_accum=3)
    loss, tokens = trainer._train_step()
    exp_loss, exp_aux, g1, g2 = _expected(batches)
    assert asked == [4, 4, 4] and tokens == 3 * 12
    assert loss == pytest.approx(exp_loss, rel=1e-6)
    assert trainer.state.aux_loss == pytest.approx(exp_aux, rel=1e-6)
    # SGD with lr 1: the step moved each weight by its gradient
    assert 0.3 - float(model.w1.detach()) == pytest.approx(g1, rel=1e-5)
    assert -0.2 - float(model.w2.detach()) == pytest.approx(g2, rel=1e-5)


def test_a_weight_without_a_gradient_this_step_is_left_alone():
    batches = _micro_batches(2, [[True] * 4, [False] * 4])
    model = TwoWeights()
    trainer, _ = _step_trainer(model, batches, momentum=0.9)
    trainer._train_step()
    after_first = float(model.w2.detach())
    trainer._train_step()     # w2 is not used: its gradient is None, so SGD skips it
    assert float(model.w2.detach()) == after_first and model.w2.grad is None


def test_data_parallel_steps_take_this_ranks_rows_and_sync_only_the_last_micro_batch(
        monkeypatch):
    import tfstudio.train.trainer as trainer_module
    devices = []
    monkeypatch.setattr(trainer_module, "all_ranks_agree",
                        lambda ok, info, device: devices.append(device) or ok)
    monkeypatch.setattr(trainer_module, "mean_across_ranks", lambda value, info, device: value)
    batches = _micro_batches(3, [[True] * 4] * 3)
    inner = TwoWeights()
    trainer, asked = _step_trainer(inner, batches, grad_accum=3)
    trainer.session.train_model = Synced(inner)
    trainer.dist = DistInfo(rank=1, world_size=2)
    loss, tokens = trainer._train_step()
    assert asked == [4, 4, 4]                       # the global batch is drawn on every rank
    assert inner.rows_seen == [2, 2, 2]             # rank 1 of 2 keeps rows 2 and 3
    assert trainer.session.train_model.skipped == [0, 1]    # no all-reduce before the last micro-batch
    assert tokens == 3 * 6 * 2                      # counted over both ranks
    assert devices == [torch.device("cpu")] * 3
    exp_loss, _, g1, _ = _expected(batches, rows=slice(2, 4))
    assert loss == pytest.approx(exp_loss, rel=1e-6)
    assert 0.3 - float(inner.w1.detach()) == pytest.approx(g1, rel=1e-5)


def test_a_nan_loss_stops_the_step_with_the_value_and_the_step():
    from tfstudio.train.trainer import NonFiniteLoss
    batches = _micro_batches(1, [[True] * 4])
    batches[0].inputs[0][0, 0] = float("nan")
    trainer, _ = _step_trainer(TwoWeights(), batches)
    with pytest.raises(NonFiniteLoss, match=r"^the loss became nan at step 1\. Training stopped; "
                                            r"no checkpoint was written yet"):
        trainer._train_step()


def test_fp32_steps_run_without_autocast():
    class Linear(TwoWeights):
        def __init__(self):
            super().__init__()
            self.proj, self.dtypes = torch.nn.Linear(3, 3), []

        def forward(self, x, flag):
            y = self.proj(x)
            self.dtypes.append(y.dtype)   # autocast (bf16/fp16) would lower the matmul
            return super().forward(y, flag)
    model = Linear()
    trainer, _ = _step_trainer(model, _micro_batches(1, [[True] * 4]))
    trainer._train_step()
    assert model.dtypes == [torch.float32]


def _run(tmp_path=None, *, name="run", graph="tiny-gpt", listeners=(), **kw):
    """A short run of the tiny preset (into tmp_path/name when given): (trainer, end, events)."""
    events = []
    options = {key: kw.pop(key) for key in ("resume", "overwrite", "tokenizer", "corpus")
               if key in kw}
    trainer = Trainer(tfstudio.load_graph(graph), TrainConfig(**{**TINY, "log_every": 1, **kw}),
                      run_dir=None if tmp_path is None else tmp_path / name,
                      listeners=[events.append, *listeners], **options)
    end = trainer.run()
    return trainer, end, events


def test_a_run_starts_by_saying_what_it_trains_and_keeps_it_all_in_its_folder(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import read_state
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import CheckpointSaved, Finished, Started, read_events
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    began = time.perf_counter()
    trainer, end, events = _run(tmp_path, steps=3, checkpoint_every=1, keep_checkpoints=1)
    wall = time.perf_counter() - began
    started = events[0]
    byte_model = compile_graph(fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"),
                                                      ByteTokenizer()))
    assert started == Started(0, 3, sum(p.numel() for p in byte_model.parameters()), "cpu",
                              "fp32", "causal-lm", "tiny-gpt", [])
    assert isinstance(end, Finished) and (end.step, end.reason) == (3, "completed")
    last_step = [e for e in events if isinstance(e, StepMetrics)][-1]
    assert last_step.elapsed_s < end.elapsed_s < wall       # the whole run, from its start
    folder = RunFolder(tmp_path / "run")
    assert folder.config().steps == 3 and folder.tokenizer().vocab_size == 260
    assert [type(e) for e in read_events(folder.metrics_path)] == [type(e) for e in events]
    assert read_events(folder.metrics_path)[1:-1] == events[1:-1]   # steps and checkpoints
    saved = [e for e in events if isinstance(e, CheckpointSaved)]
    names = [f"step-{s:08d}" for s in (1, 2, 3)]
    assert saved == [CheckpointSaved(s, str(folder.checkpoints / n))
                     for s, n in zip((1, 2, 3), names)]
    assert sorted(p.name for p in folder.checkpoints.glob("step-*")) == names[2:]   # keep 1
    state = read_state(folder.checkpoints / names[-1])
    assert state["tokens_seen"] == 3 * 32 and state["config"]["steps"] == 3
    assert isinstance(state["data"], dict) and isinstance(state["rng"], dict)
    assert "optimizer" in state and state["scaler"] is None   # fp32: no loss scaling to keep
    assert trainer.state.saved_step == 3


def test_a_run_of_one_step_keeps_it_and_one_stopped_before_any_keeps_nothing(tmp_path):
    from tfstudio.train.events import CheckpointSaved
    _, end, events = _run(tmp_path, steps=1)
    assert end.step == 1 and [e.step for e in events if isinstance(e, CheckpointSaved)] == [1]
    stopped = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=3),
                      run_dir=tmp_path / "none")
    stopped.stop()
    assert stopped.run().step == 0
    assert not list((tmp_path / "none" / "checkpoints").glob("step-*"))


def _raising_at(trainer, step, exc):
    real = trainer._train_step

    def train_step():
        if trainer.state.step == step:
            raise exc
        return real()
    trainer._train_step = train_step


@pytest.mark.parametrize("kind", ["nan", "oom", "error"])
def test_a_fault_mid_run_ends_it_with_the_kind_the_step_and_what_to_do(kind, monkeypatch):
    import tfstudio.train.trainer as trainer_module
    from tfstudio.train.events import Failed
    from tfstudio.train.trainer import NonFiniteLoss
    shutdowns = []
    monkeypatch.setattr(trainer_module, "shutdown",
                        lambda info, wait_for_peers=False: shutdowns.append(wait_for_peers))
    exc = {"nan": NonFiniteLoss("the loss became nan at step 3"),
           "oom": torch.OutOfMemoryError("CUDA out of memory"),
           "error": ValueError("boom")}[kind]
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**{**TINY, "steps": 5, "batch_size": 3}),
                      listeners=[events.append])
    _raising_at(trainer, 2, exc)
    end = trainer.run()
    message = {"nan": "the loss became nan at step 3",
               "oom": "out of memory on cpu at step 3. Reduce the batch size (now 3; keep the "
                      "effective batch with grad_accum), the sequence length (now 16) or the "
                      "model's width/depth; on a GPU, bf16 halves activation memory",
               "error": "ValueError: boom"}[kind]
    assert isinstance(end, Failed) and (end.step, end.reason, end.message) == (2, kind, message)
    assert events[-1] is end                        # the listeners hear how it ended
    if kind == "error":   # the traceback, for the log
        assert end.details.startswith("Traceback") and "ValueError: boom" in end.details
    else:
        assert end.details == ""
    assert shutdowns == [False]                     # a failed rank never waits for its peers
    shutdowns.clear()
    done = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=1)).run()
    assert done.reason == "completed" and shutdowns == [True]


def test_a_refused_run_says_why_at_step_0(tmp_path):
    import os

    from tfstudio.runs.lock import RunLock
    from tfstudio.train.events import Failed
    _, end, events = _run(steps=2, lr=-1.0)
    assert end == Failed(0, "refused", "lr must be positive; got -1.0") and events == [end]
    with RunLock(tmp_path / "busy"):      # another writer holds the folder
        _, end, _ = _run(tmp_path, name="busy", steps=2)
    assert (end.step, end.reason) == (0, "refused")
    assert f"is being written by another training run (process {os.getpid()})" in end.message


def test_an_old_run_is_replaced_only_when_asked_and_resumed_when_asked(tmp_path):
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import Finished, Started
    _run(tmp_path, steps=2)
    _, end, _ = _run(tmp_path, steps=2)                    # neither --force nor --resume
    assert end.reason == "refused" and "already holds a trained run" in end.message
    trainer, end, events = _run(tmp_path, steps=2, resume=True)
    assert end == Finished(2, "already finished", note=end.note) and trainer.step == 2
    assert end.note.startswith(f"{tmp_path / 'run'} already finished at step 2; to train "
                               "further, resume with --steps N (more than 2)")
    assert trainer.config.steps == 2 and events == [end]
    _, end, events = _run(tmp_path, steps=1, overwrite=True)   # --force: a new run
    assert end.reason == "completed" and isinstance(events[0], Started)
    assert RunFolder(tmp_path / "run").config().steps == 1


def test_a_resumed_run_continues_exactly_from_its_newest_intact_checkpoint(tmp_path):
    import json

    from tfstudio.runs.folder import RunFolder

    # the same cosine horizon (a stopped run keeps the one it started with)
    _, _, straight = _run(tmp_path, name="straight", steps=4, lr_decay_steps=4)
    _run(tmp_path, steps=2, checkpoint_every=1, lr_decay_steps=4)
    folder = RunFolder(tmp_path / "run")
    weights = folder.checkpoints / "step-00000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])         # the newest checkpoint is damaged
    with open(folder.metrics_path, "a") as f:               # and step 2 was logged before it
        f.write(json.dumps({**straight[2].to_dict(), "loss": 99.0}) + "\n")
    trainer, end, resumed = _run(tmp_path, steps=4, resume=True)
    assert end.reason == "completed" and end.step == 4
    notes = resumed[0].notes
    assert len(notes) == 1 and "step-00000002" in notes[0]   # said which one was passed over
    steps = [e for e in resumed if isinstance(e, StepMetrics)]
    expected = [e for e in straight if isinstance(e, StepMetrics)][1:]
    assert [e.step for e in steps] == [2, 3, 4]
    assert [e.tokens_seen for e in steps] == [64, 96, 128]
    assert [e.loss for e in steps] == pytest.approx([e.loss for e in expected], rel=1e-5)
    assert folder.config().steps == 4                        # the extension is recorded
    logged = [e.step for e in __import__("tfstudio.train.events", fromlist=["x"]).read_events(
        folder.metrics_path) if isinstance(e, StepMetrics)]
    assert logged == [1, 2, 3, 4]                            # step 2 once, from this run


def test_a_given_tokenizer_and_corpus_are_the_ones_trained_on(tmp_path):
    from tfstudio.data import load_corpus
    path = tmp_path / "text.txt"
    path.write_text("abcab cabca bcabc " * 40)
    corpus = load_corpus(str(path))
    tok = CharTokenizer("abc ")
    trainer, end, events = _run(steps=1, tokenizer=tok, corpus=corpus)
    assert end.reason == "completed"
    assert trainer.pipeline.corpus is corpus and trainer.tokenizer is tok
    embed = trainer.model.state_dict()["embed.weight"]
    assert embed.shape[0] == tok.vocab_size


def test_model_flops_utilisation_uses_three_times_the_forward_flops(monkeypatch):
    import tfstudio.train.trainer as trainer_module
    from tfstudio.graph.cost import estimate_cost
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    from tfstudio.train.trainer import _training_flops_per_token
    monkeypatch.setattr(trainer_module, "peak_flops", lambda device: 1e12)
    trainer, _, events = _run(steps=1)
    graph = fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"), ByteTokenizer())
    forward = estimate_cost(graph, context_length=16).flops_per_token
    assert forward != estimate_cost(graph, context_length=64).flops_per_token
    (step,) = [e for e in events if isinstance(e, StepMetrics)]
    assert step.mfu == pytest.approx(3 * forward * step.tokens_per_s / 1e12)
    assert _training_flops_per_token(object(), 16) == 0.0    # no estimate: 0, never a failure


def test_init_from_starts_with_the_sources_weights_and_says_what_was_fitted(tmp_path):
    from padded_run import padded_byte_run

    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.events import Started
    _, _, source, _ = padded_byte_run(tmp_path / "source")
    saved = RunFolder(tmp_path / "source").load_model().state_dict()
    at_start = {}

    def listener(event):
        if isinstance(event, Started):
            at_start.update({k: v.clone() for k, v in trainer.model.state_dict().items()})
    events = []
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=1, init_from=str(source.path)),
                      listeners=[events.append, listener])
    end = trainer.run()
    assert end.reason == "completed", end
    assert events[0].notes == [f"--init-from {source.path}: embed.weight narrowed from 264 to "
                               "260 rows for this run's tokenizer"]
    assert torch.equal(at_start["embed.weight"], saved["embed.weight"][:260])
    for name, value in saved.items():
        assert torch.equal(at_start[name], value[:260] if value.shape[0] == 264 else value), name


def test_the_compile_option_trains_the_compiled_module(monkeypatch):
    calls = []

    class Compiled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kw):
            calls.append(1)
            return self.inner(*args, **kw)
    monkeypatch.setattr(torch, "compile", lambda module: Compiled(module))
    trainer, end, _ = _run(steps=2, compile=True)
    assert end.reason == "completed" and isinstance(trainer.session.train_model, Compiled)
    assert trainer.session.train_model.inner is trainer.model and len(calls) == 2


def test_a_paused_run_waits_between_steps_until_resumed_or_stopped():
    import threading
    seen = {}

    def pause_at_2(trainer, then):
        def listener(event):
            if isinstance(event, StepMetrics) and event.step == 2:
                trainer.pause()

                def later():
                    time.sleep(0.5)
                    seen[then] = trainer.step
                    trainer.resume() if then == "resume" else trainer.stop()
                threading.Thread(target=later).start()
        return listener
    for then, reason, step in (("resume", "completed", 4), ("stop", "stopped", 2)):
        trainer = Trainer(tfstudio.load_graph("tiny-gpt"), TrainConfig(**TINY, steps=4))
        trainer.listeners.append(pause_at_2(trainer, then))
        end = trainer.run()
        assert seen[then] == 2                      # half a second later: still at step 2
        assert (end.reason, end.step) == (reason, step)


def test_probes_during_a_run_carry_the_snapshot():
    from tfstudio.train.events import Probe
    _, _, events = _run(steps=2, probe_every=2)
    probes = [e for e in events if isinstance(e, Probe)]
    assert [p.step for p in probes] == [0, 2]
    assert all(p.data["step"] == p.step and p.data["tokens"] for p in probes)


def test_a_checkpoint_without_a_token_count_resumes_counting_from_zero(tmp_path):
    import json

    from tfstudio.runs.folder import RunFolder
    _run(tmp_path, steps=2)
    ckpt = RunFolder(tmp_path / "run").checkpoints / "step-00000002"
    state = json.loads((ckpt / "state.json").read_text())
    del state["tokens_seen"], state["manifest"]               # an older checkpoint: no hashes
    (ckpt / "state.json").write_text(json.dumps(state))
    (ckpt / "manifest.json").unlink()
    _, end, events = _run(tmp_path, steps=3, resume=True)
    assert end.reason == "completed", end
    assert [e.tokens_seen for e in events if isinstance(e, StepMetrics)] == [32]


def test_logged_layer_norms_are_of_the_same_step_and_make_up_its_total_norm():
    """tiny-gpt's groups: its blocks' first two key parts (positions live in a sub-table,
    attention in sub-layers); the groups split the parameters, so the total gradient norm is
    the root of the sum of the layers' squares, on every logged step."""
    _, _, events = _run(steps=7, log_every=3)
    steps = [e for e in events if isinstance(e, StepMetrics)]
    assert [e.step for e in steps] == [3, 6, 7]
    for e in steps:
        assert sorted(e.layer_grad_norms) == ["embed", "final_norm", "layers.0", "layers.1",
                                              "pos"]
        total = math.sqrt(sum(v * v for v in e.layer_grad_norms.values()))
        assert total == pytest.approx(e.grad_norm, rel=1e-4)
