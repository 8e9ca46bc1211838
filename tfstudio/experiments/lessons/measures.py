"""A comparison's numbers as per-seed samples, for the lessons' checks: final validation loss,
loss per position bucket, KV-cache bytes, the spread of gradient norms across layers."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Iterator

from ..results import Comparison, RunResult, VariantResult, seed_mean
from .lesson import Sample


def variants(c: Comparison, key: str) -> dict[str, VariantResult]:
    """{value: variant} for the variants named "KEY=value"."""
    return {v.name.split("=", 1)[1]: v for v in c.variants if v.name.startswith(key + "=")}


def unmeasured(c: Comparison, file: str, among: Iterable[VariantResult] | None = None
               ) -> Iterator[tuple[RunResult, Path]]:
    """Each run (of ``among``, else of every variant) whose folder holds no ``file`` yet, with
    that file's path: a lesson measures a trained run once and reads the file after."""
    for v in (c.variants if among is None else among):
        for run in v.runs:
            path = Path(run.run_dir) / file
            if not path.exists():
                yield run, path


def final_loss(v: VariantResult) -> Sample:
    return Sample.of(v.val_losses)


def bucket(v: VariantResult, i: int) -> Sample | None:
    """Loss in position bucket ``i`` over the seeds; None where a bucket could not be evaluated
    (past a learned table's rows) or no run has a length evaluation."""
    values = [r.lengths.buckets[i] for r in v.runs
              if r.lengths is not None and i < len(r.lengths.buckets)]
    if not values or any(x is None for x in values):
        return None
    return Sample.of(values)


def ratio(v: VariantResult, i: int, j: int) -> Sample | None:
    """Bucket ``i`` over bucket ``j``, seed by seed."""
    values = []
    for r in v.runs:
        b = r.lengths.buckets if r.lengths is not None else []
        if max(i, j) >= len(b) or b[i] is None or b[j] is None:
            return None
        values.append(b[i] / b[j])
    return Sample.of(values) if values else None


def kv_bytes(v: VariantResult) -> int | None:
    """The KV cache's measured bytes after one context length (the same for every seed)."""
    costs = [r.inference for r in v.runs if r.inference is not None]
    return costs[0].kv_bytes_measured if costs else None


def layer_spread(v: VariantResult, floor: float = 1e-12) -> Sample | None:
    """Largest over smallest gradient norm among the layers at the last logged step, seed by
    seed (a layer's norm below ``floor`` counts as ``floor``)."""
    values = []
    for r in v.runs:
        last = [series[-1][1] for layer, series in r.layer_grad_norms.items()
                if layer.startswith("layers.") and series]
        if last:
            values.append(max(last) / max(min(last), floor))
    return Sample.of(values) if values else None


def log_spread(v: VariantResult) -> Sample | None:
    """``layer_spread`` in log10, seed by seed: ratios that range over orders of magnitude are
    compared, and their spread taken, as powers of ten (one seed's vanished gradient would
    otherwise make the raw ratios' standard deviation swamp every difference)."""
    spread = layer_spread(v)
    return Sample.of([math.log10(x) for x in spread.values]) if spread else None


def factor(x: float) -> str:
    """×2.8, ×140, ×1.2e+05: a ratio as it is, never rounded to a power of ten."""
    return f"x{x:.2g}" if x < 10 else f"x{x:,.0f}" if x < 1e4 else f"x{x:.2g}"


LAST_SHARE = 0.25   # "the end" of a curve: its last quarter of steps


def late_slope(curve: list[tuple[int, float]], share: float = LAST_SHARE
               ) -> tuple[float, float, int] | None:
    """(slope per step, one-sided p that it is below zero, last step) of a straight line
    fitted to the curve's last ``share`` of steps; None with fewer than 4 points there. A
    curve still falling beyond its noise has a negative slope with p < ALPHA."""
    from scipy import stats

    if not curve:
        return None
    last = curve[-1][0]
    tail = [(s, x) for s, x in curve if s >= last * (1 - share) and math.isfinite(x)]
    if len(tail) < 4 or len({s for s, _ in tail}) < 2:
        return None
    fit = stats.linregress([s for s, _ in tail], [x for _, x in tail])
    if not math.isfinite(fit.pvalue):       # a curve flat to the last digit
        return 0.0, 1.0, last
    one_sided = fit.pvalue / 2 if fit.slope < 0 else 1 - fit.pvalue / 2
    return float(fit.slope), float(one_sided), last


def mean_curve(v: VariantResult) -> list[tuple[int, float]]:
    """The training-loss curve averaged over the seeds, step by step (steps every seed
    logged)."""
    return seed_mean([r.train_curve for r in v.runs])


def mean_val_curve(v: VariantResult) -> dict[int, float]:
    """{step: validation loss averaged over the seeds} at the steps every seed evaluated."""
    return dict(seed_mean([r.val_curve for r in v.runs]))


def order_settled(c: Comparison) -> tuple[int, int, tuple[str, str] | None] | None:
    """(step, last step, last swap) for the variants' order by mean validation loss: from
    ``step`` on, every evaluation ranks them as the last one does; ``last swap`` is the pair
    (later winner, earlier winner) whose places changed last (None when the order never
    changed). None with fewer than two variants or two shared evaluations."""
    curves = {v.name: mean_val_curve(v) for v in c.variants}
    steps = sorted(set.intersection(*(set(curve) for curve in curves.values()))) \
        if len(curves) > 1 else []
    if len(steps) < 2:
        return None
    orders = [sorted(curves, key=lambda name: curves[name][s]) for s in steps]
    settled = len(steps) - 1
    while settled > 0 and orders[settled - 1] == orders[-1]:
        settled -= 1
    if settled == 0:
        return steps[0], steps[-1], None
    before, after = orders[settled - 1], orders[settled]
    swapped = next((a, b) for a, b in ((x, y) for i, x in enumerate(after) for y in after[i + 1:])
                   if before.index(a) > before.index(b))
    return steps[settled], steps[-1], swapped


