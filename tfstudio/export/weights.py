"""Tensor-by-tensor correspondence between a compiled tfstudio model and a Hugging Face
checkpoint, used in both directions so export and import cannot disagree.

Each :class:`Link` ties one tfstudio parameter to one or more HF tensors: a fused QKV matrix
is the row-wise stack [q; k; v] of HF's three projections, a gated FFN's ``up`` is [gate; up],
GPT-2's Conv1D stores every matrix transposed, and RoPE models need their q/k rows reordered:
tfstudio rotates feature pairs (2i, 2i+1) while HF's ``rotate_half`` pairs (i, i + d/2), both
at frequency base^(-2i/d). Moving row 2i of each head to position i and row 2i+1 to i + d/2
makes the two compute the same attention scores.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..graph import block_types as bt
from .anatomy import Anatomy, At
from .errors import InteropError


@dataclass
class Link:
    hf: tuple[str, ...]              # HF tensor names, stacked along dim 0 on the tfstudio side
    tf: torch.Tensor | None          # the tfstudio parameter (None: absent, i.e. zero)
    shape: tuple[int, ...]           # the tfstudio tensor's shape
    rows: tuple[int, ...] | None = None   # rows of each part (None: a single part)
    transpose: bool = False          # HF stores each part transposed (GPT-2's Conv1D)
    perms: tuple | None = None       # per part: LongTensor taking tfstudio rows to HF order

    def _parts(self, full: torch.Tensor) -> list[torch.Tensor]:
        return list(full.split(self.rows, dim=0)) if self.rows else [full]

    def export(self) -> dict[str, torch.Tensor]:
        full = (self.tf.detach() if self.tf is not None else torch.zeros(self.shape))
        if not self.hf:
            if full.abs().max() > 0:
                raise InteropError(f"a tfstudio tensor of shape {self.shape} has no place in "
                                   "the target architecture and is not zero")
            return {}
        out = {}
        parts = self._parts(full.float().cpu())
        for i, (name, part) in enumerate(zip(self.hf, parts, strict=True)):
            if self.perms and self.perms[i] is not None:
                part = part[self.perms[i]]
            if self.transpose:
                part = part.t()
            out[name] = part.contiguous().clone()
        return out

    def load(self, tensors: dict[str, torch.Tensor], problems: list[str]) -> None:
        if not self.hf:  # tfstudio has it, HF does not: it is zero there
            if self.tf is not None:
                with torch.no_grad():
                    self.tf.zero_()
            return
        parts = []
        for i, name in enumerate(self.hf):
            if name not in tensors:
                problems.append(f"missing tensor {name}")
                return
            part = tensors[name].float()
            if self.transpose:
                part = part.t()
            if self.perms and self.perms[i] is not None:
                part = part[torch.argsort(self.perms[i])]
            parts.append(part)
        full = torch.cat(parts, dim=0) if len(parts) > 1 else parts[0]
        if tuple(full.shape) != tuple(self.shape):
            problems.append(f"{', '.join(self.hf)}: shape {tuple(full.shape)} does not match the "
                            f"graph's {tuple(self.shape)}; config.json and the weights disagree")
            return
        if self.tf is None:
            if full.abs().max() > 0:
                problems.append(f"{', '.join(self.hf)} is not zero, but the graph has no such "
                                "parameter")
            return
        with torch.no_grad():
            self.tf.copy_(full)


def rope_permutation(heads: int, head_dim: int) -> torch.Tensor:
    """Rows in HF order: head by head, the even features of tfstudio's pairs then the odd."""
    one = torch.cat([torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)])
    return torch.cat([h * head_dim + one for h in range(heads)])


def export_tensors(links: list[Link]) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for link in links:
        out.update(link.export())
    return out


