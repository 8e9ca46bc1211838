"""Sampling filters against their definitions (logits / T, then top-k, then top-p)."""
import math

import pytest
import torch

from tfstudio.train.optim import lr_at
from tfstudio.train.sampling import apply_filters, next_token_view, sample_next


def softmax(xs):
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


def test_temperature_matches_formula():
    logits = [2.0, 1.0, 0.5, -1.0]
    for t in (0.5, 1.0, 2.0):
        got = torch.softmax(apply_filters(torch.tensor(logits), temperature=t), -1).tolist()
        want = softmax([x / t for x in logits])
        assert got == pytest.approx(want, abs=1e-6)


def test_top_k_one_is_greedy():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 50, generator=g)
    picks = sample_next(logits, temperature=1.3, top_k=1, generator=g)
    assert torch.equal(picks, logits.argmax(-1))
    assert torch.equal(sample_next(logits, temperature=0), logits.argmax(-1))


def test_no_filter_leaves_distribution_unchanged():
    logits = torch.randn(3, 17)
    out = apply_filters(logits, temperature=1.0, top_k=0, top_p=1.0)
    assert torch.allclose(torch.softmax(out, -1), torch.softmax(logits, -1))


def test_top_p_keeps_smallest_set_reaching_p():
    probs = [0.5, 0.3, 0.15, 0.05]
    logits = torch.tensor([math.log(p) for p in probs])
    kept = torch.isfinite(apply_filters(logits, top_p=0.8)).tolist()
    assert kept == [True, True, False, False]        # 0.5 + 0.3 reaches 0.8
    kept = torch.isfinite(apply_filters(logits, top_p=0.81)).tolist()
    assert kept == [True, True, True, False]
    kept = torch.isfinite(apply_filters(logits, top_p=0.4)).tolist()
    assert kept == [True, False, False, False]       # the top token always survives


def test_next_token_view_marks_filtered_tokens():
    probs = [0.4, 0.3, 0.2, 0.1]
    logits = torch.tensor([math.log(p) for p in probs])
    view = next_token_view(logits, decode=lambda i: "abcd"[i], top_k=3, top_p=0.6)
    assert [c.text for c in view.candidates] == list("abcd")
    assert [c.filtered_by for c in view.candidates] == ["", "", "top-p", "top-k"]
    assert view.kept == 2
    assert [c.prob_final for c in view.candidates] == pytest.approx([4 / 7, 3 / 7, 0, 0])
    assert [c.prob for c in view.candidates] == pytest.approx(probs)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="top_p"):
        apply_filters(torch.zeros(3), top_p=0)
    with pytest.raises(ValueError, match="temperature"):
        apply_filters(torch.zeros(3), temperature=-1)


def test_schedule_warmup_then_cosine():
    kw = dict(lr=1.0, warmup=10, total=110, min_ratio=0.1)
    assert lr_at(0, **kw) == pytest.approx(0.1)
    assert lr_at(9, **kw) == pytest.approx(1.0)
    assert lr_at(60, **kw) == pytest.approx(0.1 + 0.9 * 0.5)   # half way: cos(pi/2) = 0
    assert lr_at(110, **kw) == pytest.approx(0.1)
