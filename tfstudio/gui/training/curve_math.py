"""The numbers behind the curves and their reading aids, without Qt: the arrays a growing run's
curves are drawn from (:class:`GrowingArray`, :class:`EmaArray`: only the new points
converted), exponential smoothing as TensorBoard draws it, the moving average of the
throughput, the x coordinate of each point (step or wall time), the hover readout's text and
where its box stands (:func:`readout_at`), each layer's line in the per-layer plot
(:func:`layer_line`), and how many columns the legends take so that the plots fit the view's
width (:func:`legend_columns`).

Smoothing is TensorBoard's: an exponential moving average with weight ``w`` (0: raw, 0.99:
very smooth), debiased so the first points are not pulled towards zero::

    a_k = w * a_(k-1) + (1 - w) * v_k      (a_0 = 0, over the finite values only)
    s_k = a_k / (1 - w ** n_k)             (n_k: finite values so far)

A NaN (a step with no measurement) stays NaN and does not move the average.
"""
from __future__ import annotations

import math

import numpy as np

STEP, WALL = "step", "wall"
X_AXES = {STEP: "Step", WALL: "Wall time"}
X_LABELS = {STEP: "step", WALL: "seconds since the start"}
SPEED_WINDOW = 20  # steps in the moving average of tokens / s (single steps are noisy)
READOUT_OFFSET = 16  # px from the pointer to the readout box, right and down (or left, up)
LAYER_STYLES = 5     # line styles told apart; past them a layer's style repeats, thinner
SMOOTHING_STEPS = 100  # the smoothing slider's positions: weight = position / 100



def smoothing_weight(position: int) -> float:
    """The EMA weight at the smoothing slider's ``position`` (0: raw, 99: 0.99)."""
    return position / SMOOTHING_STEPS


def smoothing_label(weight: float) -> str:
    return f"Smoothing {weight:.2f}"


def moving_average(values: np.ndarray, window: int = SPEED_WINDOW) -> np.ndarray:
    """The mean of the last ``window`` values at each point (fewer at the start)."""
    if values.size == 0:
        return values
    sums = np.cumsum(np.concatenate([[0.0], values]))
    n = np.arange(1, values.size + 1)
    lo = np.maximum(0, n - window)
    return (sums[n] - sums[lo]) / (n - lo)

class GrowingArray:
    """A float array that follows a growing list, copying only the new items: a redraw at
    step 20,000 converts as little as one at step 20."""

    def __init__(self):
        self._buffer = np.empty(256)
        self.size = 0

    def sync(self, values: list) -> np.ndarray:
        if len(values) < self.size:  # the list was replaced (a run reloaded): start over
            self.size = 0
        new = values[self.size:]
        if new:
            end = self.size + len(new)
            if end > len(self._buffer):
                grown = np.empty(max(end, 2 * len(self._buffer)))
                grown[:self.size] = self._buffer[:self.size]
                self._buffer = grown
            self._buffer[self.size:end] = np.asarray(new, dtype=float)
            self.size = end
        return self._buffer[:self.size]


class EmaArray:
    """The debiased EMA of a growing array, extended by only its new points (a redraw at step
    20,000 smooths as little as one at step 20); recomputed when the weight changes."""

    def __init__(self):
        self.weight = 0.0
        self._out = np.empty(0)
        self._size = 0
        self._avg = 0.0
        self._count = 0

    def sync(self, values: np.ndarray, weight: float) -> np.ndarray:
        if weight != self.weight or len(values) < self._size:
            self.weight, self._size, self._avg, self._count = weight, 0, 0.0, 0
        n = len(values)
        if n > len(self._out):
            grown = np.empty(max(n, 2 * len(self._out), 256))
            grown[:self._size] = self._out[:self._size]
            self._out = grown
        w, avg, count = self.weight, self._avg, self._count
        out = self._out
        for i in range(self._size, n):
            v = float(values[i])
            if math.isfinite(v):
                avg = w * avg + (1.0 - w) * v
                count += 1
                out[i] = avg / (1.0 - w ** count) if w > 0 else v
            else:
                out[i] = math.nan
        self._avg, self._count, self._size = avg, count, n
        return out[:n]


def ema(values, weight: float) -> np.ndarray:
    """The debiased EMA of ``values`` at ``weight`` (a fresh computation; see the module)."""
    return EmaArray().sync(np.asarray(values, dtype=float), weight).copy()


def wall_times(series, steps) -> np.ndarray:
    """Seconds since the run started at each of ``steps`` of ``series`` (a ``RunSeries``),
    from its logged step times; a step between two logged ones (a validation) is placed
    between their times."""
    steps = np.asarray(steps, dtype=float)
    if not series.steps or not series.elapsed_s:
        return np.full(steps.shape, math.nan)
    n = min(len(series.steps), len(series.elapsed_s))
    return np.interp(steps, np.asarray(series.steps[:n], dtype=float),
                     np.asarray(series.elapsed_s[:n], dtype=float))


def x_of(series, steps, axis: str) -> np.ndarray:
    """The x coordinates of ``steps`` of ``series`` on ``axis`` (STEP or WALL)."""
    if axis == WALL:
        return wall_times(series, steps)
    return np.asarray(steps, dtype=float)


