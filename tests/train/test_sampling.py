"""Sampling filters against their definitions (logits / T, then top-k, then top-p)."""
import math

import pytest
import torch

from tfstudio.train.optim import lr_at
from tfstudio.train.sampling import apply_filters, next_token_view, sample_next
import numpy as np
from tfstudio.train.sampling import apply_filters, sample_next


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


# Moved from test_sampling_boundaries.py: Sampling filters at their edges: top-p at an exact float boundary, and temperature applied
# before top-k/top-p (so it changes which tokens survive, not only their odds).
#
# Uniform logits give exactly representable probabilities (1/4, 1/8), so "adds up to at least p"
# can be tested where the cumulative sum equals p exactly. The temperature case is computed by
# hand in float64.
def kept(logits: torch.Tensor) -> int:
    return int(torch.isfinite(logits).sum())


@pytest.mark.parametrize("vocab, top_p, expected", [
    (4, 0.25, 1), (4, 0.5, 2), (4, 0.75, 3),      # cumulative sum reaches p exactly
    (8, 0.125, 1), (8, 0.375, 3), (8, 0.5, 4),
    (4, 0.5000001, 3), (4, 0.4999999, 2),          # either side of the boundary
])
def test_top_p_keeps_smallest_set_reaching_p_exactly(vocab, top_p, expected):
    probs = torch.softmax(torch.zeros(vocab), -1)
    assert torch.all(probs == 1 / vocab)  # exact, so the boundary is exact
    assert kept(apply_filters(torch.zeros(vocab), top_p=top_p)) == expected
    batch = apply_filters(torch.zeros(3, vocab), top_p=top_p)  # each row on its own
    assert torch.isfinite(batch).sum(-1).tolist() == [expected] * 3


def test_top_p_boundary_with_unequal_probabilities():
    # probabilities 1/2, 1/4, 1/8, 1/8 are exact in float32 from these logits
    logits = torch.log(torch.tensor([0.5, 0.25, 0.125, 0.125]))
    assert torch.equal(torch.softmax(logits, -1), torch.tensor([0.5, 0.25, 0.125, 0.125]))
    out = apply_filters(logits, top_p=0.75)
    assert torch.isfinite(out).tolist() == [True, True, False, False]
    out = apply_filters(logits, top_p=0.5)
    assert torch.isfinite(out).tolist() == [True, False, False, False]


