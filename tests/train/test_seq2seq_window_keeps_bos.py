"""An encoder-decoder generating past its window reads its BOS first at every step: the
target it is fed is [BOS] + the newest tokens, never a window that has slid the BOS away, and
never wider than the window."""
import pytest
import torch

import tfstudio
from tfstudio.train.generation import generate_ids

BOS, WINDOW = 7, 8


class TargetRecorder:
    """Wraps a model's forward to record the target ids of each call."""

    def __init__(self, model):
        self.model, self.targets, self.forward = model, [], model.forward
        model.forward = self

    def __call__(self, source, target, *args, **kwargs):
        self.targets.append(target[0].tolist())
        return self.forward(source, target, *args, **kwargs)


@pytest.mark.parametrize("use_cache", [False, True])
def test_every_slid_window_starts_with_the_bos(use_cache):
    torch.manual_seed(0)
    model = tfstudio.compile_graph(tfstudio.load_graph("tiny-t5"))
    rec = TargetRecorder(model)
    new = list(generate_ids(model, [BOS], source_ids=[3, 4, 5], max_new_tokens=20, seed=1,
                            window=WINDOW, use_cache=use_cache))
    sequence = [BOS] + new
    full_reads = [t for t in rec.targets if len(t) > 1]   # the cache's one-token steps aside
    slid = [t for t in full_reads if t != sequence[:len(t)]]
    assert slid, "20 new tokens in a window of 8 should slide it"
    for target in rec.targets:
        assert len(target) <= WINDOW
    for target in slid:
        assert target[0] == BOS
        # the rest is a contiguous stretch of the newest tokens at that step
        body = target[1:]
        ends = [i for i in range(len(sequence)) if sequence[i - len(body) + 1:i + 1] == body]
        assert ends, (target, sequence)
