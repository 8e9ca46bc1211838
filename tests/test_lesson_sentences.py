"""A lesson's sentences follow its numbers: fed the same comparison with the losses in either
order, the attention and norm lessons say the opposite thing (and quote the numbers they got)."""
from pathlib import Path

import pytest

from tfstudio.experiments.inference import InferenceCost
from tfstudio.experiments.lessons import LESSONS
from tfstudio.experiments.results import Comparison, RunResult, VariantResult
from tfstudio.experiments.runner import Plan
from tfstudio.runs import TrainConfig


def variant(name: str, loss: float, kv_heads: int = 4, grad_norms=None) -> VariantResult:
    cost = InferenceCost(64, 1000.0, 2 * kv_heads * 16 * 64 * 4, 2 * kv_heads * 16 * 64 * 4,
                         "float32")
    run = RunResult(1, Path("."), 1000 * kv_heads, [(10, loss + 0.1)], [(10, loss)],
                    grad_norms or {}, 1000.0, inference=cost)
    return VariantResult(name, name, [run], 1e6, 2 * kv_heads * 16 * 4)


def comparison(variants: list[VariantResult], lr: float = 3e-3) -> Comparison:
    plan = Plan("tiny-gpt", [], [1], TrainConfig(lr=lr), [], [])
    return Comparison(Path("."), plan, variants, {"unigram": 3.0}, None)


@pytest.mark.parametrize("mha, mqa, verdict", [(1.900, 2.100, "costs a little quality"),
                                               (2.100, 1.900, "costs no quality")])
def test_attention_lesson_says_what_the_losses_show(mha, mqa, verdict):
    c = comparison([variant("attention=mha", mha, 4), variant("attention=gqa", 2.0, 2),
                    variant("attention=mqa", mqa, 1)])
    text = " ".join(LESSONS["attention"].summarise(c))
    assert verdict in text
    assert f"{mha:.3f} (MHA)" in text and f"{mqa:.3f} (MQA)" in text
    assert "4:2:1" in text  # KV cache bytes 4x, 2x, 1x of MQA's


@pytest.mark.parametrize("pre_spread, post_spread", [(2.0, 500.0), (500.0, 2.0)])
def test_norm_lesson_quotes_each_placements_own_spread(pre_spread, post_spread):
    def norms(spread):  # the embedding's norm is not a layer's and is left out of the spread
        return {"embed": [(10, 1e6)], "layers.0": [(10, 1.0)], "layers.3": [(10, spread)]}
    c = comparison([variant("norm=pre", 1.5, grad_norms=norms(pre_spread)),
                    variant("norm=post", 2.5, grad_norms=norms(post_spread))], lr=1e-2)
    text = " ".join(LESSONS["norm"].summarise(c))
    assert "pre-norm trains to a validation loss of 1.500" in text
    assert "post-norm ends at 2.500 (counting single characters gives 3.000)" in text
    fmt = lambda x: f"x{x:.1f}" if x < 100 else "about 10^3"  # noqa: E731
    assert f"layers' gradients end {fmt(post_spread)} apart" in text
    assert f"unchanged ({fmt(pre_spread)} apart)" in text


def test_a_lesson_missing_a_variant_says_only_what_it_shows():
    two = comparison([variant("attention=mha", 1.9, 4), variant("attention=mqa", 2.1, 1)])
    assert LESSONS["attention"].summarise(two) == ["KV cache and loss of each attention kind."]
    one = comparison([variant("norm=pre", 1.5)])
    assert LESSONS["norm"].summarise(one) == ["Pre- and post-norm at a high learning rate."]
