"""The logit lens (nostalgebraist 2020): what the model would predict if it stopped early.

The residual stream is read after the embedding and after every layer (every copy of the group
that feeds the output), and each reading is sent through the model's own read-out, the final
norm(s) and the head, exactly the modules that turn the last layer's stream into logits. The
result is a table of layers x positions with the top tokens and their probabilities; its last
row is the model's real output.

A model without layer groups (a recurrent LM) is read after each top-level block instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at
from .walk import CallRecorder


@dataclass
class LogitLens:
    layers: list[str]        # row labels: "pos" (the stream entering the layers), "layers.0", ...
    tokens: list[str]        # column labels: the stream's tokens
    top_ids: np.ndarray      # [layers, positions, k] int64, likeliest first
    top_probs: np.ndarray    # [layers, positions, k] float32
    top_tokens: list         # [layers][positions][k] display strings
    logits: np.ndarray | None = None  # [layers, positions, vocab] float32 when asked for

    def to_dict(self) -> dict:
        return {"layers": self.layers, "tokens": self.tokens,
                "top_ids": self.top_ids.tolist(), "top_probs": self.top_probs.tolist(),
                "top_tokens": self.top_tokens}


def _top_level(call) -> bool:
    from ..nn import GraphLayer

    return len(call.key) == 1 or (len(call.key) == 2 and isinstance(call.module, GraphLayer))


def _output(call):
    return call.output[0] if isinstance(call.output, (tuple, list)) else call.output


def residual_stream(model, inputs) -> tuple[list[tuple[str, object]], list]:
    """([(label, stream [1, T, d] tensor)], read-out modules) for ``inputs``: the stream where
    it enters the layers and after every layer, and the modules (final norms, head) that turn
    the last of them into the logits."""
    from .. import nn as blocks

    with looking_at(model), CallRecorder(model, include_groups=True) as recorder:
        model(*inputs.args)
    calls = [c for c in recorder.calls if _top_level(c)]
    heads = [i for i, c in enumerate(calls) if isinstance(c.module, blocks.LMHead)]
    if not heads:
        raise ValueError("the model has no output head to read the stream through")
    end = heads[-1]
    start = end
    # the read-out: the norms (and dropouts) the stream passes on its way into the head
    while start > 0 and isinstance(calls[start - 1].module, (blocks.Norm, blocks.Dropout)):
        start -= 1
    readout = [c.module for c in calls[start:end + 1]]
    before = calls[:start]
    rows: list[tuple[str, object]] = []
    if before and len(before[-1].key) == 2:           # the layers of a group
        group = before[-1].key[0]
        copies = [i for i, c in enumerate(before) if len(c.key) == 2 and c.key[0] == group]
        if copies[0] > 0:  # the stream entering the layers (a first group reads the ids)
            rows.append((key_name(before[copies[0] - 1].key), before[copies[0]].args[0]))
        rows += [(key_name(before[i].key), _output(before[i])) for i in copies]
    else:                                             # no group: each block after the embedding
        embeds = [i for i, c in enumerate(before) if isinstance(c.module, blocks.TokenEmbedding)]
        for c in before[embeds[-1] if embeds else 0:]:
            rows.append((key_name(c.key), _output(c)))
    return rows, readout


def logit_lens(model, inputs, tokenizer=None, k: int = 5, keep_logits: bool = False
               ) -> LogitLens:
    """The lens table on ``inputs`` (a :class:`~tfstudio.probes.ProbeInputs`); ``tokenizer``
    names the tokens (ids are shown without one)."""
    import torch

    rows, readout = residual_stream(model, inputs)
    all_logits = []
    with looking_at(model):
        for _, stream in rows:
            x = stream
            for module in readout:
                x = module(x)
            all_logits.append(x[0].float())
    logits = torch.stack(all_logits)                                  # [L, T, V]
    probs = torch.softmax(logits, dim=-1)
    top_p, top_i = probs.topk(min(k, probs.shape[-1]), dim=-1)
    name = (lambda ids: tokenizer.token_strings(ids)) if tokenizer is not None else \
        (lambda ids: [str(i) for i in ids])
    top_tokens = [[name(pos.tolist()) for pos in layer] for layer in top_i]
    ids = inputs.ids[inputs.stream_role]
    return LogitLens([label for label, _ in rows], name(list(ids)),
                     top_i.cpu().numpy().astype(np.int64), top_p.cpu().numpy(), top_tokens,
                     logits.cpu().numpy() if keep_logits else None)
