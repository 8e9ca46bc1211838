"""Loss against parameters: the power law L(N) = a N^(-alpha) fitted on logs.

log L = log a - alpha log N is a straight line, fitted by ordinary least squares (numpy) over
every (N, loss) point given, seeds included. The interval is the slope's 95% confidence interval
from Student's t with n - 2 degrees of freedom (the textbook standard error of an OLS slope). A
pure power law has no floor: Kaplan et al. (2020) fit this form to the non-embedding parameter
count well above the loss a corpus's entropy sets, which a few tiny widths are not; the lesson
reports the fit and its interval, not a law.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# Student's t, two-sided 95% (the 0.975 quantile), by degrees of freedom; past 30, 1.96 + 2.4/df
# is within 0.002 of the table's values.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
        25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042}


def t975(df: int) -> float:
    if df < 1:
        raise ValueError("a confidence interval needs at least one degree of freedom")
    return T975.get(df, 1.96 + 2.4 / df)


@dataclass(frozen=True)
class PowerLaw:
    """L(N) = coefficient * N^(-exponent), with the exponent's 95% interval."""
    exponent: float
    interval: tuple[float, float]
    coefficient: float
    r_squared: float
    points: int

    def predict(self, n: float) -> float:
        return self.coefficient * n ** (-self.exponent)

    def text(self) -> str:
        lo, hi = self.interval
        return (f"L = {self.coefficient:.3g} N^-{self.exponent:.3f} (exponent 95% interval "
                f"{lo:.3f} to {hi:.3f}, R² {self.r_squared:.3f}, {self.points} runs)")


