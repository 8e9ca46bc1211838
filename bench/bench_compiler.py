"""Benchmark: a training step of a compiled graph against a hand-written nn.Module.

Both models hold the same weights and do the same math: GPT-2 style pre-norm blocks (fused QKV,
``F.scaled_dot_product_attention(is_causal=True)``, GELU MLP, tied head), and a LLaMA-style
decoder (RMSNorm, RoPE on (even, odd) pairs as Meta's reference writes it, GQA 8/2, SwiGLU,
untied head). The GPT-2 style model is written flat (one module per layer, holding its Linear
and LayerNorm modules); one more row runs tiny-gpt against nanoGPT's model.py as Karpathy writes
it, with attention and MLP modules inside each Block. Each repetition times one step of each
(forward, cross-entropy, backward, AdamW), alternating which goes first, on several fresh sets
of the models (where tensors land in memory moves a step by a few percent); the ratio compiled /
hand-written, the median over the sets, is written into the compiler section of
docs/BENCHMARKS.md (targets: <= 1.01 a row, <= 1.05 overall), next to an A/A control (a second
copy of the hand-written model) that shows the noise left.

    python bench/bench_compiler.py [--reps 15] [--instances 6] [--seconds 2] [--threads N]
        [--only SUBSTRING] [--no-write]
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import statistics

import torch
import torch.nn.functional as F
from torch import nn

from tfstudio.compiler import compile_graph
from tfstudio.graph.templates import transformer_lm
from tfstudio.presets import load_preset

from report import DOC, replace_section, step_clock  # noqa: E402  (bench/ is on sys.path)
SECTION = "## Compiler: generated model vs hand-written"


class HandBlock(nn.Module):
    def __init__(self, d, heads, d_ff, act):
        super().__init__()
        self.heads, self.act = heads, act
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(B, T, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, d))
        return x + self.fc2(self.act(self.fc(self.ln2(x))))


class HandGPT(nn.Module):
    """nanoGPT-style decoder written out by hand."""

    def __init__(self, vocab, d, layers, heads, d_ff, max_len, act):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(HandBlock(d, heads, d_ff, act) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # tied head

    def load_compiled(self, state: dict) -> None:
        names = {"embed.": "wte.", "pos.table.": "wpe.", "final_norm.": "ln_f.",
                 "norm_attn.": "ln1.", "attn.qkv.": "qkv.", "attn.out.": "proj.",
                 "norm_ffn.": "ln2.", "ffn.up.": "fc.", "ffn.down.": "fc2.", "layers.": "blocks."}
        # the head is tied to the embedding: it has no weights of its own here
        self.load_state_dict(renamed(state, names, skip="head."))


class NanoAttention(nn.Module):
    """nanoGPT's CausalSelfAttention, as its model.py writes it (dropout 0)."""

    def __init__(self, d, heads):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.attn_dropout, self.resid_dropout = nn.Dropout(0.0), nn.Dropout(0.0)
        self.n_head, self.n_embd, self.dropout = heads, d, 0.0

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.dropout
                                           if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class NanoMLP(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.c_fc, self.gelu, self.c_proj = nn.Linear(d, d_ff), nn.GELU(), nn.Linear(d_ff, d)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class NanoBlock(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d), NanoAttention(d, heads)
        self.ln_2, self.mlp = nn.LayerNorm(d), NanoMLP(d, d_ff)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    """nanoGPT's GPT (Karpathy's model.py) with its module per block: attention and MLP modules
    inside each Block, dropout modules at p=0, positions looked up from an arange, tied head."""

    def __init__(self, vocab, d, layers, heads, d_ff, max_len):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(max_len, d), drop=nn.Dropout(0.0),
            h=nn.ModuleList(NanoBlock(d, heads, d_ff) for _ in range(layers)),
            ln_f=nn.LayerNorm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx):
        pos = torch.arange(0, idx.shape[1], dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))

    def load_compiled(self, state: dict) -> None:
        names = {"embed.": "transformer.wte.", "pos.table.": "transformer.wpe.",
                 "final_norm.": "transformer.ln_f.", "norm_attn.": "ln_1.",
                 "attn.qkv.": "attn.c_attn.", "attn.out.": "attn.c_proj.", "norm_ffn.": "ln_2.",
                 "ffn.up.": "mlp.c_fc.", "ffn.down.": "mlp.c_proj.", "layers.": "transformer.h.",
                 "head.proj.": "lm_head."}
        self.load_state_dict(renamed(state, names))


