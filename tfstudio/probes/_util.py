"""Helpers every probe shares: run a model for a look, leaving it exactly as it was."""
from __future__ import annotations

import contextlib


def key_name(key: tuple) -> str:
    """("layers", 0, "attn") -> "layers.0.attn" (node ids never contain a dot)."""
    return ".".join(str(k) for k in key)


@contextlib.contextmanager
def looking_at(model):
    """Eval mode (no dropout) and no autograd for the duration. Train mode and the
    mixture-of-experts statistics of the last forward (the trainer's curves read them after a
    step) are put back afterwards, so a probe taken mid-training changes nothing about the
    run."""
    import torch

    was_training = model.training
    routers = [m for _, m in model.blocks() if hasattr(m, "last_expert_load")]
    router_stats = [(m.aux_loss, m.last_expert_load) for m in routers]
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        for m, (aux, load) in zip(routers, router_stats):
            m.aux_loss, m.last_expert_load = aux, load
        model.train(was_training)
