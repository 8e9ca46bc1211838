"""The positions lesson at its own settings, trained once for both checks (its five schemes,
1337 as the seed): every positional scheme of tiny-gpt learns more than counting character
pairs, and the buckets past the training length show each scheme's part of the seed's claim
(the learned table has the training length's 64 rows, so it has no bucket past it)."""
from __future__ import annotations

import pytest

from tfstudio.graph.switches import POSITIONAL_SCHEMES

# both tests read one training: the group keeps them on one xdist worker
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("positions-lesson")]


@pytest.fixture(scope="module")
def positions(tmp_path_factory):
    """Every scheme (the lesson's four and none) trained at 64 tokens, evaluated to 256 once,
    at the end; the comparison's folder."""
    from tfstudio.experiments import runner
    from tfstudio.experiments.compare import plan_runs
    from tfstudio.experiments.lessons import prepare

    out = tmp_path_factory.mktemp("positions")
    lesson = prepare("positions", seeds=[1337])
    lesson.config.eval_every, lesson.config.eval_batches = lesson.config.steps, 2
    specs = plan_runs("tiny-gpt", lesson.base, [("positions", list(POSITIONAL_SCHEMES))],
                      lesson.seeds, lesson.config, lesson.eval_lengths, out, lesson="positions")
    assert runner.train_in_process(specs) == []
    return out


def test_every_positions_variant_of_tiny_gpt_beats_the_bigram_counter(positions):
    from tfstudio.experiments.results import collect

    c = collect(positions, with_inference=False)
    bigram = c.baselines["bigram"]
    losses = {v.name: v.val_loss for v in c.variants}
    assert len(losses) == len(POSITIONAL_SCHEMES)
    assert all(loss < bigram for loss in losses.values()), (losses, bigram)


def test_positions_lesson_shows_the_seeds_claims(positions):
    from tfstudio.cli.compare import write_report
    from tfstudio.experiments.lessons import LESSONS
    from tfstudio.experiments.results import collect

    c = collect(positions, with_inference=False)
    b = {v.name.split("=", 1)[1]: v.mean_lengths().buckets for v in c.variants}
    page = write_report(positions).read_text()  # the lesson's page: its title and verdict
    lesson = LESSONS["positions"]
    assert lesson.title in page
    assert f"Verdict: {lesson.verdict(c).word}" in page
    assert b["alibi"][3] <= 1.15 * b["alibi"][0]            # ALiBi holds to 4x the length
    # the learned table has max_len = 64 rows, the training length: nothing past it runs
    assert b["learned"][0] is not None and b["learned"][1:] == [None, None, None]
    assert any(f.claim == "Learned positions fail past max_len" for f in lesson.verdict(c).facts)
    rope = b["rope"]
    assert rope[0] < rope[1] < rope[2] < rope[3]             # RoPE: worse step by step
