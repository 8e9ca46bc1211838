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
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((residuals ** 2).sum()) / total if total > 0 else 1.0
    return PowerLaw(-float(slope), (-float(slope) - half, -float(slope) + half),
                    math.exp(float(intercept)), r2, len(x))
