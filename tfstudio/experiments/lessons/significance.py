"""The lessons' decision rule: a two-sided t-test at ALPHA, its 95% interval and p-value, and the
smallest difference the seeds could have detected.

Between two variants: Welch's t (scipy.stats.ttest_ind, equal_var=False). Variants that are
different models share a seed's batch order but not its weights, so pairing by seed buys little,
and with 3 seeds a paired test has 2 degrees of freedom where Welch's has up to 4; ``paired=True``
(scipy.stats.ttest_rel) is for one model per seed measured several ways (the sampling lesson's
settings, the vectors lesson's layers, the interpolation lesson's scalings of one short model).
Against a fixed number (a counted baseline, a ratio of 1): the one-sample t
(scipy.stats.ttest_1samp). A difference decides a check when p < ALPHA: the check holds when the
difference lies the claimed way and fails when it lies the other way, so a true difference of zero
decides either way 5% of the time. A claim over several buckets tests each bucket and corrects
for their number with Holm's step-down (``holm``).

An undecided test states its minimum detectable difference: the true difference that the same
test, with these seeds and the observed spread, would find with POWER probability (the noncentral
t, scipy.stats.nct, for one-sample and paired tests; for Welch's, whose degrees of freedom are
themselves estimated, a fixed set of simulated experiments).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"
ALPHA, POWER = 0.05, 0.80


@dataclass(frozen=True)
class Test:
    """One difference, tested: ``a`` minus ``b`` (or minus the fixed number)."""
    kind: str              # "Welch's t", "paired t" or "one-sample t"
    difference: float      # mean of a minus mean of b
    low: float             # its 95% confidence interval
    high: float
    p: float               # two-sided
    n: tuple[int, ...]     # seeds behind each side (one entry against a fixed number)
    # what the power behind ``detectable`` needs: ("welch", sd_a, sd_b, n_a, n_b) or
    # ("t", se, df); () where one seed leaves nothing to test
    spread: tuple = ()
    claimed: int = -1      # the sign the claim needs (-1: a below b, +1: a above b, 0: equal)
    alpha: float = ALPHA   # the threshold (Holm lowers it)
    family: int = 1        # how many tests the threshold was corrected for
    digits: int = 3
    unit: str = "seed"     # what n counts
    label: str = ""        # what it compares, where a check quotes several ("RoPE at 64-127")
    stopped: bool = False  # Holm's step-down stopped before it: undecided whatever its p

    @property
    def tested(self) -> bool:
        return bool(self.spread)

    @property
    def decided(self) -> bool:
        return self.tested and not self.stopped and self.p < self.alpha

    @property
    def detectable(self) -> float | None:
        """The smallest true difference this test finds with POWER chance at the observed
        spread (None: untested)."""
        if not self.spread:
            return None
        if self.spread[0] == "welch":
            return welch_detectable(*self.spread[1:], self.alpha)
        return detectable(*self.spread[1:], self.alpha)

    @property
    def outcome(self) -> str:
        if not self.decided:
            return UNDECIDED
        return HOLDS if math.copysign(1, self.difference) == self.claimed else FAILS

    def named(self, label: str) -> "Test":
        return dataclasses.replace(self, label=label)

    def flipped(self) -> "Test":
        """The same test of the claim that ``a`` lies the other way."""
        return dataclasses.replace(self, claimed=-self.claimed)

    def seeds(self) -> str:
        """"n=3 seeds each", "n=3 and 2 seeds", "n=15 runs"."""
        if len(self.n) == 1 or len(set(self.n)) == 1:
            return f"n={self.n[0]} {self.unit}" + ("" if self.n[0] == 1 else "s") + \
                ("" if len(self.n) == 1 else " each")
        return "n=" + " and ".join(map(str, self.n)) + f" {self.unit}s"

    def why_undecided(self) -> str:
        """What left it undecided, for the check's label."""
        if not self.tested:
            return f"one {self.unit}: no spread to test against"
        if self.stopped and self.p < self.alpha:
            return (f"p {_p(self.p)}, but Holm's step-down over {self.family} tests stopped at a "
                    f"smaller p; {self.seeds()}")
        corrected = f", Holm over {self.family}" if self.family > 1 else ""
        return f"p {_p(self.p)}, not below {self.alpha:.3g}{corrected}; {self.seeds()}"

    def text(self) -> str:
        """'difference -0.190 (95% CI -0.221 to -0.159), Welch's t p = 0.0003, n=3 seeds each'
        and, when undecided, the difference these seeds could have detected."""
        d = self.digits
        if not self.tested:
            return f"difference {self.difference:+.{d}f}, untested ({self.seeds()}: no spread)"
        threshold = (f" against Holm's threshold {self.alpha:.3g} for {self.family} tests"
                     if self.family > 1 else "")
        line = (f"difference {self.difference:+.{d}f} (95% CI {self.low:+.{d}f} to "
                f"{self.high:+.{d}f}), {self.kind} p {_p(self.p)}{threshold}, {self.seeds()}")
        if not self.decided:
            line += (f"; these seeds would detect a difference of {self.detectable:.{d}f} or "
                     f"more with {POWER:.0%} power")
        return line


