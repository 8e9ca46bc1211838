"""The range a plot's axis shows, from the data it shows, without Qt. A live plot's axes (their
ticks, labels and the grid they draw over the data) are cached and redrawn only when the range
changes: an automatic range that followed every new point redrew all six axes of the curves at
each refresh, which made a refresh cost 3-4x what its curves do. So while the data grows the
range holds still and moves in steps; once it stops growing it is the range its data decides
(:class:`SteadyRange`)."""
from __future__ import annotations

import math

STEADY_FILL = 0.5      # the range is refitted when the data fills less of it than this...
STEADY_HEADROOM = 0.05  # ...or leaves it; a refit leaves this share of the data's span free
STEADY_TICKS = 4       # and rounds outwards to one of about this many 1-2-5 units of the span
# the bounds a view box reports reach a pen's half width past the data: within this share of the
# span, a bound past the range (or below zero) counts as on it
STEADY_SLACK = 0.01


def steady_range(data: tuple[float, float], current: tuple[float, float] | None
                 ) -> tuple[float, float]:
    """The range to show ``data`` (its min and max) in: ``current`` while the data stays inside
    it and fills at least STEADY_FILL of it, else a new one rounded outwards to 1-2-5 units."""
    lo, hi = data
    span = hi - lo
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return data
    if span <= 0:  # one value: from zero to twice it (pyqtgraph's +-0.5 read a rate of 1e-3 as 0)
        return (min(0.0, 2 * lo), max(0.0, 2 * lo)) if lo != 0 else (-1.0, 1.0)
    if current is not None:
        a, b = current
        slack = STEADY_SLACK * (b - a)
        if a - slack <= lo and hi <= b + slack and span >= STEADY_FILL * (b - a):
            return current
    unit = _nice_unit(span * (1 + 2 * STEADY_HEADROOM) / STEADY_TICKS)
    low = math.floor((lo - STEADY_HEADROOM * span) / unit) * unit
    high = math.ceil((hi + STEADY_HEADROOM * span) / unit) * unit
    if low < 0 <= lo + STEADY_SLACK * span:  # steps, rates and norms: never shown below zero
        low = 0.0
    return low, high


def step_axis_end(last_step: float, final_step: int) -> float:
    """Where a live run's step axis ends: the next 1, 2 or 5 times a power of ten past its last
    step (with STEADY_HEADROOM), never past the step the run ends at. A run of 2,000 steps
    shows 0-100 up to step 95, then 0-200, 0-500, 0-1,000, and all of itself from step 953:
    a handful of moves, where a range that followed the data moved at every refresh."""
    if last_step >= final_step:
        # (a curve's reported end reaches a pen's width past its last step, a width that is
        # more steps the more the axis shows: followed, it moved the axis again at the next
        # paint, and redrew every plot's)
        return float(final_step if last_step <= final_step * (1 + STEADY_SLACK)
                     else max(last_step, 1.0))
    end = nice_bound(max(last_step, 1.0) * (1 + STEADY_HEADROOM), slack=1e-9)
    return float(min(end, final_step))


def nice_bound(value: float, slack: float = 1e-12) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``value`` (a positive number), a bound
    within ``slack`` (relative) of it counting as at it."""
    scale = 10.0 ** math.floor(math.log10(value))  # value / scale is in [1, 10)
    return next(step * scale for step in (1, 2, 5, 10) if step * scale >= value * (1 - slack))


def _nice_unit(most: float) -> float:
    """The largest 1, 2 or 5 times a power of ten that is at most ``most``."""
    power = 10.0 ** math.floor(math.log10(most))
    return max(u * power for u in (1, 2, 5) if u * power <= most * (1 + 1e-9))


class SteadyRange:
    """One axis's range as the data it shows grows, then stops: held steady while it grows
    (``steady_range``); once it no longer grows (:meth:`ended`: a run that ended), the next
    range is the one its data decides alone, whatever ranges the redraws on the way passed
    through, and that one is held. (Where a held range stood depended on when the redraws came:
    a finished run's gradient norms ended on 0.5-4.5 or 0-4.5 by timing.)"""

    def __init__(self) -> None:
        self.current: tuple[float, float] | None = None

    def show(self, data: tuple[float, float]) -> tuple[float, float]:
        """The range to show ``data`` (its min and max) in now."""
        self.current = steady_range(data, self.current)
        return self.current

    def ended(self) -> None:
        """The data stopped growing: its next range is fitted to it, not held from before."""
        self.current = None
