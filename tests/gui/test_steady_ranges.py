"""Live plots whose automatic range moves in steps: the axes of the training curves are redrawn
when their range changes, not at every refresh of a growing run."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication, QWidget

from tfstudio.gui.training.compare_job import Shown
from tfstudio.gui.training.compare_results import CompareResults
from tfstudio.gui.training.curves_view import CurvesView
from tfstudio.gui.training.experts_view import ExpertsView
from tfstudio.gui.training.plots import layout_widget
from tfstudio.gui.training.series import RunSeries


def test_the_curves_of_a_live_run_share_a_step_axis_that_ends_at_the_next_1_2_5(qtbot):
    rng = np.random.default_rng(2)
    series = growing_series(300, rng)
    series.total_steps = 2000
    view = curves_of(series, qtbot)
    box = view.loss_plot.getViewBox()
    # the view adds a little padding around 0-500; every plot shows the loss plot's steps
    qtbot.waitUntil(lambda: box.viewRange()[0][0] < 0 < 500 < box.viewRange()[0][1] < 560)
    for plot in view.plot_items().values():
        assert plot.getViewBox().viewRange()[0] == box.viewRange()[0]
    extend(series, 1700, rng)  # the run's last step: all of it
    view.refresh()
    qtbot.waitUntil(lambda: 2000 < box.viewRange()[0][1] < 2200)


def curves_of(series: RunSeries, qtbot, size: tuple[int, int] = (1000, 560)) -> CurvesView:
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.add_series(series)
    return view


def growing_series(steps: int, rng) -> RunSeries:
    series = RunSeries("tiny-gpt")
    extend(series, steps, rng)
    return series


def extend(series: RunSeries, steps: int, rng) -> None:
    for _ in range(steps):
        step = len(series.steps) + 1
        series.steps.append(step)
        series.loss.append(3.0 + 0.2 * rng.random())
        series.lr.append(1e-3)
        series.grad_norm.append(1.0 + rng.random())
        series.tokens_per_s.append(20_000.0 + 1_000 * rng.random())
        series.elapsed_s.append(step * 0.01)
        series.layer_grad_norms.setdefault("layers.0", []).append(rng.random())


def axis_drawings(monkeypatch) -> list:
    """Each time an axis of any plot works out its ticks and labels anew (it draws them then)."""
    calls = []
    original = pg.AxisItem.generateDrawSpecs

    def counted(self, painter):
        calls.append(self)
        return original(self, painter)

    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs", counted)
    return calls


def test_a_refresh_inside_the_range_redraws_no_axis_and_one_past_it_does(qtbot, monkeypatch):
    rng = np.random.default_rng(0)
    series = growing_series(1000, rng)
    view = curves_of(series, qtbot, size=(1300, 560))
    qtbot.wait(100)
    view.refresh()  # the first paint widens the axes to their labels: the layout settles
    qtbot.wait(100)
    # steps 1-1000: a span of 999, 1,099 with its headroom, a quarter of it rounds down to a
    # unit of 200, and 1000 + 50 rounds up to a step range that ends at 1,200
    _, shown_to = view.loss_plot.getViewBox().viewRange()[0]
    drawn = axis_drawings(monkeypatch)
    while len(series.steps) < 1180:  # refreshes that stay inside it
        extend(series, 20, rng)
        view.refresh()
        qtbot.wait(5)
    assert drawn == []
    extend(series, 40, rng)  # past it
    view.refresh()
    qtbot.wait(50)
    assert view.loss_plot.getViewBox().viewRange()[0][1] > shown_to
    assert {view.loss_plot.getAxis("bottom"), view.lr_plot.getAxis("bottom")} <= set(drawn)


def test_a_plot_the_user_zoomed_stays_put_until_auto_range_is_asked_for(qtbot):
    rng = np.random.default_rng(1)
    series = growing_series(500, rng)
    view = curves_of(series, qtbot)
    box = view.loss_plot.getViewBox()
    box.setXRange(100, 200, padding=0)  # as a drag or the mouse wheel does
    extend(series, 2000, rng)
    view.refresh()
    qtbot.wait(20)
    assert box.viewRange()[0] == [100.0, 200.0]
    view.loss_plot.enableAutoRange()  # the plot's "A" button
    # (the curve clips its points to the view: each paint widens the range until all are in)
    qtbot.waitUntil(lambda: box.viewRange()[0][0] <= 1 and box.viewRange()[0][1] >= 2500,
                    timeout=3000)


def test_a_plot_layout_adds_up_the_time_its_paints_take(qtbot):
    widget = layout_widget()
    qtbot.addWidget(widget)
    widget.addPlot().plot(np.arange(1000.0), np.sin(np.arange(1000.0)))
    widget.resize(600, 400)
    widget.show()
    qtbot.wait(50)
    widget.take_painting_s()
    widget.viewport().repaint()
    widget.viewport().repaint()
    assert widget.take_painting_s() > 0
    assert widget.take_painting_s() == 0.0  # taken: counted from zero again


def strokes_of(view: CurvesView) -> list:
    """Each time a run's curve is stroked (a curve kept as a pixmap is copied, not stroked)."""
    calls = []
    for entry in view.entries:
        for item in (c.curve for c in entry.curves.values()):
            item.paint = lambda *args, item=item, paint=item.paint: (calls.append(item),
                                                                     paint(*args))[1]
    return calls