def _p(p: float) -> str:
    """"< 0.0001" or "= 0.021"."""
    return "< 0.0001" if p < 1e-4 else f"= {p:.2g}"


def t_test(a: Sequence[float], b: Sequence[float] | float, *, claimed: int = -1,
         paired: bool = False, alpha: float = ALPHA, digits: int = 3) -> Test:
    """``a`` against ``b`` (values over seeds, or a fixed number), two-sided. ``claimed`` is the
    sign of a - b the claim needs."""
    from scipy import stats  # here, not with the lessons: 0.7 s of CPU, twice the lessons

    a = [float(x) for x in a]
    fixed = isinstance(b, numbers.Real)
    b_values = [float(b)] if fixed else [float(x) for x in b]
    mean_a, mean_b = sum(a) / len(a), sum(b_values) / len(b_values)
    diff = mean_a - mean_b
    if fixed:
        kind, n = "one-sample t", (len(a),)
        if len(a) < 2:
            return Test(kind, diff, diff, diff, 1.0, n, (), claimed, alpha, 1, digits)
        df, se = len(a) - 1, _sd(a) / math.sqrt(len(a))
        run = lambda: stats.ttest_1samp(a, mean_b)  # noqa: E731
        spread = ("t", se, df)
    elif paired:
        if len(a) != len(b_values):
            raise ValueError("a paired test needs one value per seed on both sides")
        kind, n = "paired t", (len(a),)
        deltas = [x - y for x, y in zip(a, b_values)]
        if len(a) < 2:
            return Test(kind, diff, diff, diff, 1.0, n, (), claimed, alpha, 1, digits)
        df, se = len(a) - 1, _sd(deltas) / math.sqrt(len(a))
        run = lambda: stats.ttest_rel(a, b_values)  # noqa: E731
        spread = ("t", se, df)
    else:
        kind, n = "Welch's t", (len(a), len(b_values))
        if min(n) < 2:
            return Test(kind, diff, diff, diff, 1.0, n, (), claimed, alpha, 1, digits)
        va, vb = _sd(a) ** 2 / len(a), _sd(b_values) ** 2 / len(b_values)
        se = math.sqrt(va + vb)
        df = ((va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b_values) - 1))
              if se > 0 else len(a) + len(b_values) - 2)
        run = lambda: stats.ttest_ind(a, b_values, equal_var=False)  # noqa: E731
        spread = ("welch", _sd(a), _sd(b_values), *n)
    if se == 0 or se < 1e-12 * max(abs(mean_a), abs(mean_b), 1e-300):
        # every seed gave the same value: the difference is exact
        p = 1.0 if diff == 0 else 0.0
        return Test(kind, diff, diff, diff, p, n, ("t", 0.0, df), claimed, alpha, 1, digits)
    with warnings.catch_warnings():
        # seeds that agree to many digits make scipy warn of lost precision; the p-value of
        # such a difference is ~0 or ~1 either way
        warnings.simplefilter("ignore", RuntimeWarning)
        result = run()
    half = stats.t.ppf(0.975, df) * se
    return Test(kind, diff, float(diff - half), float(diff + half), float(result.pvalue), n,
                spread, claimed, alpha, 1, digits)


def _sd(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1))


def power(effect: float, se: float, df: float, alpha: float = ALPHA) -> float:
    """The chance a two-sided t-test at ``alpha`` with a known ``df`` (one-sample or paired:
    n - 1) finds a true difference ``effect`` whose estimate has standard error ``se``: the
    noncentral t (exact for normal data)."""
    from scipy import stats  # here, not with the lessons: 0.7 s of CPU, twice the lessons

    crit = stats.t.ppf(1 - alpha / 2, df)
    shift = effect / se
    upper, lower = stats.nct.sf(crit, df, shift), stats.nct.cdf(-crit, df, shift)
    # scipy's nct gives nan far in its tails, where the probabilities are 1 and 0
    return float(np.nan_to_num(upper, nan=1.0) + np.nan_to_num(lower, nan=0.0))