def renamed(state: dict, names: dict[str, str], skip: str | None = None) -> dict:
    """The compiled model's state dict under a hand-written module's names (``skip``: a prefix
    left out)."""
    mapped = {}
    for key, value in state.items():
        if skip and key.startswith(skip):
            continue
        for old, new in names.items():
            key = key.replace(old, new)
        mapped[key] = value
    return mapped


class HandLlamaBlock(nn.Module):
    """Pre-norm RMSNorm block: GQA attention with RoPE on (even, odd) pairs, SwiGLU MLP."""

    def __init__(self, d, heads, kv_heads, d_ff):
        super().__init__()
        self.heads, self.kv_heads, self.hd, self.d_ff = heads, kv_heads, d // heads, d_ff
        self.ln1, self.ln2 = nn.RMSNorm(d, eps=1e-5), nn.RMSNorm(d, eps=1e-5)
        self.wqkv = nn.Linear(d, (heads + 2 * kv_heads) * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, d, bias=False)
        self.w13 = nn.Linear(d, 2 * d_ff, bias=False)  # gate rows, then up rows
        self.w2 = nn.Linear(d_ff, d, bias=False)

    def forward(self, x, freqs):
        B, T, d = x.shape
        H, KV, hd = self.heads, self.kv_heads, self.hd
        q, k, v = self.wqkv(self.ln1(x)).split((H * hd, KV * hd, KV * hd), dim=-1)
        q, k, v = q.view(B, T, H, hd), k.view(B, T, KV, hd), v.view(B, T, KV, hd)
        q, k = rope(q, freqs), rope(k, freqs)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True, enable_gqa=True)
        x = x + self.wo(y.transpose(1, 2).reshape(B, T, H * hd))
        gate, up = self.w13(self.ln2(x)).split(self.d_ff, dim=-1)
        return x + self.w2(F.silu(gate) * up)


