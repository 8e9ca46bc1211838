"""The logit lens (nostalgebraist 2020): what the model would predict if it stopped early.

The residual stream is read after the embedding and after every layer (every copy of the group
that feeds the output), and each reading is sent through the model's own read-out, the final
norm(s) and the head, exactly the modules that turn the last layer's stream into logits. The
result is a table of layers x positions with the top tokens and their probabilities; its last
row is the model's real output.

A model without layer groups (a recurrent LM) is read after each top-level block instead.
Every stream is read at the model's hook points (:mod:`tfstudio.nn.hooks`), as the walk reads
them: the tensor the forward computed, not a recomputation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at


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


def residual_stream(model, inputs) -> tuple[list[tuple[str, object]], list]:
    """([(label, stream [1, T, d] tensor)], read-out modules) for ``inputs``: the stream where
    it enters the layers and after every layer, and the modules (final norms, head) that turn
    the last of them into the logits. Read at the model's hook points
    (:mod:`tfstudio.nn.hooks`): each layer copy's "in" and "out", each top-level block's
    "out", in the order the forward computed them."""
    from .. import nn as blocks

    top = {k: m for k, m in model.blocks() if len(k) == 1 or
           (len(k) == 2 and isinstance(m, blocks.GraphLayer))}
    keys = {id(m): k for k, m in top.items()}
    owner_of = {name: keys[id(m)] for name, m in model.named_modules() if id(m) in keys}
    # only the points at the stream's joints: the blocks inside keep their fused code
    wanted = {f"{name}.hook_{p}" for name in owner_of for p in ("in", "out", "logits")}
    fired: list[tuple[tuple, str, object]] = []   # (top-level key, point, tensor) in order

    def record(name, _point, tensor):
        owner, _, point = name.rpartition(".")
        fired.append((owner_of[owner], point, tensor))

    with looking_at(model), blocks.attached(model, record, names=wanted):
        model(*inputs.args)
    order = list(dict.fromkeys(key for key, _, _ in fired))   # top-level blocks, as computed
    heads = [i for i, k in enumerate(order) if isinstance(top[k], blocks.LMHead)]
    if not heads:
        raise ValueError("the model has no output head to read the stream through")
    start = end = heads[-1]
    # the read-out: the norms the stream passes on its way into the head (a dropout between
    # them, which has no points, does nothing in eval mode)
    while start > 0 and isinstance(top[order[start - 1]], blocks.Norm):
        start -= 1
    readout = [top[k] for k in order[start:end + 1]]
    before = order[:start]
    outs = {key: tensor for key, point, tensor in fired if point == "hook_out"}
    rows: list[tuple[str, object]] = []
    if before and len(before[-1]) == 2:              # the layers of a group
        group = before[-1][0]
        copies = [k for k in before if len(k) == 2 and k[0] == group]
        entering = next(t for k, p, t in fired if k == copies[0] and p == "hook_in")
        earlier = [k for k in order[:order.index(copies[0])] if k in outs]
        if earlier and entering.is_floating_point():  # (a first group reads the ids)
            rows.append((key_name(earlier[-1]), entering))
        rows += [(key_name(k), outs[k]) for k in copies]
    else:                                             # no group: each block after the embedding
        embeds = [i for i, k in enumerate(before) if isinstance(top[k], blocks.TokenEmbedding)]
        rows += [(key_name(k), outs[k]) for k in before[embeds[-1] if embeds else 0:]
                 if k in outs]
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