def fit_power_law(params: Sequence[float], losses: Sequence[float]) -> PowerLaw:
    """Fit L = a N^-alpha to (params[i], losses[i]). Needs at least 3 points at 2 sizes or
    more, all positive."""
    n = np.asarray(params, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    if n.shape != loss.shape or n.ndim != 1:
        raise ValueError("give one loss per parameter count")
    if len(n) < 3:
        raise ValueError(f"a power-law fit with an interval needs at least 3 runs; got {len(n)}")
    if not (np.all(n > 0) and np.all(loss > 0) and np.all(np.isfinite(loss))):
        raise ValueError("parameter counts and losses must be positive and finite to take logs")
    if len(np.unique(n)) < 2:
        raise ValueError("every run has the same parameter count; a fit needs two sizes or more")
    x, y = np.log(n), np.log(loss)
    design = np.stack([np.ones_like(x), x], axis=1)
    (intercept, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - (intercept + slope * x)
    df = len(x) - 2
    sxx = float(((x - x.mean()) ** 2).sum())
    se = math.sqrt(float((residuals ** 2).sum()) / df / sxx)
    half = t975(df) * se
    return PowerLaw(-float(slope), (-float(slope) - half, -float(slope) + half),
                    math.exp(float(intercept)), r_squared(y, residuals), len(x))


def r_squared(y: np.ndarray, residuals: np.ndarray) -> float:
    """The share of ``y``'s variance a fit explains (1 when ``y`` does not vary)."""
    total = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float((residuals ** 2).sum()) / total if total > 0 else 1.0


@dataclass(frozen=True)
class Curvature:
    """How far log L against log N bends: the quadratic term of log L = b0 + b1 x + b2 x^2
    (x = log N, centred), as the change in the local exponent -dlog L/dlog N from the
    smallest model to the largest, with its 95% interval and two-sided p (Student's t, n - 3
    degrees of freedom). A power law has none; a curve that flattens toward a floor
    (L = E + a N^-alpha) loses exponent as N grows (a negative change), one that steepens
    gains it."""
    change: float                 # local exponent at the largest N minus at the smallest
    interval: tuple[float, float]
    p: float
    se: float                     # the change's standard error
    df: int
    start: float                  # the fitted local exponent at the smallest and largest N
    end: float


def fit_curvature(params: Sequence[float], losses: Sequence[float]) -> Curvature:
    """Fit the quadratic in log-log to (params[i], losses[i]); needs three sizes or more and
    at least four runs."""
    from scipy import stats

    n = np.asarray(params, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    if len(np.unique(n)) < 3 or len(n) < 4:
        raise ValueError("a bend needs at least three sizes and four runs")
    if not (np.all(n > 0) and np.all(loss > 0) and np.all(np.isfinite(loss))):
        raise ValueError("parameter counts and losses must be positive and finite to take logs")
    x = np.log(n) - np.log(n).mean()
    y = np.log(loss)
    design = np.stack([np.ones_like(x), x, x ** 2], axis=1)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ coef
    df = len(x) - 3
    sigma2 = float((residuals ** 2).sum()) / df
    cov = sigma2 * np.linalg.inv(design.T @ design)
    span = float(x.max() - x.min())
    # local exponent at x: -(b1 + 2 b2 x); its change over the range: -2 b2 span
    change, se = -2 * coef[2] * span, 2 * span * math.sqrt(max(float(cov[2, 2]), 0.0))
    half = float(stats.t.ppf(0.975, df)) * se
    if se > 0:
        p = float(2 * stats.t.sf(abs(change) / se, df))
    else:
        p = 1.0 if change == 0 else 0.0
    local = lambda at: -(coef[1] + 2 * coef[2] * at)  # noqa: E731
    return Curvature(float(change), (float(change - half), float(change + half)), p, float(se),
                     df, float(local(x.min())), float(local(x.max())))


def local_exponents(sizes: Sequence[float], mean_losses: Sequence[float]) -> list[float]:
    """-dlog L / dlog N between each pair of neighbouring sizes (a power law's are equal)."""
    return [-(math.log(b) - math.log(a)) / (math.log(m) - math.log(n))
            for n, m, a, b in zip(sizes, sizes[1:], mean_losses, mean_losses[1:])]


@dataclass(frozen=True)
class FlooredLaw:
    """L(N) = floor + coefficient * N^(-exponent): a power law that levels off at a floor (the
    loss no size gets below at this budget; Hoffmann et al. 2022's E in their L(N, D)), fitted
    to log L by least squares, with 95% intervals (Student's t, n - 3 degrees of freedom) and
    R² on log L, so it compares with PowerLaw's."""
    floor: float
    floor_interval: tuple[float, float]
    exponent: float
    exponent_interval: tuple[float, float]
    coefficient: float
    r_squared: float
    points: int

    def predict(self, n: float) -> float:
        return self.floor + self.coefficient * n ** (-self.exponent)

    def text(self) -> str:
        (flo, fhi), (elo, ehi) = self.floor_interval, self.exponent_interval
        return (f"L = {self.floor:.3f} + {self.coefficient:.3g} N^-{self.exponent:.3f} (floor "
                f"95% interval {flo:.3f} to {fhi:.3f}, exponent {elo:.2f} to {ehi:.2f}, R² "
                f"{self.r_squared:.3f}, {self.points} runs)")


def fit_with_floor(params: Sequence[float], losses: Sequence[float]) -> FlooredLaw:
    """Fit L = E + A N^-alpha to (params[i], losses[i]) (scipy's curve_fit on log L, E >= 0).
    Needs three sizes or more and at least four runs; ValueError when the fit does not
    converge."""
    from scipy import optimize

    n = np.asarray(params, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    if len(np.unique(n)) < 3 or len(n) < 4:
        raise ValueError("a floor needs at least three sizes and four runs")
    if not (np.all(n > 0) and np.all(loss > 0) and np.all(np.isfinite(loss))):
        raise ValueError("parameter counts and losses must be positive and finite to take logs")
    scale = float(np.exp(np.log(n).mean()))     # N / scale near 1: A and alpha stay apart

    def log_law(x, floor, coefficient, exponent):
        return np.log(floor + coefficient * (x / scale) ** (-exponent))

    start = fit_power_law(n, loss)
    guess = (0.5 * float(loss.min()), start.predict(scale), max(start.exponent, 0.05))
    try:
        (floor, coefficient, exponent), cov = optimize.curve_fit(
            log_law, n, np.log(loss), p0=guess, bounds=([0, 1e-12, 1e-3], [np.inf] * 3),
            maxfev=20000)
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"the fit with a floor did not converge ({exc})") from None
    df = len(n) - 3
    se = np.sqrt(np.clip(np.diag(cov), 0, None)) if np.all(np.isfinite(cov)) else \
        np.full(3, np.inf)
    half = t975(df) * se if df >= 1 else np.full(3, np.inf)
    r2 = r_squared(np.log(loss), np.log(loss) - log_law(n, floor, coefficient, exponent))
    return FlooredLaw(float(floor), (float(floor - half[0]), float(floor + half[0])),
                      float(exponent), (float(exponent - half[2]), float(exponent + half[2])),
                      float(coefficient * scale ** exponent), r2, len(n))
