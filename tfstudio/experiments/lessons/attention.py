"""Multi-head, grouped-query and multi-query attention: the KV cache each keeps, measured on the
cache tensors, against the quality each reaches over the seeds."""
from __future__ import annotations

import json
from pathlib import Path

from ...graph.kinds import ATTENTION_KINDS, MHA, MQA
from ...runs.disk import write_whole
from . import register
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, Sample, both, fact, higher, lower
from .measures import final_loss, kv_bytes, variants
from .training import LESSON_TRAINING

# decode timing: a wider model than the lesson trains (speed needs no training), at contexts
# where the cache's reads dominate; 3 repeats give the spread
DECODE = dict(d_model=256, layers=4, heads=8)
CONTEXTS, NO_CACHE_CONTEXTS, REPEATS = (64, 512, 2048), (64, 512), 3
DECODE_FILE = "decode.json"

CLAIM = ("the KV cache per token is 2 x layers x kv_heads x head_dim x bytes, which is why "
         "MQA/GQA exist: fewer K/V heads shrink it, GQA the middle ground between MHA and MQA.")
KINDS = ATTENTION_KINDS


def judge(c) -> list[Check]:
    v = variants(c, "attention")
    if not set(KINDS) <= set(v):
        return [Check("MHA, GQA and MQA were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    checks = []
    kv = {k: kv_bytes(v[k]) for k in KINDS}
    if None not in kv.values():
        dtype = next(r.inference.dtype for r in v["mha"].runs if r.inference is not None)
        context = next(r.inference.context_length for r in v["mha"].runs
                       if r.inference is not None)
        # the cache's size follows from its tensors' shapes: a fact, not a finding
        checks.append(fact(
            "Fewer K/V heads shrink the KV cache", kv["mha"] > kv["gqa"] > kv["mqa"],
            f"Measured on the cache tensors after {context} tokens ({dtype}): MHA "
            f"{kv['mha']:,} bytes, GQA {kv['gqa']:,}, MQA {kv['mqa']:,}; "
            f"{kv['mha'] / kv['mqa']:.3g}:{kv['gqa'] / kv['mqa']:.3g}:1."))
    loss = {k: final_loss(v[k]) for k in KINDS}
    seen = f"Validation loss: MHA {loss['mha'].text()}, GQA {loss['gqa'].text()}, " \
           f"MQA {loss['mqa'].text()}."
    cost = higher(loss["mqa"], loss["mha"])
    cost_words = {HOLDS: "MQA pays for its smaller cache in quality",
                  FAILS: "MQA came out better than MHA, so sharing K/V cost nothing here",
                  UNDECIDED: "The test does not separate MQA from MHA, so no quality cost is "
                             "shown"}[cost.outcome]
    checks.append(Check("Sharing K/V heads costs some quality", cost,
                        f"{seen} {cost_words}.", tests=(cost,)))
    checks.append(middle_ground(loss, kv))
    decode = Path(c.out) / DECODE_FILE
    if decode.exists():
        checks.append(decode_check(json.loads(decode.read_text(encoding="utf-8"))))
    return checks


def middle_ground(loss: dict[str, Sample], kv: dict[str, int | None]) -> Check:
    """GQA lies between MHA and MQA in loss (and, where measured, in cache size): it holds when
    GQA's mean loss lies between theirs, fails when a test puts GQA outside both (worse than
    the worse, or better than the better), and is undecided when it lies outside but no test
    separates it."""
    worse, better = sorted((MHA, MQA), key=lambda k: loss[k].mean, reverse=True)
    above = higher(loss["gqa"], loss[worse]).named(f"GQA against {worse.upper()}")
    below = lower(loss["gqa"], loss[better]).named(f"GQA against {better.upper()}")
    inside = loss[better].mean <= loss["gqa"].mean <= loss[worse].mean
    cache = None not in kv.values() and kv["mha"] > kv["gqa"] > kv["mqa"]
    if inside:
        outcome, words = HOLDS, f"GQA's loss lies between {better.upper()}'s and {worse.upper()}'s"
    elif above.outcome == HOLDS:
        outcome, words = FAILS, f"GQA is worse than {worse.upper()}, the worse of the two"
    elif below.outcome == HOLDS:
        outcome, words = FAILS, f"GQA is better than {better.upper()}, the better of the two"
    else:
        outcome, words = UNDECIDED, "GQA's mean lies outside the two, within the seeds' noise"
    sizes = (f"; its cache ({kv['gqa']:,} bytes) lies between MHA's ({kv['mha']:,}) and MQA's "
             f"({kv['mqa']:,})" if cache else "")
    if None not in kv.values() and not cache:
        outcome, words = FAILS, words + "; but its cache does not lie between theirs"
    return Check("GQA is the middle ground between MHA and MQA (in loss and cache size)",
                 outcome, f"GQA {loss['gqa'].text()}, MHA {loss['mha'].text()}, MQA "
                 f"{loss['mqa'].text()}: {words}{sizes}.",
                 tests=(above, below),
                 why="GQA's mean lies outside MHA's and MQA's, but no test puts it outside")


def measure(c, progress=lambda line: None) -> None:
    """Time decoding for each attention kind (saved in DECODE_FILE; kept when there)."""
    path = Path(c.out) / DECODE_FILE
    if path.exists():
        return
    import torch

    from ... import load_graph
    from ...compiler import compile_graph
    from ..inference import decode_graph, decode_ms_per_token
    rows = []
    for kind in KINDS:
        progress(f"timing decode of {kind} at contexts {', '.join(map(str, CONTEXTS))}")
        graph = decode_graph(load_graph("tiny-gpt"), kind, max_len=2 * max(CONTEXTS), **DECODE)
        torch.manual_seed(0)
        model = compile_graph(graph).eval()
        for context in CONTEXTS:
            for cache in (True, False):
                if not cache and context not in NO_CACHE_CONTEXTS:
                    continue
                ms = [decode_ms_per_token(model, context, use_cache=cache)
                      for _ in range(REPEATS if cache else 1)]
                rows.append({"kind": kind, "context": context, "cache": cache, "ms": ms})
    write_whole(path, json.dumps({**DECODE, "dtype": "float32",
                                  "threads": torch.get_num_threads(), "rows": rows}, indent=1))


def decode_check(data: dict) -> Check:
    """MQA and GQA against MHA at the longest context with the cache, plus what the cache
    itself saves at the longest context timed without it."""
    ms = {(r["kind"], r["context"], r["cache"]): Sample.of(r["ms"]) for r in data["rows"]}
    top = max(r["context"] for r in data["rows"])
    mha, gqa, mqa = (ms[(k, top, True)] for k in KINDS)
    tests = (lower(mqa, mha, digits=1).named("MQA against MHA"),
             lower(gqa, mha, digits=1).named("GQA against MHA"))
    outcome = both(*tests)
    recompute = max((r["context"] for r in data["rows"] if not r["cache"]), default=None)
    saved = ""
    if recompute is not None:
        with_cache, without = ms[("mha", recompute, True)], ms[("mha", recompute, False)]
        saved = (f" Without the cache, MHA recomputes the prefix: {without.mean:.0f} ms/token "
                 f"at context {recompute} against {with_cache.mean:.0f} with it.")
    at = ", ".join(f"{k.upper()} " + " / ".join(ms[(k, c, True)].text(1) for c in
                   sorted({r['context'] for r in data['rows']})) for k in KINDS)
    contexts = " / ".join(map(str, sorted({r["context"] for r in data["rows"]})))
    return Check(
        f"Fewer K/V heads decode faster where the cache dominates (context {top})", outcome,
        f"Decode ms/token with the cache at contexts {contexts} (d_model {data['d_model']}, "
        f"{data['layers']} layers, {data['heads']} query heads, {data['dtype']}, "
        f"{data['threads']} thread, untrained weights): {at}.{saved}", tests=tests)


PAPERS = (
    Paper("Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need",
          "multi-query attention (one K/V head shared by every query head) decoded much faster "
          "than multi-head attention with only a minor loss of quality (slightly worse "
          "perplexity) on WMT 2014 English-German and the billion-word language-model benchmark",
          "Transformer translation and language models",
          checks=("Sharing K/V heads costs some quality",)),
    Paper("Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models from "
          "Multi-Head Checkpoints",
          "grouped-query attention, uptrained from a multi-head checkpoint with 5% of the "
          "pre-training compute, reached quality close to multi-head attention at a speed "
          "close to multi-query attention",
          "T5 checkpoints uptrained to MQA and GQA",
          checks=("GQA is the middle ground between MHA and MQA (in loss and cache size)",)),
)


register(Lesson(
    "attention", "Lesson: multi-head, grouped-query and multi-query attention", CLAIM,
    "project seed, section 3, Attention", "tiny-gpt",
    [("attention", list(KINDS))], LESSON_TRAINING, judge, measure=measure, papers=PAPERS,
    # a quality cost worth teaching is 0.1 nats; the seeds spread 0.047 (issue 38's MHA, GQA
    # and MQA at 400 steps), and Welch's t finds 0.1 with 80% power from 5 seeds
    # (significance.seeds_needed(0.1, 0.047) = 5; 3 seeds detect 0.166)
    seeds=(1, 2, 3, 4, 5)))