DRAWS = 20_000   # simulated experiments behind a Welch power (Monte Carlo error < 0.003)


@functools.lru_cache(maxsize=256)
def _welch_margins(sd_a: float, sd_b: float, n_a: int, n_b: int, alpha: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """For DRAWS simulated experiments with these spreads and seeds: each one's noise in the
    difference of means, and the margin its Welch test needs (t quantile at its own estimated
    degrees of freedom times its own standard error). Welch's test rejects a true difference e
    exactly where |e + noise| > margin, so one set of draws gives the power at every e."""
    from scipy import stats  # here, not with the lessons: 0.7 s of CPU, twice the lessons

    rng = np.random.default_rng(20_260_000 + 1_000 * n_a + n_b)
    za, zb = rng.standard_normal((DRAWS, n_a)), rng.standard_normal((DRAWS, n_b))
    va = sd_a ** 2 * za.var(axis=1, ddof=1) / n_a
    vb = sd_b ** 2 * zb.var(axis=1, ddof=1) / n_b
    noise = sd_a * za.mean(axis=1) - sd_b * zb.mean(axis=1)
    df = (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))
    return noise, stats.t.ppf(1 - alpha / 2, df) * np.sqrt(va + vb)


def welch_power(effect: float, sd_a: float, sd_b: float, n_a: int, n_b: int,
                alpha: float = ALPHA) -> float:
    """The chance Welch's t at ``alpha`` finds a true difference ``effect`` between two
    variants whose seeds spread ``sd_a`` and ``sd_b``, with ``n_a`` and ``n_b`` seeds: simulated
    (its estimated degrees of freedom make the noncentral t overstate it by up to 0.3 at 2-3
    seeds), from DRAWS fixed draws, so the same question always gets the same answer."""
    noise, margin = _welch_margins(float(sd_a), float(sd_b), int(n_a), int(n_b), alpha)
    return float(np.mean(np.abs(effect + noise) > margin))


def _smallest(power_at, scale: float, target: float) -> float:
    """The smallest effect at which ``power_at(effect)`` reaches ``target`` (power rises with
    the effect), by bisection."""
    low, high = 0.0, scale
    while power_at(high) < target:
        low, high = high, 2 * high
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if power_at(mid) < target else (low, mid)
    return high


def detectable(se: float, df: float, alpha: float = ALPHA, target: float = POWER) -> float:
    """The smallest true difference a one-sample or paired t finds with ``target`` chance."""
    if se <= 0:
        return 0.0
    return _smallest(lambda e: power(e, se, df, alpha), se, target)


@functools.lru_cache(maxsize=1024)
def welch_detectable(sd_a: float, sd_b: float, n_a: int, n_b: int, alpha: float = ALPHA,
                     target: float = POWER) -> float:
    """The smallest true difference Welch's t finds with ``target`` chance."""
    if sd_a <= 0 and sd_b <= 0:
        return 0.0
    se = math.sqrt(sd_a ** 2 / n_a + sd_b ** 2 / n_b)
    return _smallest(lambda e: welch_power(e, sd_a, sd_b, n_a, n_b, alpha), se, target)


def seeds_needed(effect: float, sd: float, *, target: float = POWER, alpha: float = ALPHA,
                 fixed: bool = False, most: int = 20) -> int:
    """The fewest seeds per variant with which Welch's t between two variants spread ``sd``
    each (or the one-sample t against a fixed number) finds a true ``effect`` with ``target``
    chance; ``most + 1`` when even ``most`` seeds do not."""
    for n in range(2, most + 1):
        found = (power(effect, sd / math.sqrt(n), n - 1, alpha) if fixed else
                 welch_power(effect, sd, sd, n, n, alpha))
        if found >= target:
            return n
    return most + 1


def holm(tests: Sequence[Test], alpha: float = ALPHA) -> list[Test]:
    """Holm's step-down over ``tests`` (one claim over several buckets): the k-th smallest
    p-value is held to alpha / (m - k + 1) and, once one is not below it, no later one decides.
    Returns the tests in their order with their thresholds set."""
    m = len(tests)
    order = sorted(range(m), key=lambda i: tests[i].p)
    out: list[Test | None] = [None] * m
    stopped = False
    for rank, i in enumerate(order):
        threshold = alpha / (m - rank)
        # once a step is not below its threshold, every later one stays undecided
        stopped = stopped or not tests[i].p < threshold
        out[i] = dataclasses.replace(tests[i], family=m, alpha=threshold, stopped=stopped)
    return [t for t in out if t is not None]
