"""The model's parameter count: defined once, worded once (no Qt).

The count is the model's trainable parameters, each counted once (a tied output head shares the
embedding's matrix): the cost model's ``CostReport.total_params``, which equals the trainer's
figure (``sum(p.numel() for p in model.parameters())``, sent as ``Started.params``) for the same
graph. Every place that shows a count shows this one, or says what else it counts: a group's
count covers all its copies and says so with the count per copy; a run's count is that of the
model as trained, its vocabulary resized to the run's tokenizer; "without embeddings" is the
cost panel's second figure. While the graph has errors the count is unavailable, and says why.
"""
from __future__ import annotations

from typing import Callable

from .text import count_label

WHAT = "trainable params"
RUN_HEADER = "Params (as trained)"
RUN_HEADER_TIP = ("Trainable parameters of the model as trained: its embedding and output rows "
                  "sized to the run's tokenizer. The status bar counts the graph on the canvas, "
                  "with the vocabulary it declares: the two agree when the run's tokenizer has "
                  "that vocabulary.")


def unavailable(errors: int) -> str:
    """Why there is no count: "the graph has 2 errors (see Problems)"."""
    return f"the graph has {errors} error{'s' * (errors != 1)} (see Problems)"


def model_count(report) -> str:
    """The status bar's words for a ``GraphReport``: "132.9k trainable params", or
    "params unavailable: the graph has 1 error (see Problems)"; "" without a cost report."""
    return _worded(report, lambda n: f"{count_label(n)} {WHAT}", "params ")


def short_count(report) -> str:
    """A fact's figure, as the presets gallery gives it: "132.9k", or "unavailable: the graph has
    1 error (see Problems)" (the status bar's rule: no count for a graph that does not build);
    "" without a cost report."""
    return _worded(report, count_label)


def model_count_exact(report) -> str:
    """The model page's figure: "132,864 trainable" or "unavailable: the graph has …"."""
    return _worded(report, lambda n: f"{n:,} trainable")


def _worded(report, figure: Callable[[int], str], before: str = "") -> str:
    """The one rule the three share: no count while the graph has errors (saying why, after
    ``before``), none without a cost report, else ``figure`` of the count."""
    if report.errors:
        return f"{before}unavailable: {unavailable(report.errors)}"
    if report.cost is None:
        return ""
    return figure(report.cost.total_params)


def group_count(total: int, repeat: int, short: bool = False) -> str:
    """A repeated group's count, all copies: "100.0k params (2 copies, 50.0k each)"; ``short``
    (a closed box): "100.0k params in 2 copies". One copy: "50.0k params"."""
    if repeat <= 1:
        return f"{count_label(total)} params"
    if short:
        return f"{count_label(total)} params in {repeat} copies"
    return f"{count_label(total)} params ({repeat} copies, {count_label(total / repeat)} each)"


UNAVAILABLE = "params unavailable"


def shown_count(node, params: int | None, errors: int, short: bool = False) -> str:
    """A block's count wherever it is drawn (header, footer, inspector): "params unavailable"
    while the graph has errors, as the status bar says at the same moment; "" when nothing
    is counted."""
    if errors:
        return UNAVAILABLE
    return block_count(node, params, short) if params else ""


def block_count(node, params: int, short: bool = False) -> str:
    """A block's count as drawn on it: a group's says it covers all its copies."""
    if not node.is_group:
        return f"{count_label(params)} params"
    try:
        repeat = max(1, int(node.typed_params().repeat))
    except (KeyError, TypeError, ValueError):
        repeat = 1
    return group_count(params, repeat, short)
