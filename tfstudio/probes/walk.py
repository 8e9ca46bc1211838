"""The forward pass step by step: every intermediate tensor of one text, in the order the model
computes it, each with a name, a one-line formula and its values (plain numpy).

Nothing here recomputes the model. Every block of ``tfstudio.nn`` exposes hook points
(:mod:`tfstudio.nn.hooks`) at the tensors it computes (q, k, v, scores, mask, softmax, ...),
each with its label and formula; the walk attaches a recorder to all of them, runs the model
once, and turns each recording into a step. Attention tensors are shown for one head (in every
layer, or in the layer asked for); a mixture of experts shows the expert the picked token went to
first, on the tokens routed to it (the other rows are NaN). A block without hook points (one
registered from outside tfstudio) shows its output, read with a forward hook; each layer of a
group shows the residual stream it hands on (the layer copy's "out" hook point). The walk ends with the probabilities at the picked
position before and after temperature, top-k and top-p, as the sampler computes them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util import key_name, looking_at


TOP_SHOWN = 15   # tokens a distribution's picture names, largest first (the rest summed)


@dataclass
class Step:
    """One intermediate tensor of the forward pass (batch row 0)."""

    name: str            # "layers.0.attn: scores"
    formula: str         # one line, e.g. "S = q k^T / sqrt(d_head)"
    value: np.ndarray
    block: str = ""      # the block it belongs to ("layers.0.attn"), "" for the sampling steps
    kind: str = ""       # what the block is ("attention", "feed_forward", ...)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)

    def to_dict(self, values: bool = True) -> dict:
        out = {"name": self.name, "formula": self.formula, "shape": list(self.shape),
               "block": self.block, "kind": self.kind}
        if values:
            out["values"] = json_values(self.value)
        return out

    def over_vocabulary(self) -> bool:
        return self.kind == "sampling" or self.name.endswith(": logits")

    def summary(self, position: int, length: int, top: int = TOP_SHOWN) -> dict:
        """What the step's small picture draws, instead of the whole tensor.

        ``picked``: the row of the picked ``position`` when the tensor has a row per position
        of the ``length``-token stream (the vector itself when it is one vector);
        ``per_position``: one number per row (its L2 norm; a [T] vector's own values);
        for logits and probabilities over the vocabulary, also ``top_ids`` and
        ``top_values`` (the ``top`` largest at the picked position, largest first) and
        ``others`` (the probability of every other token, summed; 0 for logits)."""
        value = np.asarray(self.value)
        per_row = value.ndim >= 1 and value.shape[0] == length and self.kind != "sampling"
        out = {"name": self.name, "formula": self.formula, "shape": list(self.shape),
               "block": self.block, "kind": self.kind}
        if value.ndim == 1 and not per_row or value.ndim == 0:
            out["picked"] = value.reshape(-1)
        elif per_row:
            out["picked"] = value[position].reshape(-1)
        if per_row and value.ndim == 1:
            out["per_position"] = value.astype(np.float64)
        elif value.ndim >= 2 and value.dtype != bool:
            rows = np.where(np.isfinite(value), value, 0.0).reshape(value.shape[0], -1)
            out["per_position"] = np.sqrt((rows.astype(np.float64) ** 2).sum(-1))
        if self.over_vocabulary() and "picked" in out:   # the top, not the whole vocabulary
            row = out.pop("picked").astype(np.float64)
            order = np.argsort(-row, kind="stable")[:top]
            out["top_ids"], out["top_values"] = order.astype(np.int64), row[order]
            rest = np.delete(row, order)
            out["others"] = float(rest.sum()) if self.kind == "sampling" else 0.0
        return out


@dataclass
class Walk:
    steps: list[Step]
    tokens: dict[str, list[str]]     # per role, as ProbeInputs gives them
    ids: dict[str, list[int]]
    stream_role: str                 # the role whose positions the logits belong to
    position: int                    # the position whose next token the sampling steps show
    head: int
    logits: np.ndarray               # [T, V] the model's own output (batch row 0)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"no step named {name!r}")

    def to_dict(self, values: bool = True) -> dict:
        return {"tokens": self.tokens, "ids": self.ids, "stream_role": self.stream_role,
                "position": self.position, "head": self.head,
                "steps": [s.to_dict(values) for s in self.steps]}

    def summaries(self) -> list[dict]:
        """Every step's :meth:`Step.summary` at the picked position, in order."""
        length = len(self.ids[self.stream_role])
        return [s.summary(self.position, length) for s in self.steps]


def json_values(value: np.ndarray):
    """Nested lists for JSON; non-finite numbers (masked scores) become None (null)."""
    array = np.asarray(value)
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        obj = array.astype(object)
        obj[~np.isfinite(array)] = None
        return obj.tolist()
    return array.tolist()


# ---------------------------------------------------------------------------- recording
@dataclass
class Call:
    """One block's forward as it ran: its key, module, positional inputs and output."""

    key: tuple
    module: object
    args: tuple
    output: object


class CallRecorder:
    """Forward hooks on every leaf block (not the group copies) noting each call in order::

        with CallRecorder(model) as rec:
            model(ids)
        rec.calls  # [Call(("embed",), ...), Call(("pos",), ...), ...]
    """

    def __init__(self, model, include_groups: bool = False, calls: list | None = None):
        from ..nn import GraphLayer

        self.calls: list = [] if calls is None else calls
        self._handles = []
        self._targets = [(k, m) for k, m in model.blocks()
                         if include_groups or not isinstance(m, GraphLayer)]

    def __enter__(self) -> CallRecorder:
        for key, module in self._targets:
            self._handles.append(module.register_forward_hook(self._hook(key)))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _hook(self, key: tuple):
        def record(module, args, output):
            self.calls.append(Call(key, module, tuple(args), output))
        return record


# ---------------------------------------------------------------------------- the walk
def forward_walk(model, inputs, *, position: int = -1, head: int = 0,
                 layer: int | None = None, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 1.0) -> Walk:
    """Every step of ``model`` on ``inputs`` (a :class:`~tfstudio.probes.ProbeInputs`).

    ``head`` is the head whose attention is opened up (in every attention block, or only in
    layer ``layer``: the copy index of the block's outermost group); ``position`` (negative
    counts from the end) is where the probabilities are shown."""
    from ..nn import attached

    blocks = model.blocks()
    for key, module in blocks:
        heads = getattr(module, "heads", None)
        if heads is not None and not 0 <= head < heads:
            raise ValueError(f"head {head} does not exist in {key_name(key)} (it has {heads} "
                             f"heads: 0..{heads - 1})")
    owner: dict[int, tuple[tuple, str]] = {}
    events: list = []   # (key, point name in its block, point, tensor) and Call, in order

    def record(_name, point, tensor):
        key, sub = owner[id(point)]
        events.append((key, sub, point, tensor.detach()))

    # block calls land in the same list, each after its points
    with looking_at(model), attached(model, record), CallRecorder(model, calls=events):
        owner.update(_point_owners(blocks))
        logits = model(*inputs.args)
        reader = _Reader(model, owner, head, layer)
    length = logits.shape[1]
    if not -length <= position < length:
        raise ValueError(f"position {position} is outside the text's {length} tokens "
                         f"(0..{length - 1}, or negative from the end)")
    position %= length
    reader.position = position
    steps: list[Step] = []
    for event in events:
        if isinstance(event, Call):
            if event.key not in reader.hooked_blocks:
                steps += _plain_output(event)
        else:
            steps += reader.step(*event)
    final = logits[0].float().cpu().numpy().copy()
    steps += sampling_steps(final[position], position, temperature, top_k, top_p)
    return Walk(steps, inputs.tokens, inputs.ids, inputs.stream_role, position, head, final)


def _point_owners(blocks) -> dict[int, tuple[tuple, str]]:
    """id(hook point) -> (the key of the block holding it, its name inside that block)."""
    from ..nn import GraphLayer, HookPoint

    owners = {}
    for key, module in blocks:
        # a layer copy owns only its own points ("in", "out"), not those of its blocks
        children = (module.named_children() if isinstance(module, GraphLayer)
                    else module.named_modules())
        for sub, m in children:
            if isinstance(m, HookPoint):
                owners[id(m)] = (key, sub)
    return owners


def _np(tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy().copy()


def _layer_of(key: tuple) -> int | None:
    return next((k for k in key if isinstance(k, int)), None)


def _first(value):
    return value[0] if isinstance(value, (tuple, list)) else value


class _Reader:
    """Turns one hook point's recording into its step (or none)."""

    def __init__(self, model, owners: dict, head: int, layer: int | None):
        from ..nn import GraphLayer

        self.head, self.layer, self.position = head, layer, 0
        self.modules = dict(model.blocks())
        self.layers = {k for k, m in self.modules.items() if isinstance(m, GraphLayer)}
        self.hooked_blocks = {key for key, _ in owners.values()}
        self.kinds = _block_kinds(model)
        self.choices: dict[tuple, np.ndarray] = {}   # a mixture's chosen experts [T, k]

    def step(self, key: tuple, sub: str, point, tensor) -> list[Step]:
        name, block = key_name(key), self.modules[key]
        if key in self.layers:   # the stream a layer hands on (what it took in
            return [] if sub == "hook_in" else [  # is the step before it already)
                Step(f"{name}: {point.label}", point.formula, _np(tensor[0]), name, "layer")]
        kind = self.kinds.get(key, type(block).__name__)
        if sub.startswith(("experts.", "shared.")):
            return self._expert_step(key, sub, point, tensor)
        value = tensor[0]
        heads = getattr(block, "heads", None)
        if heads is not None and sub != "hook_out" and not self._detail(key):
            return []   # only the chosen layer's attention is opened up
        label, formula = point.label, point.formula
        if point.per:
            kv = self.head // (heads // block.kv_heads)
            value = value[self.head if point.per == "head" else kv]
            label = f"head {self.head}: {label}"
            formula = (point.formulas[self.head] if point.formulas
                       else formula.format(kv_head=kv))
        elif heads is not None and sub == "hook_mask":
            label = f"head {self.head}: {label}"
        if sub == "hook_choices":
            self.choices[key] = _np(value).astype(np.int64)
        out = _np(value) if tensor.is_floating_point() else value.cpu().numpy().copy()
        return [Step(f"{name}: {label}", formula, out, name, kind)]

    def _detail(self, key: tuple) -> bool:
        return self.layer is None or _layer_of(key) == self.layer

    def _expert_step(self, key, sub, point, tensor) -> list[Step]:
        """An expert's points: only the expert the picked token went to first (this block's
        last token's, where its stream is shorter than the picked position), its rows placed
        at the positions of the tokens routed to it (NaN elsewhere)."""
        name = key_name(key)
        owner, _ = sub.rsplit(".", 1)
        if owner == "shared":
            value, label = _np(tensor), f"shared expert: {point.label}"
        else:
            choices = self.choices.get(key)
            expert = int(owner.split(".")[1])
            if choices is None or expert != int(choices[min(self.position, len(choices) - 1), 0]):
                return []
            routed = np.flatnonzero((choices == expert).any(axis=1))
            rows = _np(tensor)
            value = np.full((choices.shape[0], *rows.shape[1:]), np.nan, dtype=np.float32)
            value[routed] = rows[:len(routed)]
            label = f"expert {expert}: {point.label}"
        return [Step(f"{name}: {label}", point.formula, value, name, "feed_forward")]


def _plain_output(call: Call) -> list[Step]:
    """A block without hook points: its output, unless it handed its input on unchanged (a
    dropout in eval mode)."""
    import torch

    out = _first(call.output)
    if call.args and torch.is_tensor(call.args[0]) and torch.is_tensor(out) and \
            call.args[0].shape == out.shape and torch.equal(call.args[0], out):
        return []
    name = key_name(call.key)
    return [Step(f"{name}: output", f"y = {type(call.module).__name__}(x)", _np(out[0]), name,
                 type(call.module).__name__)]


def _block_kinds(model) -> dict[tuple, str]:
    """Each block's type in the user's graph ("attention", "feed_forward", ...)."""
    from .roles import split_key

    graph = getattr(model, "graph", None)
    if graph is None:
        return {}
    from ..graph.model import graph_at

    kinds = {}
    for key, _ in model.blocks():
        if isinstance(key[-1], int):
            continue
        path, node_id = split_key(key)
        try:
            kinds[key] = graph_at(graph, path).node(node_id).type
        except (KeyError, ValueError):
            continue
    return kinds


def sampling_steps(row: np.ndarray, position: int, temperature: float, top_k: int,
                   top_p: float) -> list[Step]:
    """The distribution at ``position`` before and after each of the sampler's filters."""
    row = np.asarray(row, dtype=np.float64)
    at = f"position {position}"
    steps = [Step(f"probabilities at {at}", "p = softmax(l)", softmax(row), "", "sampling")]
    if temperature > 0:
        steps.append(Step(f"probabilities at {at} after temperature {temperature:g}",
                          f"softmax(l / {temperature:g})", softmax(row / temperature), "",
                          "sampling"))
    steps.append(Step(filtered_name(at, temperature, top_k, top_p),
                      "keep the k likeliest, then the smallest set reaching p; renormalise",
                      filtered_probabilities(row, temperature, top_k, top_p), "", "sampling"))
    return steps


def filtered_name(at: str, temperature: float, top_k: int, top_p: float) -> str:
    """The last sampling card's title: the filters that ran ("after top-k 5 and top-p 0.5"),
    that none did (top-k 0 and top-p 1 keep every token), or greedy decoding's one token."""
    if temperature <= 0:
        return f"probabilities at {at}, greedy (temperature 0): the likeliest token alone"
    filters = ([f"top-k {top_k}"] if top_k > 0 else []) + ([f"top-p {top_p:g}"] if top_p < 1
                                                           else [])
    if not filters:
        return f"probabilities at {at}, no filter (top-k and top-p off)"
    return f"probabilities at {at} after {' and '.join(filters)}"


# ---------------------------------------------------------------------------- sampling
def softmax(row: np.ndarray) -> np.ndarray:
    z = row - row.max()
    e = np.exp(z)
    return e / e.sum()


def filtered_probabilities(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0,
                           top_p: float = 1.0) -> np.ndarray:
    """The distribution sampling draws from: temperature (0: greedy), then top-k (0: all),
    then top-p (the smallest set of likeliest tokens whose mass reaches p), renormalised."""
    if temperature < 0 or not 0 < top_p <= 1 or top_k < 0:
        raise ValueError("temperature must be >= 0, top_k >= 0 and top_p in (0, 1]")
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        out = np.zeros_like(logits)
        out[int(np.argmax(logits))] = 1.0
        return out
    p = softmax(logits / temperature)
    keep = np.ones(p.shape, dtype=bool)
    if 0 < top_k < p.size:
        keep &= p >= np.sort(p)[-top_k]
    if top_p < 1:
        order = np.argsort(-np.where(keep, p, 0.0), kind="stable")
        q = np.where(keep, p, 0.0)[order]
        q = q / q.sum()
        before = np.cumsum(q) - q
        nucleus = np.zeros_like(keep)
        nucleus[order] = before < top_p
        keep &= nucleus
    out = np.where(keep, p, 0.0)
    return out / out.sum()
