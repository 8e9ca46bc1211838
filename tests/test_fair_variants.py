"""A switch gives a variant that stands on its own: every positional scheme of tiny-gpt learns
more than counting character pairs, and sinusoidal positions scale the token embeddings as the
tiny-transformer preset does."""
from __future__ import annotations

import pytest

from tfstudio import load_graph
from tfstudio.graph.switches import POSITIONAL_SCHEMES, set_positional_scheme


def embeddings(graph):
    return [n for _, n in graph.walk() if n.type == "token_embedding"]


def test_sinusoidal_scales_the_token_embeddings_and_the_others_keep_them():
    base = load_graph("tiny-gpt")
    assert not any(e.params.get("scale") for e in embeddings(base))
    assert all(e.params["scale"] for e in embeddings(set_positional_scheme(base, "sinusoidal")))
    for scheme in ("learned", "rope", "alibi", "none"):
        assert not any(e.params.get("scale") for e in
                       embeddings(set_positional_scheme(base, scheme)))
    preset = load_graph("tiny-transformer")  # scaled already: a switch keeps it so
    assert all(e.params["scale"] for e in embeddings(set_positional_scheme(preset, "rope")))


@pytest.mark.slow
def test_every_positions_variant_of_tiny_gpt_beats_the_bigram_counter(tmp_path):
    """The lesson's own training (char tokens of sample, 400 steps of 16 x 64, lr 3e-3)."""
    from tfstudio.experiments import runner
    from tfstudio.experiments.compare import plan_runs
    from tfstudio.experiments.lessons import prepare
    from tfstudio.experiments.results import collect

    lesson = prepare("positions", seeds=[1])
    lesson.config.eval_every = lesson.config.steps  # one evaluation, at the end
    varies = [("positions", list(POSITIONAL_SCHEMES))]
    specs = plan_runs("tiny-gpt", lesson.base, varies, [1], lesson.config, [], tmp_path)
    assert runner.train_in_process(specs) == []
    c = collect(tmp_path, with_inference=False)
    bigram = c.baselines["bigram"]
    losses = {v.name: v.val_loss for v in c.variants}
    assert len(losses) == len(POSITIONAL_SCHEMES)
    assert all(loss < bigram for loss in losses.values()), (losses, bigram)
