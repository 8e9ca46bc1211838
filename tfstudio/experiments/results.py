"""A comparison's numbers, read back from its run folders (metrics.jsonl, graph.json) and the
measurements stored next to them (lengths.json, inference.json; made here when missing, so
runs trained elsewhere can be collected). The report is written from these, never from memory
of the training, so it always says what the folders hold."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..graph.cost import estimate_cost
from ..runs import RunFolder
from ..train.events import read_events
from . import lengths
from .baselines import ngram_cross_entropies
from .runner import Plan, RunSpec, is_finished, read_plan, run_specs, variant_lr
from .splits import run_splits

if TYPE_CHECKING:
    from .inference import InferenceCost

# the dtype the report's predicted KV bytes are counted in: the runs' own on a CPU
COST_DTYPE = "float32"


@dataclass
class RunResult:
    seed: int
    run_dir: Path
    params: int
    train_curve: list[tuple[int, float]]        # (step, training loss)
    val_curve: list[tuple[int, float]]          # (step, validation loss)
    layer_grad_norms: dict[str, list[tuple[int, float]]]
    tokens_per_s: float                         # median over the logged steps
    lengths: lengths.LengthEval | None = None
    inference: InferenceCost | None = None
    val_accuracy: list[tuple[int, float]] = field(default_factory=list)  # a task's answers

    @property
    def final_val_loss(self) -> float | None:
        return self.val_curve[-1][1] if self.val_curve else None

    @property
    def final_accuracy(self) -> float | None:
        return self.val_accuracy[-1][1] if self.val_accuracy else None

    def steps_to(self, target: float) -> int | None:
        return next((step for step, loss in self.val_curve if loss <= target), None)


@dataclass
class VariantResult:
    name: str
    slug: str
    runs: list[RunResult]
    flops_per_token: float
    kv_bytes_per_token: int                     # cost model, in COST_DTYPE

    def mean(self, values: list[float]) -> float | None:
        return statistics.fmean(values) if values else None

    @property
    def val_losses(self) -> list[float]:
        return [r.final_val_loss for r in self.runs if r.final_val_loss is not None]

    @property
    def val_loss(self) -> float | None:
        return self.mean(self.val_losses)

    @property
    def val_spread(self) -> float | None:
        """Sample standard deviation over seeds (None with one seed)."""
        values = self.val_losses
        return statistics.stdev(values) if len(values) > 1 else None

    @property
    def accuracies(self) -> list[float]:
        """Final answer-token accuracy of each seed (runs on a synthetic task)."""
        return [r.final_accuracy for r in self.runs if r.final_accuracy is not None]

    @property
    def params(self) -> int:
        return self.runs[0].params

    @property
    def tokens_per_s(self) -> float:
        return statistics.fmean(r.tokens_per_s for r in self.runs)

    def mean_lengths(self) -> lengths.LengthEval | None:
        """The seeds' length evaluations averaged position by position."""
        evals = [r.lengths for r in self.runs if r.lengths is not None]
        if not evals:
            return None
        first = evals[0]
        n = min(len(e.per_position) for e in evals)
        curve = [statistics.fmean(e.per_position[i] for e in evals) for i in range(n)]
        mean = lengths.LengthEval(first.train_length, first.lengths, [], curve,
                                  sum(e.windows for e in evals), first.limit,
                                  notes=list(first.notes))
        return mean.rebucket(first.warmup)


@dataclass
class Comparison:
    out: Path
    plan: Plan
    variants: list[VariantResult]
    baselines: dict[str, float]
    target_loss: float | None
    missing: list[RunSpec] = field(default_factory=list)
    counted_tokens: int = 0       # the training split the n-gram baselines are counted on

    def token_budget(self) -> str:
        """The tokens each network trains on against those the counted baselines count
        ("" without baselines): the trigram counts the whole training split once, a network
        sees steps x batch x length tokens, so the two budgets differ."""
        cfg = self.plan.config
        seen = cfg.steps * cfg.batch_size * cfg.seq_len
        if not self.baselines or not self.counted_tokens or not seen:
            return ""
        ratio = self.counted_tokens / seen
        return (f"Token budget: each network trains on {seen:,} tokens ({cfg.steps} steps x "
                f"{cfg.batch_size} x {cfg.seq_len}); the counted n-gram baselines count every "
                f"token of the training split, {self.counted_tokens:,}, "
                f"{ratio:.1f}x {'as many' if ratio >= 1 else 'of it'}.")

    def lrs(self) -> dict[str, float]:
        """The variants with their own lr (from an lr sweep), by name; the others train at
        the plan's shared lr."""
        return {v["name"]: variant_lr(self.plan, v) for v in self.plan.variants if "lr" in v}

    def lr_text(self) -> str:
        """"lr 0.003" when every variant shares it, else each swept variant's own lr (and
        the shared one of those not swept)."""
        own = self.lrs()
        if not own:
            return f"lr {self.plan.config.lr:g}"
        shared = [v["name"] for v in self.plan.variants if v["name"] not in own]
        text = "each variant at its own best lr from an lr sweep (" + \
            ", ".join(f"{name} {lr:g}" for name, lr in own.items()) + ")"
        if shared:
            text += f"; not swept, at lr {self.plan.config.lr:g}: {', '.join(shared)}"
        return text