def test_a_run_that_logs_nothing_new_is_copied_from_a_pixmap_not_stroked_again(qtbot):
    rng = np.random.default_rng(3)
    done = growing_series(2000, rng)   # a finished run beside a live one
    live = growing_series(50, rng)
    live.name = "live"
    view = curves_of(done, qtbot)
    view.add_series(live)
    qtbot.wait(100)                    # the first paint widens the axes: the layout settles
    view.refresh()                     # nothing new in ``done``: its curves hold still
    qtbot.wait(100)
    held = view.entries[0]
    done_curves = {c.curve for c in held.curves.values() if c.isVisible()}
    stroked = strokes_of(view)
    extend(live, 20, rng)
    view.refresh()
    view.plots.viewport().repaint()
    assert view.entries[1].curves["loss"].curve in stroked     # the live run is stroked...
    assert not done_curves & set(stroked)                      # ...the finished one copied
    copied = view.plots.grab().toImage()
    held.hold_still(False)             # stroked directly, as before: the same picture
    stroked_image = view.plots.grab().toImage()
    worst = max(max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue()))
                for a, b in ((copied.pixelColor(x, y), stroked_image.pixelColor(x, y))
                             for y in range(0, copied.height(), 3)
                             for x in range(0, copied.width(), 3)))
    assert worst <= 16  # antialiased edges may differ by a shade, nothing more
    stroked.clear()
    extend(done, 10, rng)              # the run logs again (resumed): drawn anew
    view.refresh()
    view.plots.viewport().repaint()
    assert held.curves["loss"].curve in stroked


def test_an_ended_runs_gradient_norm_axis_is_the_one_its_data_decides(qtbot):
    """The curves show the range axis_range.SteadyRange gives: held while the run grows,
    refitted to the data when it ends (with no new point to draw)."""
    grad_norm = [0.5 + 3.4 * 0.85 ** i for i in range(30)]  # 3.9 settling to 0.51
    series = RunSeries("tiny-gpt")
    series.total_steps = len(grad_norm)
    view = curves_of(series, qtbot)
    box = view.grad_plot.getViewBox()
    for step, norm in enumerate(grad_norm, 1):  # redrawn at every step
        series.steps.append(step)
        for values in (series.loss, series.lr, series.tokens_per_s, series.elapsed_s):
            values.append(1.0)
        series.grad_norm.append(norm)
        view.refresh()
        QApplication.processEvents()  # the range is worked out when asked for, at a paint
    qtbot.waitUntil(lambda: 0.0 < box.viewRange()[1][0] < 0.5)  # 0.5-4.5, padded
    series.end = "completed"
    view.refresh()
    # 0-4.5, padded
    qtbot.waitUntil(lambda: -0.5 < box.viewRange()[1][0] < 0.0 < 4.5 < box.viewRange()[1][1])


def test_a_finished_comparisons_loss_axis_is_the_one_its_data_decides(qtbot, tmp_path):
    """The Compare results' loss plot: held while the runs log steps, refitted to the report's
    curves when they are shown (the comparison ended), whatever the live redraws left."""
    losses = [0.5 + 3.4 * 0.85 ** i for i in range(30)]  # 3.9 settling to 0.51
    results = CompareResults()
    qtbot.addWidget(results)
    results.resize(900, 500)
    QWidget.show(results)  # (its own show() shows a finished comparison)
    results.tabs.setCurrentIndex(0)
    results.reset(["a"], len(losses), "")
    box = results.loss_plot.getViewBox()
    for step, loss in enumerate(losses, 1):  # redrawn at every step
        results.add_step("a", 0, step, loss)
        results.redraw()
        QApplication.processEvents()
    qtbot.waitUntil(lambda: 0.0 < box.viewRange()[1][0] < 0.5)  # 0.5-4.5, padded
    curve = list(enumerate(losses, 1))
    results.show(Shown(tmp_path, "Comparison", [], ["variant"], [["a"]],
                       {"curves": {"a": {"train": curve, "val": []}}, "baselines": {}},
                       {"a": [(0, tmp_path)]}))
    results.tabs.setCurrentIndex(0)
    # 0-4.5, padded
    qtbot.waitUntil(lambda: -0.5 < box.viewRange()[1][0] < 0.0 < 4.5 < box.viewRange()[1][1])


def test_an_ended_runs_expert_load_step_axis_is_the_one_its_data_decides(qtbot):
    """The Experts load plot of a run whose end step is not known (x by SteadyRange): held
    while it grows, refitted to its steps when the run ends."""
    series = RunSeries("tiny-moe")
    view = ExpertsView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    box = view.load_plot.getViewBox()
    for step in range(1, 31):  # redrawn at every step: 0-30 held
        series.router_steps.append(step)
        series.expert_load.setdefault("ffn", []).append([0.6, 0.4])
        view.set_series(series)
        QApplication.processEvents()
    qtbot.waitUntil(lambda: 30 < box.viewRange()[0][1] < 32)  # 0-30, padded
    series.end = "stopped"
    view.redraw()
    qtbot.waitUntil(lambda: 35 < box.viewRange()[0][1] < 37)  # 0-35: 1-30 fitted alone