def nearest_index(series, x: float, axis: str) -> int | None:
    """The index of the logged step of ``series`` nearest to ``x`` on ``axis`` (None:
    nothing logged)."""
    if not series.steps:
        return None
    xs = x_of(series, series.steps, axis)
    i = int(np.clip(np.searchsorted(xs, x), 1, len(xs) - 1)) if len(xs) > 1 else 0
    if i > 0 and abs(xs[i - 1] - x) <= abs(xs[i] - x):
        i -= 1
    return i


def _figure(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.3g}"
    return f"{value:.4g}"


def run_readout(series, x: float, axis: str, smoothed_loss=None) -> str:
    """One run's values at the logged step nearest ``x``: "tiny-gpt · 08:00: step 120 ·
    loss 2.310 (smoothed 2.352) · val 2.400 at step 100 · lr 0.001 · grad norm 0.81 ·
    1,234 tokens/s". ``smoothed_loss``: the loss as the plot draws it smoothed, when it is.
    Empty when the run has logged nothing."""
    i = nearest_index(series, x, axis)
    if i is None:
        return ""
    step = series.steps[i]
    parts = [f"{series.name}: step {step:,}"]
    if axis == WALL and i < len(series.elapsed_s):
        parts[0] += f" ({series.elapsed_s[i]:.1f} s)"
    loss = f"loss {_figure(series.loss[i])}"
    if smoothed_loss is not None and i < len(smoothed_loss):
        loss += f" (smoothed {_figure(smoothed_loss[i])})"
    parts.append(loss)
    earlier = [k for k, s in enumerate(series.val_steps) if s <= step]
    if earlier:
        k = earlier[-1]
        where = "" if series.val_steps[k] == step else f" at step {series.val_steps[k]:,}"
        parts.append(f"val {_figure(series.val_loss[k])}{where}")
        acc = series.accuracy[k] if k < len(series.accuracy) else None
        if acc is not None:
            parts.append(f"acc {acc:.0%}{where}")
    parts.append(f"lr {_figure(series.lr[i])}")
    parts.append(f"grad norm {_figure(series.grad_norm[i])}")
    if i < len(series.tokens_per_s):
        parts.append(f"{series.tokens_per_s[i]:,.0f} tokens/s")
    return " · ".join(parts)


def readout(shown: list, x: float, axis: str, smoothed: dict | None = None) -> str:
    """Every shown run's values under the pointer, one line per run (``smoothed``: each
    run's smoothed loss, by run name, when the plot smooths)."""
    smoothed = smoothed or {}
    lines = (run_readout(s, x, axis, smoothed.get(s.name)) for s in shown)
    return "\n".join(line for line in lines if line)


def readout_at(pointer: tuple[int, int], box: tuple[int, int], area: tuple[int, int]
               ) -> tuple[int, int]:
    """Where the readout box (``box``: width, height) stands beside the pointer, inside an
    ``area`` of (right, bottom) from (0, 0): right of and below it, else on the side where it
    fits, never past the top or left."""
    (px, py), (w, h), (right, bottom) = pointer, box, area
    x = px + READOUT_OFFSET
    if x + w > right:
        x = px - READOUT_OFFSET - w
    y = py + READOUT_OFFSET
    if y + h > bottom:
        y = py - READOUT_OFFSET - h
    return max(x, 0), max(y, 0)


def layer_line(i: int, width: float) -> tuple[int, float]:
    """(line style index, pen width) of a run's ``i``-th layer: the colour names the run, the
    style the layer; past LAYER_STYLES layers the styles repeat at half the width."""
    return i % LAYER_STYLES, width if i < LAYER_STYLES else width / 2


def legend_columns(need, width: int, most: tuple[int, int]) -> tuple[int, int, int]:
    """(the runs' legend's columns, the layers' legend's, the plots' least width): each legend
    from its ``most`` columns, the runs' first, stacks its entries onto more rows until the
    plots fit ``width``, as ``need(runs, layers)`` (their width with the legends in those
    columns) says. Plots still wider than the view keep their width (0: they fit), to scroll
    sideways rather than be cut."""
    runs, layers = most
    while need(runs, layers) > width and runs > 1:
        runs -= 1
    while need(runs, layers) > width and layers > 1:
        layers -= 1
    least = need(runs, layers)
    return runs, layers, least if least > width else 0


def accuracy_points(val_steps, accuracy) -> tuple[list[int], list[float]]:
    """The accuracy curve's points: the evaluations that measured one (a text corpus's have
    none, None)."""
    kept = [(step, a) for step, a in zip(val_steps, accuracy) if a is not None]
    return [step for step, _ in kept], [a for _, a in kept]


def step_axis_final(total_steps, axis: str) -> int:
    """The step the x axis ends at (``axis_range.step_axis_end``): the longest drawn run's
    last step on a step axis; 0 (no known end) on wall time or with no run."""
    return max(total_steps, default=0) if axis == STEP else 0


def loss_axis(log: bool) -> tuple[str, int]:
    """The loss axis's title and how many levels of tick labels it writes: on a log axis only
    the decades (the minor ticks' labels, 2..9 of each decade, run into each other)."""
    return ("cross-entropy (log scale)", 1) if log else ("cross-entropy", 2)