def more_steps(c: Comparison) -> str:
    """How to train four times longer than ``c`` did: "--budget 4x" for a lesson at its own
    steps, "--budget 16x" for one already at 4x, "--steps 1600" for a comparison of 400."""
    from . import LESSONS

    lesson = LESSONS.get(c.plan.lesson or "")
    steps = c.plan.config.steps
    if lesson is None or lesson.run is not None:
        return f"--steps {4 * steps}"
    return f"--budget {4 * steps / lesson.training['steps']:g}x"


def order_sentence(c: Comparison) -> str:
    """When the variants' order settled: "The order by validation loss settled at step 150 of
    400 ..." or that it changed until the last evaluation (more steps may change it)."""
    found = order_settled(c)
    if found is None:
        return ""
    step, last, swap = found
    if swap is None:
        return (f"The order by mean validation loss is the same at every evaluation from step "
                f"{step} to {last}.")
    passed = f"{swap[0]} passed {swap[1]}"
    if step == last:
        return (f"The order by mean validation loss had not settled by step {last}: {passed} "
                f"at the last evaluation, so more steps ({more_steps(c)}) may change it.")
    return (f"The order by mean validation loss settled at step {step} of {last} (the last "
            f"change: {passed}); every later evaluation ranks the variants the same.")


def still_learning(c: Comparison) -> list[tuple[str, float, float, int]]:
    """(variant, slope per 100 steps, p, last step) of each variant whose mean training loss
    still falls over the last quarter of its steps beyond its noise (p < ALPHA)."""
    from .significance import ALPHA

    found = []
    for v in c.variants:
        fit = late_slope(mean_curve(v))
        if fit is not None and fit[0] < 0 and fit[1] < ALPHA:
            found.append((v.name, 100 * fit[0], fit[1], fit[2]))
    return found


def still_learning_sentence(c: Comparison) -> str:
    """"Still learning at step 400: ..." naming each variant whose loss still falls at the
    end (its order against the others may change with more steps), or that none does."""
    from .significance import ALPHA

    if not any(late_slope(mean_curve(v)) for v in c.variants):
        return ""    # too few logged steps at the end to fit a line
    falling = still_learning(c)
    last = max((r.train_curve[-1][0] for v in c.variants for r in v.runs if r.train_curve),
               default=0)
    quarter = f"steps {round(last * (1 - LAST_SHARE))}-{last}"
    if not falling:
        return (f"Not learning any more at step {last}: no variant's training loss falls over "
                f"the last quarter ({quarter}) beyond its noise (a fitted line's slope, "
                f"p < {ALPHA:g}).")
    named = "; ".join(f"{name} ({slope:+.3f} per 100 steps, p = {p:.2g})"
                      for name, slope, p, _ in falling)
    then = "the order may change" if len(c.variants) > 1 else "its loss may fall further"
    return (f"Still learning at step {last}: the training loss of {named} still falls over "
            f"the last quarter ({quarter}) beyond its noise, so {then} with more steps "
            f"({more_steps(c)}).")


# Iglewicz & Hoaglin (1993): a value is an outlier when its modified z-score,
# 0.6745 |x - median| / MAD, exceeds 3.5; and only when it also lies FAR_SHARE from the median,
# so seeds that agree to the third decimal (a MAD near 0) do not flag a 1% difference
OUTLIER_Z = 3.5
FAR_SHARE = 0.1


def far_seeds(c: Comparison) -> list[tuple[str, int, float, float]]:
    """(variant, seed, final validation loss, the median of its variant's seeds) of each run
    far from its variant's other seeds (a stalled or diverged run among healthy ones), in
    variants of 3 or more seeds."""
    import statistics

    far = []
    for v in c.variants:
        losses = {r.seed: r.final_val_loss for r in v.runs if r.final_val_loss is not None}
        if len(losses) < 3:
            continue
        median = statistics.median(losses.values())
        mad = statistics.median(abs(x - median) for x in losses.values())
        for seed, loss in losses.items():
            gap = abs(loss - median)
            if gap >= FAR_SHARE * median and (mad == 0 or 0.6745 * gap / mad > OUTLIER_Z):
                far.append((v.name, seed, loss, median))
    return far


def far_seeds_sentence(c: Comparison) -> str:
    """"Far from its variant's other seeds: ..." naming each such run and that the tests count
    it, or "" when there is none."""
    far = far_seeds(c)
    if not far:
        return ""

    def plateau(loss: float) -> str:
        # the counted baseline the run sat near: a model that stayed on that plateau
        near = [(n, x) for n, x in (c.baselines or {}).items() if abs(loss - x) <= 0.1 * x]
        return "" if not near else f", near the {near[0][0]} counter's {near[0][1]:.3f}"
    named = "; ".join(f"{name} seed {seed} ended at {loss:.3f} against its seeds' median "
                      f"{median:.3f}{plateau(loss)}" for name, seed, loss, median in far)
    return (f"Far from its variant's other seeds (modified z-score above {OUTLIER_Z:g}, "
            f"Iglewicz & Hoaglin 1993): {named}. The tests count every seed, so a check on "
            f"{'that variant' if len({f[0] for f in far}) == 1 else 'those variants'} rests "
            "partly on a run that trained unlike the others at the same lr.")
