"""Dense against mixture-of-experts, at equal *active* parameters (each token runs through as
many weights as the dense FFN's) and at equal *total* parameters (the experts together hold the
dense FFN's weights), with the load balance the auxiliary loss buys."""
from __future__ import annotations

import json
from pathlib import Path

from ...graph import block_types as bt
from ...graph.schema import get_spec
from ...runs import RunFolder
from ...runs.disk import write_whole
from ...train.events import RouterMetrics, read_events
from . import register
from .course import blocks, setting
from .lesson import FAILS, HOLDS, UNDECIDED, Check, Lesson, Paper, Sample, higher, lower
from .measures import final_loss, unmeasured, variants
from .training import LESSON_TRAINING

KEY = "ffn_experts"
EXPERTS = 4
KINDS = ("dense", "moe-active", "moe-total", "moe-no-aux")
LABELS = {"dense": "dense", "moe-active": f"{EXPERTS} experts at equal active parameters",
          "moe-total": f"{EXPERTS} experts at equal total parameters",
          "moe-no-aux": f"{EXPERTS} experts at equal active parameters, no auxiliary loss"}
CLAIM = ("a mixture of experts buys quality per FLOP, not per parameter: at the dense model's "
         "active parameters (and FLOPs) it does better, at its total parameters it does not; "
         "the auxiliary loss keeps the router from sending most tokens to a few experts.")


@setting(KEY, KINDS)
def ffn_experts(graph, kind: str):
    """Every FFN as ``kind``: dense (unchanged), or a top-1 mixture of EXPERTS experts each as
    wide as the FFN (equal active parameters) or a quarter as wide (equal total parameters);
    moe-no-aux is moe-active without the load-balancing loss."""
    out = graph.clone()
    if kind == "dense":
        return out
    spec = get_spec(bt.MOE)
    for node in blocks(out, bt.FEED_FORWARD):
        ffn = node.typed_params()
        params = {"experts": EXPERTS, "top_k": 1,
                  "d_ff": ffn.d_ff // EXPERTS if kind == "moe-total" else ffn.d_ff,
                  "activation": ffn.activation, "bias": ffn.bias,
                  "aux_loss_weight": 0.0 if kind == "moe-no-aux" else
                  spec.param("aux_loss_weight").default}
        node.type, node.params = bt.MOE, {k: spec.param(k).coerce(v) for k, v in params.items()}
    return out


def imbalance(run) -> float | None:
    """The busiest expert's share of tokens times the number of experts (1: even; E: one
    expert takes everything), the worst layer, at the last logged step; None without routing
    events."""
    events = [e for e in read_events(RunFolder(run.run_dir).metrics_path)
              if isinstance(e, RouterMetrics)]
    if not events:
        return None
    loads = events[-1].expert_load.values()
    return max(max(load) * len(load) / max(sum(load), 1e-12) for load in loads if load)


def _imbalance(v) -> Sample | None:
    values = [imbalance(r) for r in v.runs]
    return Sample.of(values) if values and None not in values else None


def judge(c) -> list[Check]:
    v = variants(c, KEY)
    if not set(KINDS) <= set(v):
        return [Check("Dense and the three mixtures were trained", FAILS,
                      f"Only {', '.join(sorted(v)) or 'none'} finished.")]
    loss = {k: final_loss(v[k]) for k in KINDS}
    params = ", ".join(f"{k} {v[k].params:,}" for k in KINDS)
    flops = ", ".join(f"{k} {v[k].flops_per_token:,.0f}" for k in KINDS)
    active = lower(loss["moe-active"], loss["dense"])
    total = lower(loss["dense"], loss["moe-total"])
    total_words = {HOLDS: "dense is better: experts do not buy quality per parameter",
                   FAILS: "the mixture is better even at equal total parameters",
                   UNDECIDED: "the test does not separate the two"}[total.outcome]
    checks = [
        Check("At equal active parameters the mixture beats dense", active,
              f"Validation loss: mixture {loss['moe-active'].text()}, dense "
              f"{loss['dense'].text()} (FLOPs per token: {flops}; parameters: {params}).",
              tests=(active,)),
        Check("At equal total parameters it does not", total,
              f"Dense {loss['dense'].text()} against the mixture of narrow experts "
              f"{loss['moe-total'].text()}: {total_words}.", tests=(total,)),
    ]
    with_aux, without = _imbalance(v["moe-active"]), _imbalance(v["moe-no-aux"])
    if with_aux is not None and without is not None:
        tested = higher(without, with_aux, digits=2)
        checks.append(Check(
            "The auxiliary loss evens out the load", tested,
            f"Busiest expert's share times {EXPERTS} (1 is even, {EXPERTS} is one expert "
            f"taking every token), worst layer, last step: with the auxiliary loss "
            f"{with_aux.text(2)}, without {without.text(2)}.", tests=(tested,)))
    return checks


