"""RMSNorm and LayerNorm use their own eps, by the formula: x / sqrt(mean(x^2) + eps) * w and
(x - mean) / sqrt(var + eps) * w + b. Inputs are small, so eps changes the output visibly;
also through a compiled graph, whose norm parameter must reach the module."""
import pytest
import torch

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.graph import Document, SetParam
from tfstudio.nn.norm import Norm


def rms_by_hand(x, weight, eps):
    x = x.double()
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * weight.double()


def layer_by_hand(x, weight, bias, eps):
    x = x.double()
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight.double() + bias.double()


@pytest.mark.parametrize("eps", [1e-6, 1e-2, 0.5])
def test_rmsnorm_uses_its_eps(eps):
    torch.manual_seed(0)
    norm = Norm(8, "rmsnorm", eps=eps)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
    x = torch.randn(3, 5, 8) * 0.05   # mean(x^2) ~ 2.5e-3: eps of 1e-2 or 0.5 dominates
    torch.testing.assert_close(norm(x).double(), rms_by_hand(x, norm.weight, eps),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("eps", [1e-5, 0.3])
def test_layernorm_uses_its_eps(eps):
    torch.manual_seed(1)
    norm = Norm(8, "layernorm", eps=eps)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
        norm.bias.uniform_(-1, 1)
    x = torch.randn(2, 4, 8) * 0.05
    torch.testing.assert_close(norm(x).double(),
                               layer_by_hand(x, norm.weight, norm.bias, eps),
                               rtol=1e-5, atol=1e-6)


def test_graph_eps_reaches_the_compiled_rmsnorm():
    doc = Document(tfstudio.load_graph("tiny-llama"))
    doc.execute(SetParam((), "final_norm", "eps", 0.25))
    model = compile_graph(doc.root)
    final = dict(model.blocks())[("final_norm",)]
    x = torch.randn(2, 3, 64) * 0.05
    torch.testing.assert_close(final(x).double(), rms_by_hand(x, final.weight, 0.25),
                               rtol=1e-5, atol=1e-6)
