"""Roles: which token stream a block reads, and what each attention head does.

Streams: "tokens", or "source" / "target" in an encoder-decoder.

An attention heatmap labels its rows with the tokens of the stream its queries come from and
its columns with those of its keys (cross-attention reads the encoder's "source" tokens). The
answer follows the wires back to a Token input node: through a block's first input, out of a
group through its inputs node, into a group through its outputs node (pure graph code).

Heads (:func:`head_scores`): on a random sequence r followed by its repeat r r, two scores per
head, each the mean attention weight on one key per query (so 1 means the head always looks
there, 0 never):

- ``previous_token``: query i on key i - 1 (every position but the first);
- ``induction``: query i in the repeat on key i - n + 1, the token that followed the previous
  occurrence of token i (n = len(r)): the prefix-matching half of an induction head
  (Olsson et al. 2022).
"""
from __future__ import annotations

import numpy as np

from ..graph import Graph
from ..graph import block_types as bt
from ..graph.model import GROUP_INPUT, GROUP_OUTPUT, graph_at

TOKEN_INPUT = bt.TOKEN_INPUT
_MAX_HOPS = 10_000  # a valid graph is acyclic; this only guards against a malformed one


def split_key(key: tuple) -> tuple[tuple[str, ...], str]:
    """A block key such as ("layers", 0, "attn") -> (group path ("layers",), node id "attn")."""
    return tuple(str(k) for k in key[:-1:2]), str(key[-1])


def traced_role(root: Graph, path: tuple[str, ...], node_id: str, port: str) -> str | None:
    """The role of the Token input feeding ``port`` of ``node_id`` at group ``path``."""
    path = tuple(path)
    for _ in range(_MAX_HOPS):
        graph = graph_at(root, path)
        edge = graph.edge_into(node_id, port)
        if edge is None:
            return None
        src = graph.node(edge.src)
        if src.type == TOKEN_INPUT:
            return str(src.param("role"))
        if src.type == GROUP_INPUT:  # leave the group: continue from the group node's own input
            if not path:
                return None
            path, node_id, port = path[:-1], path[-1], edge.src_port
        elif src.is_group:           # enter the group at the output this wire leaves from
            inner = src.subgraph
            outs = inner.nodes_of_type(GROUP_OUTPUT) if inner is not None else []
            if not outs:
                return None
            path, node_id, port = path + (src.id,), outs[0].id, edge.src_port
        else:                        # an ordinary block passes its first input's stream on
            inputs = graph.input_ports(src.id)
            if not inputs:
                return None
            node_id, port = src.id, inputs[0].name
    return None


def stream_roles(root: Graph, key: tuple, cross: bool, default: str) -> tuple[str, str]:
    """(query role, key role) of the attention block at ``key``; ``default`` when untraceable."""
    path, node_id = split_key(key)
    try:
        query = traced_role(root, path, node_id, "x") or default
        keys = (traced_role(root, path, node_id, "memory") or "source") if cross else query
    except (KeyError, ValueError):  # GraphError is a ValueError: a path the graph lacks
        return default, default
    return query, keys


# ------------------------------------------------------------------------------ head roles
def repeated_sequence(pool: list[int], length: int, seed: int = 0) -> list[int]:
    """``length`` tokens drawn from ``pool`` (without repeats while the pool allows, so every
    token of the first half has exactly one earlier occurrence in the second), then again."""
    rng = np.random.default_rng(seed)
    pool = list(dict.fromkeys(int(t) for t in pool))
    if not pool:
        raise ValueError("the token pool for the head scores is empty")
    if length < 2:
        raise ValueError(f"the repeated sequence needs at least 2 tokens per half; got {length}")
    half = rng.choice(len(pool), size=length, replace=len(pool) < length)
    first = [pool[i] for i in half]
    return first + first


def scores_from_weights(weights: np.ndarray, half: int, start: int = 0
                        ) -> dict[str, np.ndarray]:
    """Both scores of every head from attention ``weights`` [heads, T, T] on a sequence of
    ``start`` prefix tokens, then ``half`` tokens, then those ``half`` tokens again."""
    T = weights.shape[-1]
    rows = np.arange(start + 1, T)
    previous = weights[:, rows, rows - 1].mean(axis=1)
    rows = np.arange(start + half, T)
    induction = weights[:, rows, rows - half + 1].mean(axis=1)
    return {"previous_token": previous.astype(np.float64),
            "induction": induction.astype(np.float64)}


def head_scores(model, pool: list[int], length: int = 20, seed: int = 0,
                prefix: list[int] = ()) -> dict[str, dict[str, np.ndarray]]:
    """{"layers.0.attn": {"previous_token": [H], "induction": [H]}} for every self-attention
    block reading the decoded stream, on ``prefix`` (a BOS token, say) and a repeated random
    sequence of 2 x ``length`` tokens drawn from ``pool`` (token ids the model knows, such as
    the letters it was trained on). An encoder-decoder reads the sequence as source and
    target; cross-attention and models without attention give no entries."""
    import torch

    from .attention import attention_maps
    from .inputs import ProbeInputs

    ids = [int(t) for t in prefix] + repeated_sequence(pool, length, seed)
    device = next(model.parameters()).device
    row = torch.tensor([ids], dtype=torch.long, device=device)
    roles = list(model.input_roles)
    args = (row, row) if len(roles) == 2 else (row,)
    inputs = ProbeInputs(args, {r: ids for r in roles}, {r: [] for r in roles}, roles[-1])
    out = {}
    for name, amap in attention_maps(model, inputs).items():
        if amap.cross or amap.weights.shape[-1] != len(ids):
            continue
        out[name] = scores_from_weights(amap.weights, length, len(prefix))
    return out
