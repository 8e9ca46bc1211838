"""Direct tests of the training safeguards a model can learn without (so a loss curve would not
notice them missing): AdamW decays matrices but not norms and biases; every step's gradient is
clipped, logged or not; the masked-LM batches training uses mask at the documented rates.

Each expectation is computed here, by hand: AdamW's decay factor (1 - lr * wd), the gradient
norm of the parameters the optimizer steps with, and counts of masked positions."""
import math

import pytest
import torch
from torch import nn

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.nn.norm import Norm
from tfstudio.runs.config import TrainConfig
from tfstudio.train.optim import lr_at, make_optimizer
from tfstudio.train.trainer import Trainer

TINY = dict(corpus="sample:small", tokenizer="byte", batch_size=2, seq_len=16,
            warmup_steps=0, eval_every=0)


def decay_expected(model: nn.Module) -> tuple[set[int], set[int]]:
    """(ids of parameters AdamW must decay, ids it must not), classified from the module types:
    Linear/Embedding weights decay; norm gains and every bias do not."""
    decays, keeps = set(), set()
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if isinstance(module, (Norm, nn.LayerNorm)) or name == "bias":
                keeps.add(id(p))
            elif isinstance(module, (nn.Linear, nn.Embedding)) and name == "weight":
                decays.add(id(p))
    return decays, keeps


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-llama"])
def test_adamw_decays_matrices_and_spares_norms_and_biases(preset):
    torch.manual_seed(0)
    model = compile_graph(tfstudio.load_graph(preset))
    decays, keeps = decay_expected(model)
    assert decays and keeps  # the preset has both kinds, so the test can fail
    lr, wd = 0.1, 0.5
    optimizer = make_optimizer(model, lr, wd, (0.9, 0.95), "cpu")
    before = {id(p): p.detach().clone() for p in model.parameters()}
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()  # zero gradient: Adam's update is 0, only the decay p *= 1 - lr*wd acts
    for p in model.parameters():
        if id(p) in decays:
            torch.testing.assert_close(p.detach(), before[id(p)] * (1 - lr * wd))
        elif id(p) in keeps:
            assert torch.equal(p.detach(), before[id(p)]), "a norm gain or bias was decayed"


def test_trainer_optimizer_spares_norms_and_biases():
    """The optimizer the Trainer actually builds (not only make_optimizer's own)."""
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=1, weight_decay=0.3))
    assert trainer.run().kind == "Finished"
    decays, keeps = decay_expected(trainer.model)
    decay_of = {id(p): group["weight_decay"] for group in trainer.optimizer.param_groups
                for p in group["params"]}
    assert {decay_of[i] for i in keeps} == {0.0}
    assert {decay_of[i] for i in decays} == {0.3}


def applied_gradient_norms(trainer: Trainer) -> list[float]:
    """Hooks the optimizer once the Trainer built it: the total norm of the gradients each
    ``optimizer.step()`` applies, computed here."""
    norms: list[float] = []

    def record(optimizer, args, kwargs):
        grads = [p.grad.detach().double() for g in optimizer.param_groups for p in g["params"]
                 if p.grad is not None]
        norms.append(math.sqrt(sum(float((g * g).sum()) for g in grads)))

    def on_event(event):
        if event.kind == "Started":
            trainer.optimizer.register_step_pre_hook(record)

    trainer.listeners.append(on_event)
    return norms


@pytest.mark.parametrize("log_every", [1, 3])
def test_every_step_is_clipped_logged_or_not(log_every):
    clip, steps = 0.01, 5   # far below tiny-gpt's gradient norm at init, so every step clips
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=steps, grad_clip=clip, log_every=log_every))
    applied = applied_gradient_norms(trainer)
    reported = {}
    trainer.listeners.append(
        lambda e: e.kind == "StepMetrics" and reported.__setitem__(e.step, e.grad_norm))
    assert trainer.run().kind == "Finished"
    assert len(applied) == steps
    logged = [s for s in range(1, steps + 1) if s % log_every == 0 or s == steps]
    assert sorted(reported) == logged
    assert all(reported[s] > 10 * clip for s in logged), reported  # clipping had work to do
    for step, norm in enumerate(applied, start=1):
        assert norm == pytest.approx(clip, rel=1e-3), f"step {step}: applied norm {norm}"


def test_clipping_off_applies_the_raw_gradient():
    """grad_clip=0 disables clipping: the applied norm is the reported one (so the test above
    measures clipping, not some other scaling)."""
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=2, grad_clip=0.0, log_every=1))
    applied = applied_gradient_norms(trainer)
    reported = {}
    trainer.listeners.append(
        lambda e: e.kind == "StepMetrics" and reported.__setitem__(e.step, e.grad_norm))
    assert trainer.run().kind == "Finished"
    assert applied == pytest.approx([reported[1], reported[2]], rel=1e-4)


