"""Norm placement at a high learning rate: pre-norm against post-norm, their validation loss and
how far apart their layers' gradient norms end, at the same lr for both."""
from __future__ import annotations

from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, higher, lower
from .measures import factor, final_loss, layer_spread, variants
from .training import LESSON_TRAINING

CLAIM = ("the residual y = x + F(x) keeps an identity gradient path: pre-norm "
         "(y = x + F(Norm(x))) keeps it, post-norm (y = Norm(x + F(x))) sends every gradient "
         "through each layer's norm, so pre-norm trains more stably at a high learning rate.")
PLACEMENTS = ("pre", "post")


def judge(c) -> list[Check]:
    v = variants(c, "norm")
    if not set(PLACEMENTS) <= set(v):
        return [Check("Pre- and post-norm were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    lr = c.plan.config.lr
    pre, post = final_loss(v["pre"]), final_loss(v["post"])
    unigram = c.baselines.get("unigram")
    counted = f"; counting single characters gives {unigram:.3f}" if unigram else ""
    trains = lower(pre, post)
    checks = [Check(
        f"At lr {lr:g} pre-norm trains better than post-norm", trains,
        f"Validation loss: pre-norm {pre.text()}, post-norm {post.text()}{counted}.")]
    spread = {p: layer_spread(v[p]) for p in PLACEMENTS}
    if None in spread.values():
        return checks
    wider = higher(spread["post"], spread["pre"])
    reading = {HOLDS: "post-norm's layers end further apart, as the claim's cause predicts",
               FAILS: "pre-norm's layers end further apart, so the spread of gradients does "
                      "not explain the gap here",
               UNDECIDED: "the two spreads are within the seeds' spread of each other, so "
                          "they do not explain the gap here"}[wider]
    checks.append(Check(
        "Post-norm's gradients differ more from layer to layer than pre-norm's", wider,
        f"Largest over smallest per-layer gradient norm at the last logged step, same lr "
        f"{lr:g}: post-norm {_factors(spread['post'])}, pre-norm {_factors(spread['pre'])}: "
        f"{reading}."))
    return checks


def _factors(sample) -> str:
    mean = factor(sample.mean)
    return mean if sample.spread is None else f"{mean} (± {sample.spread:.2g})"


register(Lesson(
    "norm", "Lesson: pre-norm against post-norm", CLAIM,
    "project seed, section 3, Normalisation and residuals (placements: section 2)", "tiny-gpt",
    [("norm", list(PLACEMENTS))], {**LESSON_TRAINING, "lr": 1e-2, "warmup_steps": 10},
    judge, base_edits=[("layers.repeat", "4")], grad_norms=True))
