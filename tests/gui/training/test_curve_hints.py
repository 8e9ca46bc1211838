"""Why a curves plot is empty, said in its place (gui/training/curve_hints.py, no Qt): each hint
follows from the runs shown; the view that centres it in its plot: test_states.py and
test_plots.py."""
from __future__ import annotations

from tfstudio.gui.training.curve_hints import EMPTY_HINT, NO_LAYERS_HINT, WAITING_HINT, plot_hint
from tfstudio.gui.training.series import RunSeries

PLOTS = ("loss", "acc", "lr", "grad", "speed", "layers")


def logged(name: str, is_task: bool | None, accuracy=None) -> RunSeries:
    """A run with two logged steps and, when ``accuracy`` is given, one validation."""
    series = RunSeries(name, steps=[1, 2], loss=[3.0, 2.5], is_task=is_task)
    if accuracy is not None:
        series.val_steps, series.val_loss, series.accuracy = [2], [2.6], [accuracy]
    return series


def test_before_any_run_and_before_its_first_step_every_plot_says_so():
    assert {plot_hint(p, []) for p in PLOTS} == {EMPTY_HINT}
    starting = RunSeries("tiny-gpt · 08:00:00", is_task=True)  # started, nothing logged yet
    assert {plot_hint(p, [starting]) for p in PLOTS} == {WAITING_HINT}
    assert plot_hint("loss", [starting, logged("b", True)]) == ""  # one run has drawn


def test_the_accuracy_plot_says_why_it_is_empty_for_the_runs_shown():
    text = logged("tiny-gpt · sample", is_task=False)
    assert "this corpus is text" in plot_hint("acc", [text])
    assert plot_hint("loss", [text]) == ""
    task = logged("tiny-gpt · reverse", is_task=True)  # a task, before its first validation
    assert plot_hint("acc", [task]).startswith("Accuracy appears at each validation")
    assert plot_hint("acc", [text, task]).startswith("Accuracy appears")  # one may measure it
    assert plot_hint("acc", [logged("measured", True, accuracy=0.4), text]) == ""
    assert plot_hint("acc", [logged("no accuracy yet", True, accuracy=None)]) != ""


def test_the_layers_plot_says_when_a_run_logged_no_per_layer_norms():
    run = logged("tiny-gpt · reverse", is_task=True)
    assert plot_hint("layers", [run], layers_drawn=False) == NO_LAYERS_HINT
    assert plot_hint("layers", [run], layers_drawn=True) == ""
    assert plot_hint("grad", [run], layers_drawn=False) == ""
