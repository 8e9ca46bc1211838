"""Norm placement at a high learning rate: pre-norm, post-norm and post-norm in the residual
(y = x + Norm(F(x))), their validation loss and how far apart their layers' gradient norms
end, each at its own best lr from the recorded sweep (or the lesson's shared lr where none is
recorded); the notes give the lr at which each stops learning."""
from __future__ import annotations

import json
import math
from pathlib import Path

from ...graph.kinds import PLACEMENT_NAMES, POST, POST_IN_RESIDUAL, PRE
from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, Sample, higher, lower
from .measures import factor, final_loss, log_spread, variants
from .training import LESSON_TRAINING

CLAIM = ("the residual y = x + F(x) keeps an identity gradient path: pre-norm "
         "(y = x + F(Norm(x))) and post-norm in the residual (y = x + Norm(F(x))) keep it, "
         "post-norm (y = Norm(x + F(x))) sends every gradient through each layer's norm, so "
         "the first two train more stably at a high learning rate.")
PLACEMENTS = (PRE, POST, POST_IN_RESIDUAL)   # the placements the claim is about (no sandwich)
NAMES = {p: PLACEMENT_NAMES[p] for p in PLACEMENTS}


def judge(c) -> list[Check]:
    v = variants(c, "norm")
    if not set(PLACEMENTS) <= set(v):
        return [Check("All three placements were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    own = c.lrs()
    lrs = {p: own.get(f"norm={p}", c.plan.config.lr) for p in PLACEMENTS}
    at = (f"At lr {lrs[PRE]:g}" if len(set(lrs.values())) == 1 else "At its own best lr")
    lr_words = (f"same lr {lrs[PRE]:g}" if len(set(lrs.values())) == 1 else
                "each at its own lr (" + ", ".join(f"{NAMES[p]} {lrs[p]:g}"
                                                   for p in PLACEMENTS) + ")")
    loss = {p: final_loss(v[p]) for p in PLACEMENTS}
    unigram = c.baselines.get("unigram")
    counted = f"; counting single characters gives {unigram:.3f}" if unigram else ""
    seen = ", ".join(f"{NAMES[p]} {loss[p].text()}" for p in PLACEMENTS)
    checks = []
    for p in (PRE, POST_IN_RESIDUAL):
        tested = lower(loss[p], loss["post"])
        checks.append(Check(f"{at} {NAMES[p]} trains better than post-norm", tested,
                            f"Validation loss ({lr_words}): {seen}{counted}.",
                            tests=(tested,)))
    spread = {p: log_spread(v[p]) for p in PLACEMENTS}
    if None in spread.values():
        return checks
    shown = ", ".join(f"{NAMES[p]} {_factors(spread[p])}" for p in PLACEMENTS)
    for p in (PRE, POST_IN_RESIDUAL):
        tested = higher(spread["post"], spread[p], digits=2)
        wider = tested.outcome
        reading = {HOLDS: f"post-norm's layers end further apart than {NAMES[p]}'s, as the "
                          "claim's cause predicts",
                   FAILS: f"{NAMES[p]}'s layers end further apart than post-norm's, so the "
                          "spread of gradients does not explain a gap between them here",
                   UNDECIDED: f"the test does not separate post-norm's and {NAMES[p]}'s "
                              "spreads, so they do not explain a gap here"}[wider]
        checks.append(Check(
            f"Post-norm's gradients differ more from layer to layer than {NAMES[p]}'s", wider,
            f"Largest over smallest per-layer gradient norm at the last logged step, {lr_words} "
            f"(geometric mean over seeds, ± the spread of its log10; tested in log10): "
            f"{shown}: {reading}.", tests=(tested,)))
    return checks


# the lr at which each placement stops learning: one seed, a short run per lr
# (60 steps: past the warm-up a learning model is well below counting single characters)
SWEEP_LRS, SWEEP_STEPS, SWEEP_FILE = (3e-3, 1e-2, 3e-2, 1e-1), 60, "lr_sweep.json"


def measure(c, progress=lambda line: None) -> None:
    """Train each placement SWEEP_STEPS steps at each of SWEEP_LRS (seed 1) and save the
    final validation losses in SWEEP_FILE (kept when there)."""
    from ...runs import TrainConfig
    from ...train.events import read_events
    from ...train.trainer import Trainer
    from ..runner import plan_graph
    path = Path(c.out) / SWEEP_FILE
    if path.exists():
        return
    steps = min(SWEEP_STEPS, c.plan.config.steps)  # a shortened lesson sweeps as short
    losses: dict[str, dict[str, float | None]] = {}
    for v in c.variants:
        placement = v.name.split("=", 1)[1]
        for lr in SWEEP_LRS:
            progress(f"lr sweep: {v.name} at lr {lr:g}")
            config = TrainConfig.from_dict({**c.plan.config.to_dict(), "seed": 1, "lr": lr,
                                            "steps": steps, "eval_every": steps})
            run_dir = Path(c.out) / "lr-sweep" / v.slug / f"lr-{lr:g}"
            end = Trainer(plan_graph(c.out, v.slug), config, run_dir=run_dir,
                          overwrite=True).run()
            metrics = run_dir / "metrics.jsonl"
            evals = [e.val_loss for e in read_events(metrics)
                     if e.kind == "EvalMetrics"] if metrics.exists() else []
            final = evals[-1] if evals else None
            ok = final is not None and math.isfinite(final) and end.kind != "Failed"
            losses.setdefault(placement, {})[f"{lr:g}"] = final if ok else None
    path.write_text(json.dumps({"steps": steps, "seed": 1, "losses": losses}, indent=1),
                    encoding="utf-8")


def schedule(seeds: int, steps: int | None) -> list:
    """The lr sweep's trainings (after the comparison, one at a time): each placement at each
    of SWEEP_LRS for min(SWEEP_STEPS, steps) steps."""
    import dataclasses

    from ..variants import expand
    from . import prepare
    from .cost import Training

    run = prepare("norm", seeds=[1], steps=steps)
    config = dataclasses.replace(run.config, steps=min(SWEEP_STEPS, run.config.steps))
    return [Training(v.name, lambda g=v.graph: g, config, len(SWEEP_LRS), parallel=False)
            for v in expand(run.base, run.varies)]


def notes(c) -> list[str]:
    path = Path(c.out) / SWEEP_FILE
    unigram = c.baselines.get("unigram")
    if not path.exists() or unigram is None:
        return []
    sweep = json.loads(path.read_text(encoding="utf-8"))
    words = []
    for placement, by_lr in sweep["losses"].items():
        stalled = [lr for lr, loss in by_lr.items() if loss is None or loss >= unigram]
        words.append(f"{NAMES.get(placement, placement)} "
                     + (f"from lr {stalled[0]}" if stalled else
                        f"at none up to lr {list(by_lr)[-1]}"))
    return [f"the lowest lr at which each placement ends no better than counting single "
            f"characters ({unigram:.3f}) after {sweep['steps']} steps (seed {sweep['seed']}, "
            f"lr {', '.join(f'{lr:g}' for lr in SWEEP_LRS)}): " + "; ".join(words) + "."]


def _factors(log10: Sample) -> str:
    """"x9.5 (± 0.21 in log10)": the geometric mean of the seeds' ratios."""
    mean = factor(10 ** log10.mean)
    return mean if log10.spread is None else f"{mean} (± {log10.spread:.2g} in log10)"


PAPER = Paper(
    "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture",
    "at initialisation the post-LN Transformer's expected gradients near the output are large, "
    "so it needs a learning-rate warm-up; pre-LN's are well-behaved, and pre-LN trained "
    "without warm-up reached comparable results in less training time",
    "Transformer machine translation and BERT pre-training")


register(Lesson(
    "norm", "Lesson: pre-norm, post-norm and post-norm in the residual", CLAIM,
    "project seed, section 3, Normalisation and residuals (placements: section 2)", "tiny-gpt",
    [("norm", list(PLACEMENTS))], {**LESSON_TRAINING, "lr": 1e-2, "warmup_steps": 10},
    judge, base_edits=[("layers.repeat", "4")], grad_norms=True, measure=measure,
    notes=notes, schedule=schedule, papers=(PAPER,)))