def is_task(corpus: str) -> bool:
    """A synthetic task (scored on its answer tokens, with no token stream for n-gram
    baselines or loss by position)."""
    from ..data import load_corpus
    return load_corpus(corpus).task is not None


def read_run(spec: RunSpec) -> RunResult:
    events = read_events(RunFolder(spec.run_dir).metrics_path)
    started = next(e for e in events if e.kind == "Started")
    steps = [e for e in events if e.kind == "StepMetrics"]
    norms: dict[str, list[tuple[int, float]]] = {}
    for e in steps:
        for layer, value in e.layer_grad_norms.items():
            norms.setdefault(layer, []).append((e.step, value))
    speeds = [e.tokens_per_s for e in steps[1:]] or [e.tokens_per_s for e in steps]
    evals = [e for e in events if e.kind == "EvalMetrics"]
    return RunResult(spec.seed, spec.run_dir, started.params,
                     [(e.step, e.loss) for e in steps], [(e.step, e.val_loss) for e in evals],
                     norms, statistics.median(speeds) if speeds else 0.0,
                     val_accuracy=[(e.step, e.accuracy) for e in evals
                                   if e.accuracy is not None])


def measure(run: RunResult, eval_lengths: list[int], with_inference: bool = True) -> None:
    """Fill ``run``'s length evaluation and inference cost, from their files or measured now
    (and saved for next time)."""
    if eval_lengths:
        path = lengths.result_path(run.run_dir)
        stored = lengths.load(path) if path.exists() else None
        if stored is None or stored.lengths != eval_lengths or stored.rope_scaling != 1.0:
            stored = lengths.evaluate_run(run.run_dir, eval_lengths)
            lengths.save(stored, path)
        warmup = lengths.warmup_positions(stored.train_length, stored.lengths[0])
        if stored.warmup != warmup:  # measured before warm-up was set apart: same curve
            lengths.save(stored.rebucket(warmup), path)
        run.lengths = stored
    if with_inference:
        from . import inference  # measuring imports torch; reading results needs none

        path = inference.result_path(run.run_dir)
        if path.exists():
            run.inference = inference.load(path)
        else:
            run.inference = inference.measure_run(run.run_dir)
            inference.save(run.inference, path)


def collect(out: Path, *, target_loss: float | None = None, with_inference: bool = True,
            progress=lambda line: None) -> Comparison:
    """Read every finished run of the comparison in ``out`` (measuring what is missing)."""
    plan = read_plan(out)
    variants, missing, baselines, counted = [], [], {}, 0
    for entry in plan.variants:
        specs = run_specs(out, plan, only={entry["slug"]})
        done = [s for s in specs if is_finished(s.run_dir, s.config.steps)]
        missing += [s for s in specs if s not in done]
        if not done:
            continue
        runs = []
        for spec in done:
            progress(f"measuring {spec.variant} (seed {spec.seed})")
            run = read_run(spec)
            measure(run, plan.eval_lengths, with_inference)
            runs.append(run)
        graph = RunFolder(done[0].run_dir).graph()
        cost = estimate_cost(graph, context_length=plan.config.seq_len, dtype=COST_DTYPE)
        variants.append(VariantResult(entry["name"], entry["slug"], runs, cost.flops_per_token,
                                      cost.kv_cache_bytes_per_token))
        if not baselines and not is_task(plan.config.corpus):
            splits = run_splits(RunFolder(done[0].run_dir))
            baselines = ngram_cross_entropies(splits.train, splits.val, splits.vocab_size)
            counted = len(splits.train)
    if target_loss is None and variants:
        finals = [v.val_loss for v in variants if v.val_loss is not None]
        target_loss = max(finals) if finals else None
    return Comparison(Path(out), plan, variants, baselines, target_loss, missing, counted)


def seed_mean(curves: list[list[tuple[int, float]]]) -> list[tuple[int, float]]:
    """Average of the seeds' curves at the steps they all logged."""
    if not curves:
        return []
    common = set.intersection(*[{s for s, _ in curve} for curve in curves])
    by_step = [dict(curve) for curve in curves]
    return [(s, sum(d[s] for d in by_step) / len(by_step)) for s in sorted(common)]