TOKENS_FILE, TOP = "expert_tokens.json", 4   # per run: each expert's commonest tokens


def measure(c, progress=lambda line: None) -> None:
    """Route each mixture run's validation text through its trained model and save, per layer
    and expert, its share of the router's picks and its commonest tokens (TOKENS_FILE)."""
    from ..course.experts import expert_tokens
    from ..splits import run_splits

    mixtures = [v for v in c.variants if v.name != f"{KEY}=dense"]
    for run, path in unmeasured(c, TOKENS_FILE, among=mixtures):
        progress(f"routing validation text through {run.run_dir}")
        folder = RunFolder(run.run_dir)
        model, tokenizer = folder.load_model(), folder.tokenizer()
        val = run_splits(folder).val
        layers = expert_tokens(model, val, folder.config().seq_len, top=TOP)
        name = lambda t: tokenizer.token_strings([t])[0]  # noqa: E731
        write_whole(path, json.dumps({layer: [
            {"expert": e.expert, "share": e.share,
             "top": [[name(t), n, of] for t, n, of in e.top]} for e in experts]
            for layer, experts in layers.items()}, indent=1))


def token_sentences(tables: dict[str, dict], seed: int) -> list[str]:
    """One sentence per mixture variant and layer: each expert's share of the picks and its
    commonest tokens, with how many of each token's occurrences it took (seed ``seed``)."""
    lines = []
    for variant, table in tables.items():
        for layer, experts in table.items():
            parts = []
            for e in experts:
                tokens = ", ".join(f"{name!r} {n} of {of}" for name, n, of in e["top"])
                parts.append(f"expert {e['expert']} {e['share']:.0%} ({tokens or 'no tokens'})")
            busiest = max(experts, key=lambda e: e["share"])
            lines.append(f"which tokens each expert takes, {variant}, {layer}, seed {seed}, "
                         f"validation text: " + "; ".join(parts) +
                         f"; the busiest is expert {busiest['expert']} with "
                         f"{busiest['share']:.0%} of the picks.")
    return lines


def notes(c) -> list[str]:
    tables, seed = {}, None
    for v in c.variants:
        runs = [r for r in v.runs if (Path(r.run_dir) / TOKENS_FILE).exists()]
        if runs:
            seed = runs[0].seed if seed is None else seed
            run = next((r for r in runs if r.seed == seed), runs[0])
            tables[LABELS[v.name.split("=", 1)[1]]] = json.loads(
                (Path(run.run_dir) / TOKENS_FILE).read_text("utf-8"))
    return token_sentences(tables, seed) if tables else []


PAPER = Paper(
    "Fedus et al. 2021, Switch Transformers",
    "top-1 routing (each token to one expert, its output weighted by the router's probability) "
    "with an auxiliary load-balancing loss gave up to 7x faster pre-training than dense T5 "
    "models at the same computation per token",
    "models built on T5-Base and T5-Large, pre-trained on C4, up to a trillion parameters")


register(Lesson(
    "experts", "Lesson: dense against mixture of experts", CLAIM,
    "project seed, the modern block (MoE)", "tiny-gpt",
    [(KEY, list(KINDS))], LESSON_TRAINING, judge, measure=measure, notes=notes,
    papers=(PAPER,),
    # a 0.1-nat gap worth teaching at the seeds' spread of 0.028-0.040 (docs/BENCHMARKS.md: dense
    # 1.279 ± 0.040, top-1 mixture 1.504 ± 0.028): Welch's power 0.66 / 0.90 at 3 / 4 seeds
    seeds=(1, 2, 3, 4)))
