"""Why a curves plot is empty, in words, without Qt: before any run, before a run's first
logged step, a text corpus that has no task accuracy, a run that logged no per-layer
gradient norms. :class:`~.curves_view.CurvesView` shows the hint centred in the plot."""
from __future__ import annotations

EMPTY_HINT = "No run yet: press Train (or open a past run in Runs)"
WAITING_HINT = "Waiting for the first logged step…"
NO_LAYERS_HINT = "This run logged no per-layer gradient norms"


def plot_hint(plot: str, shown: list, layers_drawn: bool = False) -> str:
    """The hint over the plot named ``plot`` ("loss", "acc", "layers", ...) while the runs
    ``shown`` (``RunSeries``) are drawn; ``layers_drawn``: any per-layer curve is. "" when the
    plot has something to show."""
    if not shown:
        return EMPTY_HINT
    if not any(s.steps for s in shown):
        return WAITING_HINT
    if plot == "acc" and not any(a is not None for s in shown for a in s.accuracy):
        return accuracy_hint(shown)
    if plot == "layers" and not layers_drawn:
        return NO_LAYERS_HINT
    return ""


def accuracy_hint(shown: list) -> str:
    """Why the accuracy plot is empty: a text corpus has none; a task's comes at validation."""
    if all(s.is_task is False for s in shown):
        return "No task accuracy: this corpus is text. Accuracy is measured on the " \
               "synthetic tasks (task:reverse, task:copy, …), whose answers are known."
    return "Accuracy appears at each validation (Eval every in the run setup)"