def load_tensors(links: list[Link], tensors: dict[str, torch.Tensor], source: str) -> set[str]:
    """Copy ``tensors`` into the linked parameters; returns the names used. Every missing or
    misshapen tensor is reported at once."""
    problems: list[str] = []
    for link in links:
        link.load(tensors, problems)
    if problems:
        shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more"
                                             if len(problems) > 6 else "")
        raise InteropError(f"{source}: the weights do not fit the architecture in config.json: "
                           f"{shown}")
    return {name for link in links for name in link.hf}


# ------------------------------------------------------------------------------ link tables
class _Links:
    def __init__(self, modules: dict):
        self.modules, self.links = modules, []

    def mod(self, at: At):
        return self.modules[at.key]

    def tensor(self, name: str, param, shape=None, **kw) -> None:
        shape = tuple(param.shape) if param is not None else tuple(shape)
        self.links.append(Link((name,) if name else (), param, shape, **kw))

    def linear(self, name: str, lin, transpose: bool = False, bias: bool = True) -> None:
        self.tensor(f"{name}.weight", lin.weight, transpose=transpose)
        if bias:
            self.tensor(f"{name}.bias", lin.bias, (lin.out_features,))

    def norm(self, name: str, at: At, bias: bool = True, weight: str = "weight") -> None:
        m = self.mod(at)
        self.tensor(f"{name}.{weight}", m.weight)
        if bias:
            self.tensor(f"{name}.bias", m.bias, tuple(m.weight.shape))

    def split(self, names, param, rows, perms=None, shape=None) -> None:
        shape = tuple(param.shape) if param is not None else tuple(shape)
        self.links.append(Link(tuple(names), param, shape, tuple(rows), perms=perms))


def family_links(family: str, an: Anatomy, modules: dict) -> list[Link]:
    """The links of ``an``'s compiled modules (``dict(model.blocks())``) as ``family``."""
    build = {"gpt2": _gpt2, "bert": _bert}.get(family, _llama_like)
    t = _Links(modules)
    build(t, an, family)
    return t.links


def _head_weight(t: _Links, an: Anatomy, name: str) -> None:
    if not an.head.params.tie:
        t.tensor(name, t.mod(an.head).proj.weight)


def _gpt2(t: _Links, an: Anatomy, family: str) -> None:
    p = "transformer."
    t.tensor(p + "wte.weight", t.mod(an.embed).weight)
    t.tensor(p + "wpe.weight", t.mod(an.positions).table.weight)
    for i, layer in enumerate(an.layers):
        h = f"{p}h.{i}."
        attn, ffn = t.mod(layer.attn), t.mod(layer.ffn)
        t.norm(h + "ln_1", layer.norm1)
        t.linear(h + "attn.c_attn", attn.qkv, transpose=True)
        t.linear(h + "attn.c_proj", attn.out, transpose=True)
        t.norm(h + "ln_2", layer.norm2)
        t.linear(h + "mlp.c_fc", ffn.up, transpose=True)
        t.linear(h + "mlp.c_proj", ffn.down, transpose=True)
    t.norm(p + "ln_f", an.final_norm)
    _head_weight(t, an, "lm_head.weight")


def _llama_like(t: _Links, an: Anatomy, family: str) -> None:
    p = "model."
    t.tensor(p + "embed_tokens.weight", t.mod(an.embed).weight)
    for i, layer in enumerate(an.layers):
        h = f"{p}layers.{i}."
        t.norm(h + "input_layernorm", layer.norm1, bias=False)
        _llama_attention(t, t.mod(layer.attn), h + "self_attn.", family)
        t.norm(h + "post_attention_layernorm", layer.norm2, bias=False)
        if layer.ffn.node.type == bt.MOE:
            _mixtral_experts(t, t.mod(layer.ffn), h + "block_sparse_moe.")
        else:
            _gated_mlp(t, t.mod(layer.ffn), h + "mlp.")
    t.norm(p + "norm", an.final_norm, bias=False)
    _head_weight(t, an, "lm_head.weight")


