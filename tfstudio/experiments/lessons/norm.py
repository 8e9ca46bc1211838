"""Norm placement at a high learning rate: pre-norm, post-norm and post-norm in the residual
(y = x + Norm(F(x))), their validation loss and how far apart their layers' gradient norms
end, at the same lr for all three."""
from __future__ import annotations

from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, higher, lower
from .measures import factor, final_loss, layer_spread, variants
from .training import LESSON_TRAINING

CLAIM = ("the residual y = x + F(x) keeps an identity gradient path: pre-norm "
         "(y = x + F(Norm(x))) and post-norm in the residual (y = x + Norm(F(x))) keep it, "
         "post-norm (y = Norm(x + F(x))) sends every gradient through each layer's norm, so "
         "the first two train more stably at a high learning rate.")
PLACEMENTS = ("pre", "post", "post-in-residual")
NAMES = {"pre": "pre-norm", "post": "post-norm", "post-in-residual": "post-norm in the residual"}


def judge(c) -> list[Check]:
    v = variants(c, "norm")
    if not set(PLACEMENTS) <= set(v):
        return [Check("All three placements were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    lr = c.plan.config.lr
    loss = {p: final_loss(v[p]) for p in PLACEMENTS}
    unigram = c.baselines.get("unigram")
    counted = f"; counting single characters gives {unigram:.3f}" if unigram else ""
    seen = ", ".join(f"{NAMES[p]} {loss[p].text()}" for p in PLACEMENTS)
    checks = [Check(f"At lr {lr:g} {NAMES[p]} trains better than post-norm",
                    lower(loss[p], loss["post"]), f"Validation loss: {seen}{counted}.")
              for p in ("pre", "post-in-residual")]
    spread = {p: layer_spread(v[p]) for p in PLACEMENTS}
    if None in spread.values():
        return checks
    shown = ", ".join(f"{NAMES[p]} {_factors(spread[p])}" for p in PLACEMENTS)
    for p in ("pre", "post-in-residual"):
        wider = higher(spread["post"], spread[p])
        reading = {HOLDS: f"post-norm's layers end further apart than {NAMES[p]}'s, as the "
                          "claim's cause predicts",
                   FAILS: f"{NAMES[p]}'s layers end further apart than post-norm's, so the "
                          "spread of gradients does not explain a gap between them here",
                   UNDECIDED: f"post-norm's and {NAMES[p]}'s spreads are within the seeds' "
                              "spread of each other, so they do not explain a gap here"}[wider]
        checks.append(Check(
            f"Post-norm's gradients differ more from layer to layer than {NAMES[p]}'s", wider,
            f"Largest over smallest per-layer gradient norm at the last logged step, same lr "
            f"{lr:g}: {shown}: {reading}."))
    return checks


def _factors(sample) -> str:
    mean = factor(sample.mean)
    return mean if sample.spread is None else f"{mean} (± {sample.spread:.2g})"


register(Lesson(
    "norm", "Lesson: pre-norm, post-norm and post-norm in the residual", CLAIM,
    "project seed, section 3, Normalisation and residuals (placements: section 2)", "tiny-gpt",
    [("norm", list(PLACEMENTS))], {**LESSON_TRAINING, "lr": 1e-2, "warmup_steps": 10},
    judge, base_edits=[("layers.repeat", "4")], grad_norms=True))
