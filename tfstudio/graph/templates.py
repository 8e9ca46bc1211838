"""Builders for common architectures: layer sub-graphs in each norm placement, and whole models.

Presets are made with these, and the norm-placement rewrite rebuilds a layer through them.
Placements:
  post      y = Norm(x + F(x))             original Transformer, BERT, GPT-1
  pre       y = x + F(Norm(x))             GPT-2 onward, LLaMA
  sandwich  y = x + Norm(F(Norm(x)))       a norm on both sides of F, inside the residual
  post-in-residual  y = x + Norm(F(x))     one norm on F's output, inside the residual
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from . import block_types as bt
from .grouping import group_nodes
from .kinds import (GELU, LAYERNORM, LEARNED, NO_POSITIONS, PLACEMENTS, POST, POST_IN_RESIDUAL,
                    PRE, RELU, SANDWICH, SINUSOIDAL)
from .layout import CANVAS_SCALE, GAP_X, NODE_WIDTH
from .model import GROUP_INPUT, GROUP_OUTPUT, Edge, Graph, Node, format_port_list

MIXER_TYPES = (bt.ATTENTION, bt.CROSS_ATTENTION, bt.FEED_FORWARD, bt.MOE, bt.RNN)

Sublayer = tuple[str, dict[str, Any]]  # (block type, params)

_DX, _DY = 190.0, 0.0


def layer_graph(sublayers: Sequence[Sublayer], placement: str = PRE,
                norm: dict[str, Any] | None = None, memory: bool = False) -> Graph:
    """One residual layer: each sublayer F becomes a residual branch with norms per placement.

    A cross_attention sublayer reads the group's ``memory`` input."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}; got '{placement}'")
    layer = _LayerWriter(dict(norm or {"kind": LAYERNORM}), placement)
    ports = [("x", "hidden")] + ([("memory", "memory")] if memory else [])
    layer.g.add_node(Node("inputs", GROUP_INPUT, {"ports": format_port_list(ports)}, (0.0, 0.0)))
    stream = ("inputs", "x")
    for (block_type, params), name in zip(sublayers, _sublayer_names(sublayers)):
        stream = layer.residual(stream, name, block_type, params)
    layer.g.add_node(Node("outputs", GROUP_OUTPUT, {"ports": "y:hidden"}, (layer.x, 0.0)))
    layer.g.add_edge(Edge(*stream, "outputs", "y"))
    return layer.g


class _LayerWriter:
    """Lays out one layer's nodes left to right, wiring each residual branch."""

    def __init__(self, norm: dict[str, Any], placement: str):
        self.g, self.norm, self.placement, self.x = Graph(), norm, placement, _DX

    def add(self, node_id: str, typ: str, params: dict, source: tuple[str, str] | None,
            dy: float = 0.0) -> tuple[str, str]:
        """Add a node fed from ``source`` at port x; its output (node, "y")."""
        self.g.add_node(Node(node_id, typ, dict(params), (self.x, dy)))
        self.x += _DX
        if source is not None:
            self.g.add_edge(Edge(*source, node_id, "x"))
        return node_id, "y"

    def residual(self, stream: tuple[str, str], name: str, block_type: str,
                 params: dict) -> tuple[str, str]:
        """stream + F(stream), with the norms the placement puts around F and after the sum."""
        branch = stream
        if self.placement in (PRE, SANDWICH):
            branch = self.add(f"norm_{name}", bt.NORM, self.norm, branch, 90.0)
        branch = self.add(name, block_type, params, branch, 90.0)
        if block_type == bt.CROSS_ATTENTION:
            self.g.add_edge(Edge("inputs", "memory", name, "memory"))
        if self.placement == SANDWICH:
            branch = self.add(f"norm_{name}_out", bt.NORM, self.norm, branch, 90.0)
        if self.placement == POST_IN_RESIDUAL:
            branch = self.add(f"norm_{name}", bt.NORM, self.norm, branch, 90.0)
        total, _ = self.add(f"add_{name}", bt.ADD, {}, None)
        self.g.add_edge(Edge(*stream, total, "in1"))
        self.g.add_edge(Edge(*branch, total, "in2"))
        if self.placement == POST:
            return self.add(f"norm_{name}", bt.NORM, self.norm, (total, "y"))
        return total, "y"


def _sublayer_names(sublayers: Sequence[Sublayer]) -> list[str]:
    short = {bt.ATTENTION: "attn", bt.CROSS_ATTENTION: "cross", bt.FEED_FORWARD: "ffn",
             bt.MOE: "moe", bt.RNN: "rnn"}
    names, seen = [], {}
    for block_type, _ in sublayers:
        base = short.get(block_type, block_type)
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}{seen[base]}")
    return names


