"""Curves as TensorBoard and W&B users read them (issue 27, item 7): a smoothing slider (an
EMA, the raw curve faint behind), a readout of every run's values at the step under the pointer,
and an x-axis of step or wall time."""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtWidgets import QApplication

from tfstudio.gui.training.curve_math import WALL, ema, readout
from tfstudio.gui.training.curves_view import CurvesView
from tfstudio.gui.training.series import RunSeries


def run(name: str, loss: list[float], elapsed: list[float] | None = None) -> RunSeries:
    n = len(loss)
    return RunSeries(name, steps=list(range(1, n + 1)), loss=list(loss), lr=[1e-3] * n,
                     grad_norm=[0.5 + 0.1 * i for i in range(n)], tokens_per_s=[1000.0] * n,
                     elapsed_s=elapsed or [0.5 * (i + 1) for i in range(n)], total_steps=n,
                     val_steps=[2], val_loss=[2.75], accuracy=[None])


def shown_view(qtbot) -> CurvesView:
    """A curves view on screen, so the pointer's scene positions map to its plots."""
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def hand_ema(values, w):
    """TensorBoard's debiased EMA, written out: a = w a + (1-w) v; shown a / (1 - w^k)."""
    out, a, k = [], 0.0, 0
    for v in values:
        if math.isnan(v):
            out.append(math.nan)
            continue
        a, k = w * a + (1 - w) * v, k + 1
        out.append(a / (1 - w ** k))
    return out


def test_smoothing_is_the_debiased_ema_written_by_hand():
    # by hand at w = 0.5: 1; (0.25 + 1) / 0.75 = 1.6667; (0.625 + 2) / 0.875 = 3.0
    assert np.allclose(ema([1.0, 2.0, 4.0], 0.5), [1.0, 1.25 / 0.75, 3.0])
    values = [3.0, 2.5, float("nan"), 2.0, 2.2, 1.0]
    for w in (0.0, 0.3, 0.9, 0.99):
        assert np.allclose(ema(values, w), hand_ema(values, w), equal_nan=True)