def _llama_attention(t: _Links, attn, prefix: str, family: str) -> None:
    """The fused qkv as q_proj, k_proj, v_proj (q and k rows in HF's rotate_half order)."""
    H, KV, hd = attn.heads, attn.kv_heads, attn.head_dim
    rows = (H * hd, KV * hd, KV * hd)
    perms = (rope_permutation(H, hd), rope_permutation(KV, hd), None)
    names = [f"{prefix}{x}_proj" for x in "qkv"]
    t.split([n + ".weight" for n in names], attn.qkv.weight, rows, perms)
    has_bias = attn.qkv.bias is not None
    if has_bias:
        t.split([n + ".bias" for n in names], attn.qkv.bias, rows, perms)
    t.tensor(prefix + "o_proj.weight", attn.out.weight)
    if has_bias:  # LLaMA's attention_bias covers o_proj; Qwen2's o_proj has none
        t.tensor(prefix + "o_proj.bias" if family == "llama" else "", attn.out.bias)


def _mixtral_experts(t: _Links, moe, prefix: str) -> None:
    """The router as gate, each expert's fused [gate; up] as w1 and w3, its down as w2."""
    t.tensor(prefix + "gate.weight", moe.router.weight)
    for e, expert in enumerate(moe.experts):
        x = f"{prefix}experts.{e}."
        t.split([x + "w1.weight", x + "w3.weight"], expert.up.weight, (expert.d_ff, expert.d_ff))
        t.tensor(x + "w2.weight", expert.down.weight)


def _gated_mlp(t: _Links, ffn, prefix: str) -> None:
    """The fused [gate; up] as gate_proj and up_proj."""
    t.split([prefix + "gate_proj.weight", prefix + "up_proj.weight"], ffn.up.weight,
            (ffn.d_ff, ffn.d_ff))
    if ffn.up.bias is not None:
        t.split([prefix + "gate_proj.bias", prefix + "up_proj.bias"], ffn.up.bias,
                (ffn.d_ff, ffn.d_ff))
    t.linear(prefix + "down_proj", ffn.down, bias=ffn.down.bias is not None)


BERT_TYPE_VOCAB = 2


def _bert(t: _Links, an: Anatomy, family: str) -> None:
    p = "bert."
    emb = t.mod(an.embed)
    d = emb.weight.shape[1]
    t.tensor(p + "embeddings.word_embeddings.weight", emb.weight)
    t.tensor(p + "embeddings.position_embeddings.weight", t.mod(an.positions).table.weight)
    # no segments in tfstudio: HF's token-type rows are zero (import folds row 0 away first)
    t.tensor(p + "embeddings.token_type_embeddings.weight", None, (BERT_TYPE_VOCAB, d))
    t.norm(p + "embeddings.LayerNorm", an.embed_norm)
    for i, layer in enumerate(an.layers):
        h = f"{p}encoder.layer.{i}."
        attn, ffn = t.mod(layer.attn), t.mod(layer.ffn)
        names = [f"{h}attention.self.{x}" for x in ("query", "key", "value")]
        rows = (d, d, d)
        t.split([n + ".weight" for n in names], attn.qkv.weight, rows)
        t.split([n + ".bias" for n in names], attn.qkv.bias, rows, shape=(3 * d,))
        t.linear(h + "attention.output.dense", attn.out)
        t.norm(h + "attention.output.LayerNorm", layer.norm1)
        t.linear(h + "intermediate.dense", ffn.up)
        t.linear(h + "output.dense", ffn.down)
        t.norm(h + "output.LayerNorm", layer.norm2)
    head = t.mod(an.head)
    c = "cls.predictions."
    t.linear(c + "transform.dense", head.dense)
    t.tensor(c + "transform.LayerNorm.weight", head.norm.weight)
    t.tensor(c + "transform.LayerNorm.bias", head.norm.bias)
    t.tensor(c + "bias", head.proj.bias, (head.proj.out_features,))
    if not an.head.params.tie:  # untied, transformers 5 keeps the decoder's bias apart
        t.tensor(c + "decoder.bias", head.proj.bias, (head.proj.out_features,))
    _head_weight(t, an, c + "decoder.weight")
