"""Curve legends keep runs and layers apart (issue 27, item 4): colour names the run in every
plot, line style names the layer in the per-layer plot."""
from __future__ import annotations

import pytest

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


def layer_lines(view: CurvesView) -> dict[str, tuple[list, list]]:
    """The per-layer plot as drawn: each line's name and its points."""
    return {item.name(): (list(item.xData), list(item.yData))
            for item in view.layer_plot.listDataItems()}


def legend_names(view: CurvesView) -> list[str]:
    return [label.text for _, label in view.layer_legend.items]


def test_choosing_a_run_with_fewer_layers_leaves_none_of_the_other_runs_lines(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    deep, shallow = series("deep · 08:00:00", 3), series("shallow · 08:05:00", 2)
    shallow.layer_grad_norms = {"layers.0": [5.0, 6.0, 7.0], "layers.1": [8.0, 9.0, 10.0]}
    view.add_series(deep)
    view.add_series(shallow)   # the newest run's layers are drawn
    assert layer_lines(view) == {"layers.0": ([1, 2, 3], [5.0, 6.0, 7.0]),
                                 "layers.1": ([1, 2, 3], [8.0, 9.0, 10.0])}
    assert legend_names(view) == ["layers.0", "layers.1"]
    view.show_layers_of(deep)
    assert layer_lines(view) == {f"layers.{i}": ([1, 2, 3], [0.1 * (i + 1)] * 3)
                                 for i in range(3)}
    view.show_layers_of(shallow)
    assert sorted(layer_lines(view)) == ["layers.0", "layers.1"]
    assert legend_names(view) == ["layers.0", "layers.1"]


def test_layer_lines_follow_the_wall_time_axis(qtbot):
    from tfstudio.gui.training.curve_math import WALL
    view = CurvesView()
    qtbot.addWidget(view)
    view.add_series(series("tiny-gpt · 08:00:00", 2))
    view.reader.x_axis.setCurrentIndex(view.reader.x_axis.findData(WALL))
    assert {name: x for name, (x, _) in layer_lines(view).items()} == {
        "layers.0": [0.1, 0.2, 0.3], "layers.1": [0.1, 0.2, 0.3]}


def test_past_five_layers_the_line_styles_repeat_thinner(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    view.add_series(series("tiny-gpt · 08:00:00", 7))
    widths = [item.opts["pen"].widthF() for item in view.layer_plot.listDataItems()]
    styles = [item.opts["pen"].style() for item in view.layer_plot.listDataItems()]
    assert widths[5] == widths[6] == widths[0] / 2 and len(set(widths[:5])) == 1
    assert styles[5:] == styles[:2]


# a label's bounding rect reaches past its text: a rotated y title's by 2 px
LABEL_SLACK_PX = 3


def cut_titles(view: CurvesView) -> list[str]:
    """Each plot's title and axis titles that reach past the view's visible width."""
    width = view.scroll.viewport().width()
    cut = []
    for name, plot in view.plot_items().items():
        labels = {"title": plot.titleLabel.item, "left": plot.getAxis("left").label,
                  "bottom": plot.getAxis("bottom").label}
        for where, label in labels.items():
            if not label.isVisible() or not label.toPlainText().strip():
                continue
            box = view.plots.mapFromScene(label.mapRectToScene(label.boundingRect()))
            rect = box.boundingRect()
            if rect.left() < -LABEL_SLACK_PX or rect.right() > width + LABEL_SLACK_PX:
                cut.append(f"{name} {where} {label.toPlainText()!r}: {rect.left()}..."
                           f"{rect.right()} of {width}")
    return cut


@pytest.mark.parametrize("size, course", [((1366, 768), True), ((1920, 1080), True),
                                          ((1366, 768), False)],
                         ids=["1366x768-course", "1920x1080-course", "1366x768"])
def test_every_plot_and_axis_title_of_the_curves_lies_inside_the_view(
        open_training_window, qtbot, size, course):
    """With Help > The course open at 1366x768 the plots needed 897 px in a 784 px view (two
    runs' names side by side over the first column, six layers' over the other two): the
    third column was cut, its axis title read "…since the run start"."""
    from tfstudio.gui.training.curve_math import STEP, WALL
    window = open_training_window(size)
    window.training.show_panel()
    if course:
        window.show_lessons()
    view = window.training.panel.curves
    window.training.panel.tabs.setCurrentWidget(view)
    for name in ("tiny-gpt · 04:28:00", "tiny-llama · 04:31:25"):
        run = series(name, 2)
        run.layer_grad_norms.update({key: [0.5] * 3 for key in ("embed", "pos", "final_norm")})
        view.add_series(run)
    assert len(view.layer_legend.items) == 5
    for axis in (WALL, STEP):
        view.reader.x_axis.setCurrentIndex(view.reader.x_axis.findData(axis))
        qtbot.wait(20)
        assert view.plots.width() <= view.scroll.viewport().width(), axis  # no sideways scroll
        assert cut_titles(view) == [], axis
