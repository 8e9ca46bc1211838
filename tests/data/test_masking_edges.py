"""Masked-LM masking at its edges: the rate is the one asked for, the random replacements
cover the whole ordinary range (0 included), a seeded generator masks the same way whatever the
global seed, and a rate outside (0, 1) is refused by name."""
import pytest
import torch

from tfstudio.data import DataError, build_tokenizer, mask_tokens, mlm_batch


@pytest.mark.parametrize("rate", [0.0, 1.0, 1.5, -0.1])
def test_rate_outside_zero_one_is_refused_by_name(rate):
    with pytest.raises(DataError, match="mask_prob"):
        mask_tokens(torch.zeros(2, 4, dtype=torch.long), mask_id=9, random_high=5,
                    generator=torch.Generator().manual_seed(0), mask_prob=rate)


def test_random_replacements_cover_zero_to_random_high():
    ids = torch.full((200, 200), 7)   # 7 is outside [0, 3): any other ordinary id is a swap
    inputs, labels = mask_tokens(ids, mask_id=9, random_high=3, mask_prob=0.9,
                                 generator=torch.Generator().manual_seed(0))
    swapped = inputs[(labels != -100) & (inputs != 9) & (inputs != 7)]
    counts = torch.bincount(swapped, minlength=3).double() / len(swapped)
    assert len(swapped) > 3000   # ~ 40000 * 0.9 * 0.1
    torch.testing.assert_close(counts, torch.full((3,), 1 / 3, dtype=torch.double),
                               atol=0.03, rtol=0)


def test_mlm_batch_passes_the_rate_and_the_generator():
    tok = build_tokenizer("byte")
    ids = torch.randint(0, 256, (64, 128), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    a = mlm_batch(ids, tok, torch.Generator().manual_seed(5), mask_prob=0.5)
    torch.manual_seed(1)  # a different global seed must not matter
    b = mlm_batch(ids, tok, torch.Generator().manual_seed(5), mask_prob=0.5)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert (a[1] != -100).double().mean().item() == pytest.approx(0.5, abs=0.02)
