"""Curve legends keep runs and layers apart (issue 27, item 4): colour names the run in every
plot, line style names the layer in the per-layer plot."""
from __future__ import annotations

from tfstudio.gui.training.curves_view import CurvesView
from tfstudio.gui.training.series import RunSeries


def series(name: str, layers: int) -> RunSeries:
    s = RunSeries(name, steps=[1, 2, 3], loss=[3.0, 2.5, 2.0], lr=[1e-3] * 3,
                  grad_norm=[1.0, 0.9, 0.8], tokens_per_s=[100.0] * 3, elapsed_s=[0.1, 0.2, 0.3],
                  total_steps=3)
    s.layer_grad_norms = {f"layers.{i}": [0.1 * (i + 1)] * 3 for i in range(layers)}
    return s


def test_layer_lines_wear_their_runs_colour_and_a_style_each(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    first, second = series("tiny-gpt · 08:00:00", 3), series("tiny-llama · 08:05:00", 3)
    view.add_series(first)
    view.add_series(second)
    colours = [e.colour.name() for e in view.entries]
    assert colours[0] != colours[1]
    for index, entry in enumerate(view.entries):
        view.layers_of.setCurrentIndex(index)
        pens = [curve.opts["pen"] for curve in view._layer_curves.values()]
        assert len(pens) == 3
        assert {p.color().name() for p in pens} == {entry.colour.name()}  # the run's colour
        assert len({p.style() for p in pens}) == 3                      # a style per layer
        assert entry.curves["loss"].opts["pen"].color().name() == entry.colour.name()
