"""Direct tests for behaviour of tfstudio/data that mutation testing (bench/mutation.py) found
unpinned: each asserts the documented result against numbers worked out in the test."""
import numpy as np
import pytest

from tfstudio.data import DataError, WindowSampler, eval_windows


# ---------------------------------------------------------------- windows.py

def _starts(tokens, context, batch_size, *args):
    """Window starts of eval_windows: with tokens = arange, a window's first input is its start."""
    batches = list(eval_windows(tokens, context, batch_size, *args))
    return [int(s) for x, _ in batches for s in x[:, 0]], [len(x) for x, _ in batches]


def test_eval_windows_default_is_eight_batches():
    starts, sizes = _starts(np.arange(10_000), 4, 2)
    assert sizes == [2] * 8


@pytest.mark.parametrize("n_tokens, context, expected", [
    (21, 4, [0, 4, 8, 12, 16]),        # last start 16: 16 // 4 + 1 = 5 windows, 4 apart
    (22, 4, [0, 4, 8, 12, 17]),        # last start 17: still 5 (17 // 4 + 1), spread to the end
    (6, 1, [0, 1, 2, 3, 4]),           # context 1: every start 0..4
    (5, 4, [0]),                       # exactly one window fits
])
def test_eval_windows_spread_one_context_apart_at_most(n_tokens, context, expected):
    starts, _ = _starts(np.arange(n_tokens), context, 100, 100)
    assert starts == expected


def test_eval_windows_too_short_names_the_validation_split():
    with pytest.raises(DataError, match=r"^the validation split has 4 tokens, fewer than "
                                        r"context \+ 1 = 5; use a shorter context"):
        list(eval_windows(np.arange(4), 4, 1))


def test_sampler_resume_mismatch_names_both_values():
    saved = WindowSampler(np.arange(100), context=8, batch_size=2).state_dict()
    other = WindowSampler(np.arange(100), context=4, batch_size=2)
    with pytest.raises(DataError, match="saved with context=8 but this one has context=4"):
        other.load_state_dict(saved)


def test_iterating_a_sampler_gives_its_next_batches():
    tokens = np.arange(50)
    it = iter(WindowSampler(tokens, context=4, batch_size=3, seed=7))
    twin = WindowSampler(tokens, context=4, batch_size=3, seed=7)
    for _ in range(3):
        (x, y), (x2, y2) = next(it), twin.next_batch()
        assert x.tolist() == x2.tolist() and y.tolist() == y2.tolist()