def test_the_slider_draws_the_smoothed_loss_with_the_raw_curve_faint_behind(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    losses = [4.0, 3.0, 3.5, 2.0, 2.5, 1.0]
    view.add_series(run("tiny-gpt · 08:00:00", losses))
    curves = view.entries[0].curves
    assert np.allclose(curves["loss"].yData, losses)  # at 0: raw
    assert not curves["loss_raw"].isVisible()
    view.reader.smoothing.setValue(60)
    assert view.reader.smoothing_label.text() == "Smoothing 0.60"
    assert np.allclose(curves["loss"].yData, hand_ema(losses, 0.6))
    assert curves["loss_raw"].isVisible()
    assert np.allclose(curves["loss_raw"].yData, losses)
    raw_pen, pen = curves["loss_raw"].opts["pen"], curves["loss"].opts["pen"]
    assert raw_pen.color().alpha() < pen.color().alpha() // 2  # faint behind
    assert raw_pen.color().rgb() == pen.color().rgb()           # the same run's colour
    grads = view.entries[0].series.grad_norm
    assert np.allclose(curves["grad"].yData, hand_ema(grads, 0.6))


def test_the_readout_names_each_run_and_its_values_at_the_step():
    first = run("tiny-gpt · 08:00:00", [4.0, 3.0, 2.0, 1.5])
    second = run("tiny-llama · 08:05:00", [5.0, 4.5, 4.0, 3.5])
    text = readout([first, second], 3.2, "step")
    lines = text.splitlines()
    assert lines[0].startswith("tiny-gpt · 08:00:00: step 3 · loss 2 ·")
    assert lines[1].startswith("tiny-llama · 08:05:00: step 3 · loss 4 ·")
    assert "val 2.75 at step 2" in lines[0] and "grad norm 0.7" in lines[0]
    second.loss[2] = 0.25  # flip which run is lower at step 3: the text follows
    assert "step 3 · loss 0.25" in readout([first, second], 3.2, "step").splitlines()[1]


def test_pointing_at_a_plot_reads_the_step_under_the_pointer(qtbot):
    view = shown_view(qtbot)
    first = run("run A", [4.0, 3.0, 2.0, 1.5, 1.2])
    second = run("run B", [5.0, 4.5, 4.0, 3.5, 3.0])
    view.add_series(first)
    view.add_series(second)
    box = view.loss_plot.getViewBox()
    box.setXRange(0, 6, padding=0)
    view.plots.scene().sigMouseMoved.emit(box.mapViewToScene(QPointF(4.1, 2.0)))
    text = view.reader.text.text()
    assert "run A: step 4 · loss 1.5" in text and "run B: step 4 · loss 3.5" in text
    assert all(line.isVisible() and abs(line.value() - 4.1) < 1e-6
               for line in view.reader.lines)
    view.reader.smoothing.setValue(50)  # the readout adds the smoothed value it draws
    assert f"loss 1.5 (smoothed {hand_ema(first.loss, 0.5)[3]:.4g})" in view.reader.text.text()


def test_the_readout_is_a_box_beside_the_pointer_that_leaves_with_it(qtbot):
    view = shown_view(qtbot)
    view.add_series(run("run A", [4.0, 3.0, 2.0, 1.5, 1.2]))
    box, readout = view.loss_plot.getViewBox(), view.reader.text
    box.setXRange(0, 6, padding=0)
    assert not readout.isVisible()          # nothing read yet: no box over the curves
    for x in (1.0, 5.5):                    # near the left edge, then the right
        scene = box.mapViewToScene(QPointF(x, 2.0))
        view.plots.scene().sigMouseMoved.emit(scene)
        pointer = view.plots.mapTo(view.scroll, view.plots.mapFromScene(scene))
        assert readout.isVisible() and "run A: step" in readout.text()
        assert view.scroll.rect().contains(readout.geometry())        # inside, never cut
        assert not readout.geometry().contains(pointer)               # beside, not under it
    QApplication.sendEvent(view.plots, QEvent(QEvent.Leave))
    assert not readout.isVisible()


def test_a_wall_time_axis_places_points_at_the_logged_times(qtbot):
    view = CurvesView()
    qtbot.addWidget(view)
    elapsed = [1.0, 2.0, 10.0, 11.0]  # a pause between steps 2 and 3
    series = run("tiny-gpt · 08:00:00", [4.0, 3.0, 2.0, 1.0], elapsed)
    view.add_series(series)
    curves = view.entries[0].curves
    assert np.allclose(curves["loss"].xData, [1, 2, 3, 4])
    view.reader.x_axis.setCurrentIndex(view.reader.x_axis.findData(WALL))
    assert np.allclose(curves["loss"].xData, elapsed)
    assert np.allclose(curves["val"].xData, [2.0])  # validation at step 2: 2.0 s
    assert view.lr_plot.getAxis("bottom").labelText == "seconds since the start"
    # 9 s is nearer step 3 (10 s) than step 2 (2 s), though 9 as a step would be past the end
    assert readout([series], 9.0, WALL).startswith("tiny-gpt · 08:00:00: step 3 (10.0 s)")


def test_each_curves_x_axis_title_fits_its_plot_at_1366x768(open_training_window, qtbot):
    """The third plot's axis title was cut ("…since the run start") on wall time."""
    from tfstudio.gui.training.curve_math import WALL
    window = open_training_window((1366, 768))
    window.training.show_panel()
    curves = window.training.panel.curves
    reader = curves.reader
    reader.x_axis.setCurrentIndex(reader.x_axis.findData(WALL))
    qtbot.wait(50)
    for plot in (curves.acc_plot, curves.lr_plot, curves.speed_plot):
        axis = plot.getAxis("bottom")
        title = axis.label.toPlainText()
        assert "since" in title, title
        assert axis.label.boundingRect().width() <= axis.geometry().width(), title