def rope(x, freqs):
    """Meta's LLaMA rotation: (even, odd) pairs as complex numbers times e^(i t w)."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs[:, None, :]).flatten(3).type_as(x)


class HandLlama(nn.Module):
    """LLaMA-style decoder written out by hand: RMSNorm, RoPE, GQA, SwiGLU, untied head."""

    def __init__(self, vocab, d, layers, heads, kv_heads, d_ff, max_len, base=10000.0):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(HandLlamaBlock(d, heads, kv_heads, d_ff)
                                    for _ in range(layers))
        self.ln_f, self.lm_head = nn.RMSNorm(d, eps=1e-5), nn.Linear(d, vocab, bias=False)
        hd = d // heads
        inv_freq = 1.0 / base ** (torch.arange(0, hd, 2).float() / hd)
        angles = torch.outer(torch.arange(max_len).float(), inv_freq)
        self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles), False)

    def forward(self, ids):
        x, freqs = self.wte(ids), self.freqs[:ids.shape[1]]
        for block in self.blocks:
            x = block(x, freqs)
        return self.lm_head(self.ln_f(x))

    def load_compiled(self, state: dict) -> None:
        names = {"embed.": "wte.", "final_norm.": "ln_f.", "head.proj.": "lm_head.",
                 "norm_attn.": "ln1.", "attn.qkv.": "wqkv.", "attn.out.": "wo.",
                 "norm_ffn.": "ln2.", "ffn.up.": "w13.", "ffn.down.": "w2.", "layers.": "blocks."}
        self.load_state_dict(renamed(state, names))


def llama_graph():
    return transformer_lm(name="llama-narrow", description="", vocab=1024, d_model=128,
                          layers=4, heads=8, kv_heads=2, d_ff=344, activation="swiglu",
                          bias=False, tie=False, norm_kind="rmsnorm", pos_scheme="none",
                          attn_position="rope", max_len=128, eps=1e-5)


CONFIGS = {
    "tiny-gpt (d=64, 2 layers, vocab 256, T=64, batch 8)":
        dict(graph=lambda: load_preset("tiny-gpt"), vocab=256, d=64, layers=2, heads=4,
             d_ff=256, max_len=256, act=F.gelu, T=64, B=8),
    "tiny-gpt against nanoGPT's model.py (a module per block, as the field writes it)":
        dict(graph=lambda: load_preset("tiny-gpt"), T=64, B=8, vocab=256,
             hand=lambda: NanoGPT(256, 64, 2, 4, 256, 256)),
    "GPT-2 shape, narrow (d=128, 4 layers, vocab 50257, T=128, batch 8)":
        dict(graph=lambda: transformer_lm(
            name="gpt2-narrow", description="", vocab=50257, d_model=128, layers=4, heads=4,
            d_ff=512, activation="gelu_tanh", max_len=128),
             vocab=50257, d=128, layers=4, heads=4, d_ff=512, max_len=128,
             act=lambda x: F.gelu(x, approximate="tanh"), T=128, B=8),
    "LLaMA shape (d=128, 4 layers, GQA 8/2, RoPE, SwiGLU, untied, vocab 1024, T=128, "
    "batch 8)":
        dict(graph=llama_graph, hand=lambda: HandLlama(1024, 128, 4, 8, 2, 344, 128),
             vocab=1024, T=128, B=8),
}


def make_step(model, ids, targets):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(ids)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        opt.step()
    return step


def build(cfg: dict, order: tuple[str, ...]) -> dict[str, nn.Module]:
    """The compiled model, the hand-written one and its control copy, created in ``order`` (where
    each one's tensors land in memory follows the order), all holding the compiled weights."""
    made = {}
    for name in order:
        made[name] = (compile_graph(cfg["graph"]()) if name == "compiled" else
                      cfg["hand"]() if "hand" in cfg else
                      HandGPT(cfg["vocab"], cfg["d"], cfg["layers"], cfg["heads"], cfg["d_ff"],
                              cfg["max_len"], cfg["act"]))
    for name in ("hand", "control"):
        made[name].load_compiled(made["compiled"].state_dict())
    return made


def bench(cfg: dict, reps: int, instances: int, seconds: float) -> dict[str, list[float]]:
    """Median step seconds of the compiled model, the hand-written one and a second copy of the
    hand-written one (an A/A control), on each of ``instances`` fresh sets of the three built in
    turn in every order. Where a model's tensors land in memory moves its step by a few percent
    (the forwards of two copies of one hand-written tiny-gpt differed by 2% over 1,500 interleaved
    repetitions in one process), so one set measures its placement as much as its code.

    Timed by :func:`report.step_clock`. Each set times at least ``reps`` steps of each model, more
    where they fit in ``seconds`` (a small model's ratio needs many steps to settle)."""
    clock, _ = step_clock()
    torch.manual_seed(0)
    ids = torch.randint(0, cfg["vocab"], (cfg["B"], cfg["T"]))
    targets = torch.randint(0, cfg["vocab"], (cfg["B"], cfg["T"]))
    medians = {"compiled": [], "hand": [], "control": []}
    orders = list(itertools.permutations(medians))  # every model goes first equally often
    for instance in range(instances):
        torch.manual_seed(instance)
        models = build(cfg, orders[instance % len(orders)])
        with torch.no_grad():  # same weights, same math: the same logits
            assert torch.allclose(models["compiled"](ids), models["hand"](ids),
                                  atol=1e-5), "models disagree"
        steps = {name: make_step(models[name], ids, targets) for name in medians}
        for fn in steps.values():  # warm up allocators and kernels
            for _ in range(2):
                fn()
        t0 = clock()
        steps["hand"]()
        one_step = clock() - t0
        times = {name: [] for name in steps}
        for r in range(max(reps, int(seconds / (3 * one_step)))):
            for name in orders[r % len(orders)]:
                t0 = clock()
                steps[name]()
                times[name].append(clock() - t0)
        for name, t in times.items():
            medians[name].append(statistics.median(t))
    return medians


def summary(medians: dict[str, list[float]]) -> dict[str, float]:
    """Median step seconds of each model over the sets, and the median over the sets of each
    set's compiled / hand and control / hand."""
    def ratio(name):
        return statistics.median(a / b for a, b in zip(medians[name], medians["hand"]))
    return {**{name: statistics.median(t) for name, t in medians.items()},
            "ratio": ratio("compiled"), "control_ratio": ratio("control")}


def verdict(ratios: dict[str, float], overall: float) -> str:
    """Which targets the measured ratios meet, named row by row where one is missed."""
    over = [f"{name.split(' (')[0]} ({r:.3f})" for name, r in ratios.items() if r > 1.01]
    rows = ("every row meets <= 1.01" if not over
            else "over 1.01: " + ", ".join(over) + "; compare its control column for the noise")
    return f"Overall (geometric mean of compiled / hand): {overall:.3f}, " + (
        "within" if overall <= 1.05 else "over") + f" 1.05; {rows}."


def write_section(rows: list[str], reps: int, instances: int, seconds: float,
                  ratios: dict[str, float], overall: float) -> None:
    _, clock = step_clock()
    body = "\n".join([
        "One training step (forward, cross-entropy, backward, AdamW) of a compiled graph against",
        "a hand-written nn.Module with the same weights and math (`bench/bench_compiler.py`).",
        f"{instances} fresh sets of the models, built in turn in every order (where tensors land",
        f"in memory moves a step by a few percent); in each, the median of {reps} or more",
        f"interleaved repetitions (as many as fit in {seconds:g} s) timed by {clock}; each ratio",
        "is the median over the sets of that set's ratio. The control is a second copy of the",
        "hand-written model, so its ratio shows how",
        f"much two identical models differ on this machine. torch {torch.__version__}, "
        f"{torch.get_num_threads()} CPU thread(s), {platform.machine()}, load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end (other processes' load "
        "shows in the control column). Target: compiled / hand <= 1.01 on every row and "
        "<= 1.05 overall.",
        "",
        "| model | compiled (ms) | hand-written (ms) | compiled / hand | control / hand |",
        "|---|---:|---:|---:|---:|", *rows, "",
        verdict(ratios, overall), ""])
    replace_section(SECTION, body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15, help="timed steps per model per set")
    parser.add_argument("--instances", type=int, default=6,
                        help="fresh sets of the three models, built in every order in turn")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="time more steps than --reps where they fit in this, per set")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads (default: torch's own choice)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--only", default="", help="run only the rows whose name has this")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows, ratios = [], {}
    for name, cfg in CONFIGS.items():
        if args.only not in name:
            continue
        t = summary(bench(cfg, args.reps, args.instances, args.seconds))
        ratios[name] = t["ratio"]
        row = (f"| {name} | {t['compiled'] * 1e3:.1f} | {t['hand'] * 1e3:.1f} | "
               f"{t['ratio']:.3f} | {t['control_ratio']:.3f} |")
        print(row, flush=True)
        rows.append(row)
    overall = math.prod(ratios.values()) ** (1 / len(ratios))
    print(verdict(ratios, overall))
    if not args.no_write:
        write_section(rows, args.reps, args.instances, args.seconds, ratios, overall)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