# the tidy layout's pitch (NODE_WIDTH + GAP_X canvas units) in whole graph units, so that files
# hold the positions exactly: a row of four blocks (an LSTM LM) then shows whole at a legible
# zoom on a 1366x768 laptop
PITCH = float(math.ceil((NODE_WIDTH + GAP_X) / CANVAS_SCALE))


class ModelBuilder:
    """Lays out a top-level graph left to right, one node after another."""

    def __init__(self, meta: dict[str, Any]):
        self.graph = Graph(meta=dict(meta))
        self.x, self.y = 0.0, 0.0

    def add(self, node_id: str, block_type: str, params: dict | None = None,
            inputs: Sequence[tuple[str, str, str]] = (), subgraph: Graph | None = None,
            title: str = "") -> str:
        """Add a node and wire ``inputs`` given as (src, src_port, dst_port)."""
        self.graph.add_node(Node(node_id, block_type, dict(params or {}), (self.x, self.y),
                                 title, subgraph))
        self.x += PITCH
        for src, src_port, dst_port in inputs:
            self.graph.add_edge(Edge(src, src_port, node_id, dst_port))
        return node_id

    def row(self, y: float) -> None:
        self.x, self.y = 0.0, y


def _attention_params(heads, kv_heads, causal, bias, position, rope_base=10000.0, window=0,
                      dropout=0.0):
    return {"heads": heads, "kv_heads": kv_heads or heads, "causal": causal, "bias": bias,
            "position": position, "rope_base": float(rope_base), "window": window,
            "dropout": dropout}


def _ffn(d_ff, activation, bias, moe=None):
    if moe:
        return (bt.MOE, {"experts": moe["experts"], "top_k": moe["top_k"], "d_ff": d_ff,
                        "activation": activation, "bias": bias,
                        "shared_expert": moe.get("shared_expert", False),
                        "aux_loss_weight": moe.get("aux_loss_weight", 0.01),
                        **({"weighting": moe["weighting"]} if "weighting" in moe else {})})
    return (bt.FEED_FORWARD, {"d_ff": d_ff, "activation": activation, "bias": bias})


def _embed(b: ModelBuilder, prefix: str, role: str, vocab: int, d_model: int, pos_scheme: str,
           max_len: int, scale: bool, embed_norm: dict | None) -> tuple[str, str]:
    inp = b.add(f"{prefix}tokens", bt.TOKEN_INPUT, {"role": role})
    emb = b.add(f"{prefix}embed", bt.TOKEN_EMBEDDING,
                {"vocab_size": vocab, "d_model": d_model, "scale": scale}, [(inp, "ids", "ids")])
    stream = (emb, "y")
    if pos_scheme != NO_POSITIONS:
        pos = b.add(f"{prefix}pos", bt.POSITIONAL_ENCODING, {"scheme": pos_scheme,
                                                            "max_len": max_len},
                    [(*stream, "x")])
        stream = (pos, "y")
    if embed_norm:
        n = b.add(f"{prefix}embed_norm", bt.NORM, embed_norm, [(*stream, "x")])
        stream = (n, "y")
    return stream


