"""A lesson's sentences follow its numbers: fed the same comparison with its numbers in either
order, the attention and norm lessons say the opposite thing and quote each variant's own
numbers under its own name; a lesson missing a variant says only what it shows.

(The verdict rule, and each lesson holding, failing or sitting in the spread, are in
tests/experiments/lessons/test_lesson_verdicts.py; these are the cases it does not feed.)"""
from pathlib import Path

import pytest

from tfstudio.experiments.inference import InferenceCost
from tfstudio.experiments.lessons import FAILS, HOLDS, LESSONS
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan

NOISE = (0.0, 0.01, -0.01)   # three seeds around each number: a small spread, the same mean
UNIGRAM = 3.0


def variant(key: str, value: str, loss: float, *, kv: int | None = None,
            grads: dict[str, float] | None = None) -> VariantResult:
    runs = []
    for seed, n in zip((1, 2, 3), NOISE):
        norms = {name: [(10, g * (1 + n))] for name, g in (grads or {}).items()}
        cost = InferenceCost(64, 500.0, kv, kv, "float32") if kv is not None else None
        runs.append(RunResult(seed, Path("."), 1000, [(10, loss + n)], [(10, loss + n)],
                              norms, 1.0, inference=cost))
    return VariantResult(f"{key}={value}", f"{key}-{value}", runs, 1.0, 0)


def comparison(lesson: str, variants: list[VariantResult]) -> Comparison:
    key = variants[0].name.split("=")[0]
    config = LESSONS[lesson].config()
    plan = Plan("tiny-gpt", [(key, [v.name.split("=")[1] for v in variants])], [1, 2, 3],
                config, [], [], lesson)
    return Comparison(Path("."), plan, variants, {"unigram": UNIGRAM}, None)


# ------------------------------------------------------------------------- attention
@pytest.mark.parametrize("mha, mqa", [(1.900, 2.100), (2.100, 1.900)])
def test_attention_lesson_says_what_the_losses_show(mha, mqa):
    c = comparison("attention", [variant("attention", "mha", mha, kv=4096),
                                 variant("attention", "gqa", 2.0, kv=2048),
                                 variant("attention", "mqa", mqa, kv=1024)])
    cost = LESSONS["attention"].verdict(c).checks[0]
    assert cost.claim == "Sharing K/V heads costs some quality"
    assert f"MHA {mha:.3f} ± 0.010, GQA 2.000 ± 0.010, MQA {mqa:.3f} ± 0.010" in cost.sentence
    paid, free = "MQA pays for its smaller cache in quality", "sharing K/V cost nothing"
    if mqa > mha:
        assert cost.outcome == HOLDS and paid in cost.sentence and free not in cost.sentence
    else:
        assert cost.outcome == FAILS and free in cost.sentence and paid not in cost.sentence
    text = "\n".join(LESSONS["attention"].summarise(c))
    assert f"Sharing K/V heads costs some quality: {cost.label}." in text


# ------------------------------------------------------------------------- norm
@pytest.mark.parametrize("pre_spread, post_spread", [(2.0, 500.0), (500.0, 2.0)])
def test_norm_lesson_quotes_each_placements_own_spread(pre_spread, post_spread):
    def norms(spread):  # the embedding's norm is not a layer's and is left out of the spread
        return {"embed": 1e6, "layers.0": 1.0, "layers.3": spread}
    c = comparison("norm", [variant("norm", "pre", 1.5, grads=norms(pre_spread)),
                            variant("norm", "post", 2.5, grads=norms(post_spread)),
                            variant("norm", "post-in-residual", 1.7, grads=norms(20.0))])
    pre_trains, _, pre_spreads, _ = LESSONS["norm"].verdict(c).checks
    assert ("Validation loss (same lr 0.01): pre-norm 1.500 ± 0.010, post-norm 2.500 ± 0.010, "
            "post-norm in the residual 1.700 ± 0.010; counting single characters gives 3.000."
            == pre_trains.sentence)
    assert pre_trains.claim == "At lr 0.01 pre-norm trains better than post-norm"
    factor = lambda x: f"x{x:.2g}" if x < 10 else f"x{x:,.0f}"  # noqa: E731
    for name, spread in (("pre-norm", pre_spread), ("post-norm", post_spread),
                         ("post-norm in the residual", 20.0)):
        assert f" {name} {factor(spread)} (± " in pre_spreads.sentence, pre_spreads.sentence
    assert "1e+06" not in pre_spreads.sentence and "x5e+05" not in pre_spreads.sentence
    if post_spread > pre_spread:
        assert pre_spreads.outcome == HOLDS and "as the claim's cause predicts" in \
            pre_spreads.sentence
    else:
        assert pre_spreads.outcome == FAILS and "does not explain a gap" in pre_spreads.sentence


def test_norm_lesson_names_each_placements_own_lr_when_they_differ():
    c = comparison("norm", [variant("norm", p, 1.5 + i / 10)
                            for i, p in enumerate(("pre", "post", "post-in-residual"))])
    c.plan.variants = [{"name": f"norm={p}", "slug": p, "settings": [], "lr": lr}
                       for p, lr in (("pre", 0.03), ("post", 0.003), ("post-in-residual", 0.01))]
    first = LESSONS["norm"].verdict(c).checks[0]
    assert first.claim == "At its own best lr pre-norm trains better than post-norm"
    assert first.sentence.startswith("Validation loss (each at its own lr (pre-norm 0.03, "
                                     "post-norm 0.003, post-norm in the residual 0.01)):")
    lines = LESSONS["norm"].summarise(c)
    assert any(x.startswith("Trained with each variant at its own best lr from an lr sweep "
                            "(norm=pre 0.03, norm=post 0.003") for x in lines)


# ------------------------------------------------------------------------- a missing variant
def test_a_lesson_missing_a_variant_says_only_what_it_shows():
    two = comparison("attention", [variant("attention", "mha", 1.9, kv=4096),
                                   variant("attention", "mqa", 2.1, kv=1024)])
    lines = LESSONS["attention"].summarise(two)
    assert lines[1:3] == [
        "Verdict: does not hold here (1 do not of 1 checks; a difference counts when a "
        "two-sided t-test gives p < 0.05 (Welch's between variants, one-sample against a "
        "counted baseline, paired where one model per seed is measured several ways; Holm's "
        "correction over a claim's buckets), so a true difference of zero decides a check 5% "
        "of the time).",
        "MHA, GQA and MQA were trained: does not hold. Only mha, mqa finished."]
    published = [x for x in lines[3:] if x.startswith("Published: ")]
    assert published and lines[3:3 + len(published)] == published
    assert lines[3 + len(published)].startswith("Trained with lr ")
    one = comparison("norm", [variant("norm", "pre", 1.5, grads={"layers.0": 1.0})])
    lines = LESSONS["norm"].summarise(one)
    assert lines[2:3] == ["All three placements were trained: does not hold. Only pre "
                          "finished."]
    assert not any("1.500" in x or "1.900" in x or "bytes" in x for x in lines[1:])