def hand_filtered(logits: list[float], temperature: float, top_k: int, top_p: float):
    """(kept ids, final probabilities) by the documented order: temperature, top-k, top-p."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    order = list(np.argsort(-z, kind="stable"))
    if top_k:
        order = order[:top_k]
    p = np.exp(z[order] - z[order].max())
    p /= p.sum()
    n = int(np.searchsorted(np.cumsum(p), top_p - 1e-12)) + 1  # smallest prefix >= top_p
    ids = sorted(int(i) for i in order[:n])
    final = np.zeros(len(logits))
    e = np.exp(z[ids] - z[ids].max())
    final[ids] = e / e.sum()
    return ids, final


@pytest.mark.parametrize("temperature, top_k, top_p", [
    (2.0, 0, 0.8),    # flatter: 3 tokens needed for 80% (2 at temperature 1)
    (0.5, 0, 0.8),    # sharper: 1 token is enough (2 at temperature 1)
    (3.0, 3, 0.75),   # top-k then top-p, both after the temperature
    (0.7, 2, 1.0),
])
def test_temperature_comes_before_top_k_and_top_p(temperature, top_k, top_p):
    logits = [2.0, 1.0, 0.0, -1.0, -3.0]
    ids, final = hand_filtered(logits, temperature, top_k, top_p)
    out = apply_filters(torch.tensor(logits), temperature, top_k, top_p)
    assert torch.isfinite(out).nonzero().flatten().tolist() == ids
    np.testing.assert_allclose(torch.softmax(out.double(), -1).numpy(), final, atol=1e-6)
    finite = torch.isfinite(out)
    np.testing.assert_allclose(out[finite].numpy(),
                               np.asarray(logits)[finite.numpy()] / temperature, rtol=1e-6)


def test_temperature_changes_the_kept_set():
    """The case that tells the two orders apart, stated without the helper above."""
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    # temperature 1: probs .644 .237 .087 .032 -> 2 tokens reach 0.8
    assert kept(apply_filters(logits, 1.0, 0, 0.8)) == 2
    # temperature 2: probs .455 .276 .167 .102 -> 3 tokens needed
    assert kept(apply_filters(logits, 2.0, 0, 0.8)) == 3


def test_sampled_frequencies_follow_the_filtered_distribution():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).repeat(20000, 1)
    gen = torch.Generator().manual_seed(0)
    tokens = sample_next(logits, temperature=2.0, top_p=0.8, generator=gen)
    counts = torch.bincount(tokens, minlength=4).double() / len(tokens)
    _, final = hand_filtered([2.0, 1.0, 0.0, -1.0], 2.0, 0, 0.8)
    assert counts[3] == 0
    np.testing.assert_allclose(counts.numpy(), final, atol=0.015)
    assert math.isclose(final.sum(), 1.0)


# ---------------------------------------------------------------- found by mutation testing

@pytest.mark.parametrize("kwargs, word", [
    (dict(top_p=1.5), "top_p"), (dict(top_p=0.0), "top_p"), (dict(top_k=-1), "top_k"),
    (dict(temperature=-0.5), "temperature")])
def test_out_of_range_settings_are_refused_by_name(kwargs, word):
    with pytest.raises(ValueError, match=word):
        apply_filters(torch.zeros(4), **kwargs)


def test_top_p_one_keeps_every_token_even_far_below_float_precision():
    # float32 cumsum reaches 1.0 before the tiny tail; p = 1 must still keep it
    logits = torch.tensor([0.0, -30.0, -30.0, -40.0])
    assert kept(apply_filters(logits, top_p=1.0)) == 4
    assert kept(apply_filters(logits)) == 4


def test_greedy_keeps_only_the_first_maximum_on_any_batch_shape():
    logits = torch.tensor([[[0.0, 5.0, 1.0, 5.0, 2.0], [3.0, 0.0, 3.0, 1.0, -1.0]],
                           [[1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 9.0]]])
    out = apply_filters(logits, temperature=0)
    assert torch.isfinite(out).nonzero()[:, -1].tolist() == [1, 0, 0, 4]
    assert sample_next(logits.reshape(4, 5), temperature=0).tolist() == [1, 0, 0, 4]


def test_temperature_one_samples_and_defaults_are_temperature_one():
    logits = torch.tensor([[1.0, 0.5, 0.0, -0.5]]).repeat(20000, 1)
    expected = torch.softmax(logits[0].double(), -1).numpy()
    default = sample_next(logits, generator=torch.Generator().manual_seed(1))
    explicit = sample_next(logits, 1.0, generator=torch.Generator().manual_seed(1))
    assert torch.equal(default, explicit)  # same seed, same draws: the default is t = 1
    counts = torch.bincount(default, minlength=4).double() / len(default)
    np.testing.assert_allclose(counts.numpy(), expected, atol=0.015)


def test_sampling_follows_the_generator():
    logits = torch.zeros(64, 50)
    a = sample_next(logits, generator=torch.Generator().manual_seed(7))
    b = sample_next(logits, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(0)
    c = sample_next(logits, generator=torch.Generator().manual_seed(8))
    torch.manual_seed(0)
    d = sample_next(logits, generator=torch.Generator().manual_seed(9))
    assert torch.equal(a, b) and not torch.equal(c, d)
    assert a.shape == (64,)


def test_next_token_view_by_hand():
    from tfstudio.train.sampling import next_token_view
    logits = torch.tensor([3.0, 2.0, 1.0, 0.5, 0.0, -1.0])
    names = "abcdef"
    view = next_token_view(logits, names.__getitem__, temperature=2.0, top_k=4, top_p=0.75,
                           n=5)
    z = logits.double().numpy()
    base = np.exp(z) / np.exp(z).sum()
    tempered = np.exp(z / 2) / np.exp(z / 2).sum()
    # top-4 after temperature: a b c d (.44 .27 .16 .13); top-p 0.75 of those -> a b c
    ids, final = hand_filtered(z.tolist(), 2.0, 4, 0.75)
    assert ids == [0, 1, 2]
    assert [c.token_id for c in view.candidates] == [0, 1, 2, 3, 4]
    assert [c.text for c in view.candidates] == list("abcde")
    assert [c.filtered_by for c in view.candidates] == ["", "", "", "top-p", "top-k"]
    np.testing.assert_allclose([c.prob for c in view.candidates], base[:5], rtol=1e-5)
    np.testing.assert_allclose([c.prob_tempered for c in view.candidates], tempered[:5],
                               rtol=1e-5)
    np.testing.assert_allclose([c.prob_final for c in view.candidates], final[:5], atol=1e-6)
    assert (view.temperature, view.top_k, view.top_p, view.kept) == (2.0, 4, 0.75, 3)
    p = final[ids]
    assert view.entropy == pytest.approx(float(-(p * np.log(p)).sum()), rel=1e-5)


def test_next_token_view_defaults_and_greedy():
    from tfstudio.train.sampling import next_token_view
    logits = torch.linspace(2.0, -2.0, 30)
    view = next_token_view(logits)  # temperature 1, no filter, 20 candidates, ids as text
    assert len(view.candidates) == 20 and view.kept == 30
    assert view.candidates[3].text == "3" and view.candidates[3].token_id == 3
    assert all(c.filtered_by == "" and c.prob == pytest.approx(c.prob_tempered)
               for c in view.candidates)
    probs = torch.softmax(logits.double(), -1).numpy()
    assert view.entropy == pytest.approx(float(-(probs * np.log(probs)).sum()), rel=1e-5)
    greedy = next_token_view(logits, temperature=0, n=3)
    assert [c.filtered_by for c in greedy.candidates] == ["", "greedy", "greedy"]
    assert [c.prob_final for c in greedy.candidates] == [1.0, 0.0, 0.0]
    assert greedy.entropy == 0.0 and greedy.kept == 1
    # temperature 0 and 1 show the model's own probabilities as the tempered ones
    assert greedy.candidates[1].prob_tempered == pytest.approx(float(probs[1]))


def test_top_p_keeps_the_likeliest_tokens_wherever_they_sit_in_the_vocabulary():
    """Probabilities 0.1, 0.6, 0.3 (ids 0, 1, 2) and p = 0.7: ids 1 and 2 reach it (0.9); id 0,
    the least likely, goes, though it comes first. Each row of a batch is its own case."""
    probs = torch.tensor([[0.1, 0.6, 0.3], [0.3, 0.1, 0.6], [0.6, 0.3, 0.1]])
    filtered = apply_filters(probs.log(), top_p=0.7)
    assert torch.isfinite(filtered).tolist() == [[False, True, True], [True, False, True],
                                                 [True, True, False]]


def test_top_k_keeps_each_rows_own_k_likeliest():
    logits = torch.tensor([[5.0, 1.0, 3.0, 4.0], [0.0, 9.0, 8.0, -1.0]])
    assert torch.isfinite(apply_filters(logits, top_k=2)).tolist() == [
        [True, False, False, True], [False, True, True, False]]
    assert torch.isfinite(apply_filters(logits, top_k=3)).tolist() == [
        [True, False, True, True], [True, True, True, False]]
