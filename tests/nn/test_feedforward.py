"""The mixture of experts' weighting: what each choice computes (a per-token loop is the
reference) and whether the language-model loss trains the router through it."""
import pytest
import torch
import torch.nn.functional as F

from tfstudio.compiler import compile_graph
from tfstudio.graph.templates import transformer_lm
from tfstudio.nn import MixtureOfExperts


def tiny_moe_lm(top_k: int, weighting: str | None):
    moe = {"experts": 4, "top_k": top_k, **({"weighting": weighting} if weighting else {})}
    graph = transformer_lm(name="m", description="", vocab=64, d_model=32, layers=1, heads=4,
                           d_ff=32, max_len=32, context=16, moe=moe)
    torch.manual_seed(0)
    return compile_graph(graph)


def router_gradient(model) -> float:
    """max |dL/dW_router| of the cross-entropy loss alone (no auxiliary loss)."""
    ids = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(1))
    logits = model(ids[:, :-1])
    F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)).backward()
    (moe,) = [m for m in model.modules() if isinstance(m, MixtureOfExperts)]
    return moe.router.weight.grad.abs().max().item()


@pytest.mark.parametrize("top_k,weighting", [(1, None), (1, "probability"), (2, None),
                                             (2, "probability"), (2, "renormalised")])
def test_the_loss_trains_the_router(top_k, weighting):
    assert router_gradient(tiny_moe_lm(top_k, weighting)) > 1e-4


def test_top_1_renormalised_weights_leave_the_router_untrained_by_the_loss():
    """p / p = 1: the loss's gradient reaches the router only as rounding error."""
    switch = router_gradient(tiny_moe_lm(1, "probability"))
    renormalised = router_gradient(tiny_moe_lm(1, "renormalised"))
    assert renormalised < 1e-5 * switch, (renormalised, switch)


def test_top_1_without_a_weighting_is_switch_and_top_2_is_mixtral():
    layer = lambda k: [m for m in tiny_moe_lm(k, None).modules()  # noqa: E731
                       if isinstance(m, MixtureOfExperts)][0]
    assert layer(1).weighting == "probability"
    assert layer(2).weighting == "renormalised"


@pytest.mark.parametrize("weighting", ["probability", "renormalised"])
def test_each_weighting_equals_a_per_token_loop(weighting):
    torch.manual_seed(0)
    moe = MixtureOfExperts(8, experts=4, top_k=2, d_ff=16, activation="gelu",
                           weighting=weighting)
    x = torch.randn(2, 5, 8)
    expected = torch.empty_like(x)
    for b in range(2):
        for t in range(5):
            p = torch.softmax(moe.router.weight @ x[b, t], 0)
            chosen = torch.topk(p, 2).indices
            w = p[chosen] / (p[chosen].sum() if weighting == "renormalised" else 1.0)
            expected[b, t] = sum(wi * moe.experts[int(e)](x[b, t].view(1, 1, 8)).view(8)
                                 for wi, e in zip(w, chosen))
    assert torch.allclose(moe(x), expected, atol=1e-5)


def test_an_unknown_weighting_is_refused_by_name():
    with pytest.raises(ValueError, match="weighting must be one of renormalised, probability"):
        MixtureOfExperts(8, experts=4, top_k=1, weighting="switch")
