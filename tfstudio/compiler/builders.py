"""How each block type becomes a ``tfstudio.nn`` module: the constructor call and how it is called.

Pure Python (no torch): the code generator renders these into source text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..graph.schema import get_spec
from .errors import CompileError, where

# how a block takes the decoding cache
NO_CACHE = "none"
STREAM = "stream"        # positions / keys / recurrent state along the decoded stream
MEMORY = "memory"        # reuses its projection of a fixed encoder memory


@dataclass(frozen=True)
class BlockCall:
    cls: str                          # a class in tfstudio.nn
    kwargs: dict[str, Any]            # constructor arguments (ints, floats, bools, short strings)
    inputs: tuple[str, ...]           # input ports, in call order
    cache: str = NO_CACHE
    notes: tuple[str, ...] = field(default=())  # short facts for the generated comment


def block_call(node, in_shapes: dict[str, tuple], path: tuple[str, ...]) -> BlockCall:
    """The module for ``node`` (a non-group, non-boundary, non-input block)."""
    build = _BUILDERS.get(node.type)
    if build is None:
        raise CompileError(f"{where(node.id, path)}: block type '{node.type}' has no torch "
                           "implementation in tfstudio.nn yet; replace the node or add one")
    params = _checked_params(node, path)
    return build(node, params, _Widths(node, in_shapes, path))


def _checked_params(node, path) -> dict[str, Any]:
    """Every parameter coerced to its declared type, so only plain literals reach the code."""
    spec = get_spec(node.type)
    out = {}
    for name, value in node.resolved_params().items():
        try:
            value = spec.param(name).coerce(value)
        except (KeyError, ValueError) as exc:
            raise CompileError(f"{where(node.id, path)}: {exc}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise CompileError(f"{where(node.id, path)}: '{name}' must be a finite number")
        out[name] = value
    return out


class _Widths:
    def __init__(self, node, in_shapes, path):
        self.node, self.shapes, self.path = node, in_shapes, path

    def __call__(self, port: str = "x") -> int:
        shape = self.shapes.get(port)
        if not shape:
            raise CompileError(f"{where(self.node.id, self.path)}: the width of input '{port}' "
                               "is unknown; connect it to a stream whose width is known")
        width = shape[-1]
        if not isinstance(width, int):
            raise CompileError(f"{where(self.node.id, self.path)}: input '{port}' has a "
                               f"symbolic width {width!r}; a number is needed to build weights")
        return width


def _token_embedding(node, p, w):
    return BlockCall("TokenEmbedding", {"vocab_size": p["vocab_size"], "d_model": p["d_model"],
                                        "scale": p["scale"]}, ("ids",))


def _positional(node, p, w):
    return BlockCall("PositionalEncoding", {"d_model": w(), "scheme": p["scheme"],
                                            "max_len": p["max_len"], "dropout": p["dropout"]},
                     ("x",), STREAM, (p["scheme"],))


def _attention(node, p, w):
    kwargs = {"d_model": w(), "heads": p["heads"], "kv_heads": p["kv_heads"],
              "causal": p["causal"], "window": p["window"], "bias": p["bias"],
              "dropout": p["dropout"], "position": p["position"]}
    if p["position"] == "rope":
        kwargs.update(rope_base=p["rope_base"], rope_scaling=p["rope_scaling"])
    notes = ["causal" if p["causal"] else "bidirectional"]
    if p["kv_heads"] != p["heads"]:
        notes.append("MQA" if p["kv_heads"] == 1 else "GQA")
    if p["window"]:
        notes.append(f"window {p['window']}")
    if p["position"] != "none":
        notes.append(p["position"])
    return BlockCall("SelfAttention", kwargs, ("x",), STREAM, tuple(notes))


def _cross_attention(node, p, w):
    kwargs = {"d_model": w(), "heads": p["heads"], "kv_heads": p["kv_heads"], "bias": p["bias"],
              "dropout": p["dropout"]}
    if w("memory") != w():
        kwargs["memory_dim"] = w("memory")
    return BlockCall("CrossAttention", kwargs, ("x", "memory"), MEMORY)


def _feed_forward(node, p, w):
    return BlockCall("FeedForward", {"d_model": w(), "d_ff": p["d_ff"],
                                     "activation": p["activation"], "bias": p["bias"],
                                     "dropout": p["dropout"]}, ("x",), notes=(p["activation"],))


def _moe(node, p, w):
    kwargs = {"d_model": w(), **{k: p[k] for k in ("experts", "top_k", "d_ff", "activation",
                                                    "bias", "shared_expert", "aux_loss_weight")}}
    return BlockCall("MixtureOfExperts", kwargs, ("x",),
                     notes=(f"{p['experts']} experts, top {p['top_k']}",))


def _norm(node, p, w):
    return BlockCall("Norm", {"d_model": w(), "kind": p["kind"], "eps": p["eps"],
                              "bias": p["bias"]}, ("x",), notes=(p["kind"],))


def _add(node, p, w):
    return BlockCall("Add", {}, tuple(f"in{i + 1}" for i in range(p["n_inputs"])))


def _dropout(node, p, w):
    return BlockCall("Dropout", {"p": p["dropout"]}, ("x",))


def _lm_head(node, p, w):
    return BlockCall("LMHead", {"d_model": w(), "vocab_size": p["vocab_size"],
                                "bias": p["bias"]}, ("x",))


def _mlm_head(node, p, w):
    return BlockCall("MLMHead", {"d_model": w(), "vocab_size": p["vocab_size"],
                                 "bias": p["bias"], "transform": p["transform"],
                                 "eps": p["eps"]}, ("x",))


def _rnn(node, p, w):
    return BlockCall("Recurrent", {"d_model": w(), "cell": p["cell"],
                                   "hidden_size": p["hidden_size"], "layers": p["layers"],
                                   "dropout": p["dropout"]}, ("x",), STREAM, (p["cell"],))


_BUILDERS: dict[str, Callable[..., BlockCall]] = {
    "token_embedding": _token_embedding,
    "positional_encoding": _positional,
    "attention": _attention,
    "cross_attention": _cross_attention,
    "feed_forward": _feed_forward,
    "moe": _moe,
    "norm": _norm,
    "add": _add,
    "dropout": _dropout,
    "lm_head": _lm_head,
    "seq2seq_head": _lm_head,
    "mlm_head": _mlm_head,
    "rnn": _rnn,
}

