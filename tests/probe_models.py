"""Models for the probe tests: a preset fitted to a tokenizer, with biases off zero and norms off
one so that every term of a block's formula is exercised."""
import torch

from tfstudio.compiler import compile_graph
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

TEXT = "abcab cabca>bcabc"


def model_of(preset: str, tokenizer, seed: int = 0):
    torch.manual_seed(seed)
    model = compile_graph(fit_graph_to_tokenizer(load_preset(preset), tokenizer))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model.eval()
