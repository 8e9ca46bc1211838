"""Sampling filters at their edges: top-p at an exact float boundary, and temperature applied
before top-k/top-p (so it changes which tokens survive, not only their odds).

Uniform logits give exactly representable probabilities (1/4, 1/8), so "adds up to at least p"
can be tested where the cumulative sum equals p exactly. The temperature case is computed by
hand in float64."""
import math

import numpy as np
import pytest
import torch

from tfstudio.train.sampling import apply_filters, sample_next


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
