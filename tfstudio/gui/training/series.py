"""A run's curves, gathered from its events (live or read back from ``metrics.jsonl``).

Plain lists, no Qt: the curves view plots them, ``to_csv`` writes them, and a reopened run is
rebuilt from the same events it was drawn from while it trained.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from ...train.events import (EvalMetrics, Event, Failed, Finished, RouterMetrics, Started,
                             StepMetrics)
from .curve_math import SPEED_WINDOW


@dataclass
class RunSeries:
    name: str                                   # shown in legends: architecture and run
    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    tokens_per_s: list[float] = field(default_factory=list)
    elapsed_s: list[float] = field(default_factory=list)
    layer_grad_norms: dict[str, list[float]] = field(default_factory=dict)
    val_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    accuracy: list[float | None] = field(default_factory=list)
    router_steps: list[int] = field(default_factory=list)
    expert_load: dict[str, list[list[float]]] = field(default_factory=dict)
    total_steps: int = 0
    params: int = 0
    device: str = ""
    end: str = ""                               # "", "completed", "stopped", "failed: ..."
    is_task: bool | None = None                 # a synthetic task (accuracy known)? None: unknown

    def add(self, event: Event) -> None:
        if isinstance(event, Started):
            self.total_steps, self.params, self.device = (event.total_steps, event.params,
                                                          event.device)
        elif isinstance(event, StepMetrics):
            self.steps.append(event.step)
            self.loss.append(event.loss)
            self.lr.append(event.lr)
            self.grad_norm.append(event.grad_norm)
            self.tokens_per_s.append(event.tokens_per_s)
            self.elapsed_s.append(event.elapsed_s)
            for layer, value in event.layer_grad_norms.items():
                values = self.layer_grad_norms.setdefault(layer, [])
                values.extend([float("nan")] * (len(self.steps) - 1 - len(values)))
                values.append(value)
        elif isinstance(event, EvalMetrics):
            self.val_steps.append(event.step)
            self.val_loss.append(event.val_loss)
            self.accuracy.append(event.accuracy)
        elif isinstance(event, RouterMetrics):
            self.router_steps.append(event.step)
            for layer, load in event.expert_load.items():
                self.expert_load.setdefault(layer, []).append(list(load))
        elif isinstance(event, Finished):
            self.end = event.reason
        elif isinstance(event, Failed):
            self.end = f"failed ({event.reason}): {event.message}"

    @classmethod
    def from_events(cls, name: str, events) -> RunSeries:
        series = cls(name)
        for event in events:
            series.add(event)
        return series

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first step)."""
        if not self.steps or not self.total_steps or not self.elapsed_s:
            return None
        done = self.steps[-1]
        first = self.elapsed_s[0]  # the set-up before step 1 is not training pace
        if done <= 1:
            return None
        per_step = (self.elapsed_s[-1] - first) / (done - 1)
        return max(0.0, per_step * (self.total_steps - done))

    def rows(self) -> list[dict]:
        """One row per logged step: loss, lr, grad norms (total and per layer), tokens/s, and
        the validation loss and accuracy on the steps they were measured."""
        val = dict(zip(self.val_steps, zip(self.val_loss, self.accuracy)))
        rows = []
        for i, step in enumerate(self.steps):
            v_loss, acc = val.get(step, ("", ""))
            row = {"run": self.name, "step": step, "loss": self.loss[i], "val_loss": v_loss,
                   "accuracy": "" if acc is None else acc, "lr": self.lr[i],
                   "grad_norm": self.grad_norm[i], "tokens_per_s": self.tokens_per_s[i]}
            for layer, values in self.layer_grad_norms.items():
                row[f"grad_norm[{layer}]"] = values[i] if i < len(values) else ""
            rows.append(row)
        return rows


BASE_COLUMNS = ["run", "step", "loss", "val_loss", "accuracy", "lr", "grad_norm"]


def write_csv(series: list[RunSeries], path: str | Path) -> Path:
    """The curves of one or several runs in one file (per-layer columns: their union)."""
    path = Path(path)
    rows = [row for s in series for row in s.rows()]
    layers = sorted({key for row in rows for key in row if key.startswith("grad_norm[")})
    columns = BASE_COLUMNS + layers + ["tokens_per_s"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def latest_figures(series) -> str:
    """The viewed run's newest numbers, each with the step it was measured at: "step 22 of
    400 · loss 2.5056 · val 2.6120 at step 20 · acc 40% at step 20" (a ``RunSeries``). The
    progress line and the curves header both show this one string."""
    if not series.steps:
        return ""
    step = series.steps[-1]
    parts = [f"step {step:,} of {series.total_steps:,}" if series.total_steps
             else f"step {step:,}", f"loss {series.loss[-1]:.4f}"]
    if series.val_loss:
        at = series.val_steps[-1]
        where = "" if at == step else f" at step {at:,}"
        parts.append(f"val {series.val_loss[-1]:.4f}{where}")
        if series.accuracy and series.accuracy[-1] is not None:
            parts.append(f"acc {series.accuracy[-1]:.0%}{where}")
    return " · ".join(parts)


def header_line(name: str, figures: str) -> str:
    """The curves header: the run the views show, by name, and its newest figures (the
    run shown, not the last one added to the plots)."""
    return f"{name} · {figures or 'no step logged yet'}"


def progress_line(series, run, named: bool = False) -> str:
    """The line under the progress bar: the run's newest figures (:func:`latest_figures`), its
    speed (the throughput curve's moving average, not one step) and "paused" or the time left
    while it trains. ``run`` (a ``TrainingRun``) says its state; ``named``: the views show
    another run, so the line names the one it follows, and how it stands. No-break spaces
    inside each part: a narrow column wraps between parts only."""
    recent = series.tokens_per_s[-SPEED_WINDOW:]
    parts = latest_figures(series).split(" · ") + [f"{sum(recent) / len(recent):,.0f} tokens/s"]
    eta = series.eta_s()
    if run.state == "paused":
        parts.append("paused")  # no time left to count while nothing moves
    elif eta is not None and run.active:
        parts.append(f"ETA {duration(eta)}")
    text = " · ".join(part.replace(" ", "\u00a0") for part in parts)
    if named:
        state = "training" if run.active else "failed" if run.state == "failed" else \
            getattr(run.end_event, "reason", run.state)  # "stopped", "completed"
        text = f"{series.name} ({state}):".replace(" ", "\u00a0") + " " + text
    return text


def duration(seconds: float) -> str:
    """A time span as a clock reads it: "42 s", "3:05", "1:02:03"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}:{seconds:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def still_logging(series) -> bool:
    """Whether any of the runs ``series`` draws still logs points (one has not ended): their
    plots' ranges hold still while one does, and fit the data once none does."""
    return any(not s.end for s in series)