def transformer_lm(*, name: str, description: str, vocab: int, d_model: int, layers: int,
                   heads: int, d_ff: int, kv_heads: int | None = None, activation: str = GELU,
                   norm_kind: str = LAYERNORM, placement: str = PRE,
                   pos_scheme: str = LEARNED, attn_position: str = NO_POSITIONS,
                   rope_base: float = 10000.0, max_len: int = 1024, context: int | None = None,
                   tie: bool = True, bias: bool = True, window: int = 0,
                   moe: dict | None = None, encoder: bool = False, scale_embed: bool = False,
                   embed_norm: bool = False, local_every: int = 0, eps: float = 1e-5,
                   mlm_transform: bool = True) -> Graph:
    """A decoder-only LM (or, with ``encoder``, a bidirectional masked-LM encoder)."""
    norm = {"kind": norm_kind, "eps": eps, "bias": bias}
    b = ModelBuilder({"name": name, "description": description,
                      "family": "encoder" if encoder else "decoder",
                      "context_length": context or max_len})
    stream = _embed(b, "", "tokens", vocab, d_model, pos_scheme, max_len, scale_embed,
                    norm if embed_norm else None)
    attn = _attention_params(heads, kv_heads, not encoder, bias, attn_position, rope_base, window)
    ffn = _ffn(d_ff, activation, bias, moe)
    if local_every:  # alternating dense / banded layers: a group of 2 layers repeated N/2 times
        local = dict(attn, window=window)
        dense = dict(attn, window=0)
        sub = [(bt.ATTENTION, dense), ffn, (bt.ATTENTION, local), ffn]
        lg = layer_graph(sub, placement, norm)
        b.add("layers", "group", {"repeat": layers // 2}, [(*stream, "x")], lg,
              title="dense + local layers")
    else:
        lg = layer_graph([(bt.ATTENTION, attn), ffn], placement, norm)
        b.add("layers", "group", {"repeat": layers}, [(*stream, "x")], lg,
              title="encoder layer" if encoder else "decoder layer")
    stream = ("layers", "y")
    if placement != POST:
        stream = (b.add("final_norm", bt.NORM, norm, [(*stream, "x")]), "y")
    if encoder:
        b.add("head", bt.MLM_HEAD, {"vocab_size": vocab, "tie": tie, "transform": mlm_transform,
                                   "eps": eps},
              [(*stream, "x")])
    else:
        b.add("head", bt.LM_HEAD, {"vocab_size": vocab, "tie": tie}, [(*stream, "x")])
    return b.graph


def encoder_decoder(*, name: str, description: str, vocab: int, d_model: int,
                    encoder_layers: int, decoder_layers: int, heads: int, d_ff: int,
                    activation: str = RELU, norm_kind: str = LAYERNORM,
                    placement: str = POST, pos_scheme: str = SINUSOIDAL,
                    attn_position: str = NO_POSITIONS, max_len: int = 512,
                    context: int | None = None,
                    tie: bool = True, bias: bool = True, scale_embed: bool = False,
                    kv_heads: int | None = None, eps: float = 1e-5) -> Graph:
    norm = {"kind": norm_kind, "eps": eps, "bias": bias}
    b = ModelBuilder({"name": name, "description": description, "family": "encoder-decoder",
                      "context_length": context or max_len})
    src = _embed(b, "src_", "source", vocab, d_model, pos_scheme, max_len, scale_embed, None)
    enc_attn = _attention_params(heads, kv_heads, False, bias, attn_position)
    enc = layer_graph([(bt.ATTENTION, enc_attn), _ffn(d_ff, activation, bias)], placement, norm)
    b.add("encoder", "group", {"repeat": encoder_layers}, [(*src, "x")], enc,
          title="encoder layer")
    memory = ("encoder", "y")
    if placement != POST:
        memory = (b.add("encoder_norm", bt.NORM, norm, [(*memory, "x")]), "y")
    b.row(260.0)
    tgt = _embed(b, "tgt_", "target", vocab, d_model, pos_scheme, max_len, scale_embed, None)
    dec_attn = _attention_params(heads, kv_heads, True, bias, attn_position)
    cross = {"heads": heads, "kv_heads": kv_heads or heads, "bias": bias}
    dec = layer_graph([(bt.ATTENTION, dec_attn), (bt.CROSS_ATTENTION, cross),
                       _ffn(d_ff, activation, bias)], placement, norm, memory=True)
    b.add("decoder", "group", {"repeat": decoder_layers}, [(*tgt, "x"), (*memory, "memory")],
          dec, title="decoder layer")
    stream = ("decoder", "y")
    if placement != POST:
        stream = (b.add("decoder_norm", bt.NORM, norm, [(*stream, "x")]), "y")
    b.add("head", bt.SEQ2SEQ_HEAD, {"vocab_size": vocab, "tie": tie}, [(*stream, "x")])
    return b.graph


def recurrent_lm(*, name: str, description: str, vocab: int, d_model: int, hidden: int,
                 layers: int, cell: str = "lstm", tie: bool = True,
                 context: int = 256) -> Graph:
    b = ModelBuilder({"name": name, "description": description, "family": "decoder",
                      "context_length": context})
    stream = _embed(b, "", "tokens", vocab, d_model, NO_POSITIONS, context, False, None)
    r = b.add("rnn", bt.RNN, {"cell": cell, "hidden_size": hidden, "layers": layers},
              [(*stream, "x")])
    b.add("head", bt.LM_HEAD, {"vocab_size": vocab, "tie": tie}, [(r, "y", "x")])
    return b.graph


__all__ = ["PLACEMENTS", "MIXER_TYPES", "layer_graph", "transformer_lm", "encoder_decoder",
           "recurrent_lm", "ModelBuilder", "group_nodes"]