def test_masked_lm_batches_used_in_training_mask_at_the_bert_rates():
    """15% of ordinary positions get a label; of those 80% read the mask id, 10% a random token,
    10% the original; specials are never chosen. Counted over the batches the Trainer's own
    pipeline hands to training (recorded during a real run, then drawn on from where it is)."""
    cfg = TrainConfig(corpus="sample:small", tokenizer="byte", batch_size=8, seq_len=64,
                      steps=3, warmup_steps=0, eval_every=0)
    trainer = Trainer(tfstudio.load_graph("tiny-bert"), cfg)
    batches = []

    def on_event(event):
        if event.kind == "Started":
            real = trainer.pipeline.train_batch
            trainer.pipeline.train_batch = lambda n: batches.append(real(n)) or batches[-1]

    trainer.listeners.append(on_event)
    assert trainer.run().kind == "Finished"
    assert len(batches) == cfg.steps  # what training consumed went through the recorder
    while len(batches) < 40:
        trainer.pipeline.train_batch(cfg.batch_size)
    tok = trainer.tokenizer
    specials = torch.tensor(sorted(set(tok.specials.values())))
    inputs = torch.cat([b.inputs[0] for b in batches])
    labels = torch.cat([b.labels for b in batches])
    assert inputs.shape == (40 * cfg.batch_size, cfg.seq_len)
    chosen = labels != -100
    original = torch.where(chosen, labels, inputs)
    ordinary = ~torch.isin(original, specials)
    assert not (chosen & ~ordinary).any(), "a special token was masked"
    n_ordinary, n_chosen = int(ordinary.sum()), int(chosen.sum())
    # 4 binomial standard deviations: sqrt(.15 * .85 / 20000) ~ 0.0025
    assert n_chosen / n_ordinary == pytest.approx(0.15, abs=0.012)
    masked = int((chosen & (inputs == tok.mask_id)).sum())
    kept = int((chosen & (inputs == labels)).sum())
    assert masked / n_chosen == pytest.approx(0.8, abs=0.03)
    # kept = the 10% left alone + random draws that hit the original (1 in ~256)
    assert kept / n_chosen == pytest.approx(0.1 + 0.1 / tok.ordinary_vocab_size, abs=0.025)
    random = n_chosen - masked - kept
    assert random / n_chosen == pytest.approx(0.1, abs=0.025)
    assert not (~chosen & (inputs == tok.mask_id)).any(), "an unlabelled position was masked"


# ---------------------------------------------------------------- found by mutation testing

def test_optimizer_uses_the_given_betas_and_the_fused_kernel_on_cpu_and_cuda_only():
    model = nn.Linear(3, 2)
    cpu = make_optimizer(model, 0.01, 0.1, (0.8, 0.9), "cpu")
    assert [g["betas"] for g in cpu.param_groups] == [(0.8, 0.9)] * 2
    assert [g["lr"] for g in cpu.param_groups] == [0.01, 0.01]
    assert cpu.defaults.get("fused") is True
    cuda = make_optimizer(model, 0.01, 0.1, (0.8, 0.9), "cuda")  # built, not stepped
    assert cuda.defaults.get("fused") is True
    assert not make_optimizer(model, 0.01, 0.1, (0.8, 0.9), "mps").defaults.get("fused")


def test_the_fused_cpu_step_is_adamw_with_decay_on_matrices_only():
    """One step of the fused kernel equals AdamW's update written out (bias-corrected moments,
    decoupled decay on the weight matrix, none on the bias)."""
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    before = [p.detach().clone() for p in model.parameters()]
    grads = [torch.randn_like(p) for p in model.parameters()]
    opt = make_optimizer(model, 0.01, 0.1, (0.8, 0.9), "cpu")
    for p, g in zip(model.parameters(), grads):
        p.grad = g.clone()
    opt.step()
    for (p, w, g, decay) in zip(model.parameters(), before, grads, (0.1, 0.0)):
        m_hat, v_hat = (1 - 0.8) * g / (1 - 0.8), (1 - 0.9) * g * g / (1 - 0.9)
        expected = w * (1 - 0.01 * decay) - 0.01 * m_hat / (v_hat.sqrt() + 1e-8)
        torch.testing.assert_close(p.detach(), expected, rtol=0, atol=1e-7)


def test_trainer_optimizer_uses_the_configured_betas():
    trainer = Trainer(tfstudio.load_graph("tiny-gpt"),
                      TrainConfig(**TINY, steps=1, beta1=0.7, beta2=0.8))
    assert trainer.run().kind == "Finished"
    assert {g["betas"] for g in trainer.optimizer.param_groups} == {(0.7, 0.8)}


@pytest.mark.parametrize("step, warmup, total, expected", [
    (0, 1, 11, 1.0),          # a one-step warmup reaches the full rate at once
    (10, 10, 110, 1.0),       # the first step after warmup: the top of the cosine
    (2, 1, 2, 0.1),           # a one-step decay ends at the floor
    (160, 10, 110, 0.1),      # past the end the rate stays at the floor
    (5, 0, 10, 0.1 + 0.9 * 0.5),  # no warmup: the cosine from step 0
])
def test_learning_rate_schedule_edges(step, warmup, total, expected):
    # lr * (min + (1 - min) * (1 + cos(pi * progress)) / 2), progress capped at 1
    assert lr_at(step, lr=1.0, warmup=warmup, total=total, min_ratio=0.1) \
        == pytest.approx(expected)
