"""The training views while and after a run: every tab title in view on a laptop screen, the
whole learned positional table shown, unchanged tensors not drawn again, and a live look inside
that waits for its redraw budget still reaching the views by the end of the run."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from gui_runs import WAIT_MS, short_run
from PySide6.QtWidgets import QApplication, QToolButton

from tfstudio.presets import load_preset

torch.set_num_threads(1)


def settle(qtbot, ms=20):
    qtbot.wait(ms)
    QApplication.processEvents()


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_every_tab_title_is_in_view_whichever_tab_is_current(open_training_window, qtbot,
                                                             size):
    window = open_training_window(size)
    window.training.show_panel()
    panel = window.training.panel
    short_run(panel, qtbot, probe_every=2)  # a run's figures and name fill the Curves controls
    bar = panel.tabs.tabBar()
    assert bar.count() >= 6
    for current in range(bar.count()):
        panel.tabs.setCurrentIndex(current)
        settle(qtbot)
        arrows = [b for b in bar.findChildren(QToolButton) if b.isVisible()]
        assert not arrows, (size, bar.tabText(current), "the tab bar scrolls")
        for i in range(bar.count()):
            assert bar.rect().contains(bar.tabRect(i)), (size, bar.tabText(current),
                                                         bar.tabText(i), bar.tabRect(i),
                                                         bar.rect())
        corner = panel.corners.geometry()  # nothing beside the tabs covers the last title
        last = bar.tabRect(bar.count() - 1).translated(bar.pos())
        assert corner.width() == 0 or corner.left() >= last.right(), (size, corner, last)


def test_the_positions_view_holds_every_row_of_a_learned_table(qtbot):
    from tfstudio.compiler import compile_graph
    from tfstudio.gui.training.positions_view import PositionsView
    from tfstudio.probes.snapshot import shown_positions

    torch.manual_seed(0)
    model = compile_graph(load_preset("tiny-gpt"))
    weight = model.pos.table.weight.detach().numpy()  # what a learned table adds: its rows
    assert weight.shape[0] == 256
    data = shown_positions(model, 64)
    view = PositionsView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    view.show_positions(data, "tiny-gpt")
    page = view.stack.currentWidget()
    assert page.table.matrix.shape == weight.shape  # all 256 rows, not the first 64
    np.testing.assert_allclose(page.table.matrix, weight, rtol=1e-6)
    first = weight[:64].astype(np.float64)
    np.testing.assert_allclose(page.similarity.matrix, first @ first.T, rtol=1e-4, atol=1e-5)
    curve_x, _ = page._curves[0].getData()
    assert len(curve_x) == 256  # the waveforms run over the whole table too


def test_the_preview_before_a_run_shows_the_whole_learned_table(make_panel, qtbot):
    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.positions)
    qtbot.waitUntil(lambda: panel.positions.stack.currentWidget() is not panel.positions.empty,
                    timeout=WAIT_MS)
    from tfstudio.compiler import compile_graph
    rows = compile_graph(load_preset("tiny-gpt")).pos.table.weight.shape[0]
    assert panel.positions.stack.currentWidget().table.matrix.shape[0] == rows == 256


def test_positions_equal_to_those_shown_are_not_drawn_again(qtbot, monkeypatch):
    from tfstudio.compiler import compile_graph
    from tfstudio.gui.training.positions_view import PositionsView
    from tfstudio.probes import position_data

    view = PositionsView()
    qtbot.addWidget(view)
    view.show()
    drawn = []
    for page in view.pages.values():
        original = page.display
        monkeypatch.setattr(page, "display",
                            lambda scheme, data, *rows, f=original: (drawn.append(scheme),
                                                                     f(scheme, data, *rows)))
    rope = position_data(compile_graph(load_preset("tiny-llama")), 16)
    view.show_positions(rope, "step 10")
    view.show_positions({k: dict(v) for k, v in rope.items()}, "step 20")  # equal tensors
    assert drawn == ["rope"] and view.source.text() == "step 20"
    torch.manual_seed(1)
    learned = position_data(compile_graph(load_preset("tiny-gpt")), 16)
    view.show_positions(learned, "step 30")
    changed = {"learned": dict(learned["learned"], table=learned["learned"]["table"] + 1.0)}
    view.show_positions(changed, "step 40")  # a learned table that trained: drawn again
    assert drawn == ["rope", "learned", "learned"]
    np.testing.assert_array_equal(view.pages["table"].table.matrix,
                                  learned["learned"]["table"] + 1.0)


def test_a_live_run_ends_with_its_newest_look_drawn(make_panel, qtbot, monkeypatch):
    from tfstudio.gui.training import redraw_pace

    panel = make_panel()
    panel.tabs.setCurrentWidget(panel.positions)
    # every look after the first waits for the redraw budget, beyond the run's end
    monkeypatch.setattr(redraw_pace, "PROBE_REDRAW_SHARE", 1e-6)
    run = short_run(panel, qtbot, steps=12, probe_every=2)
    last = run.latest_probe["step"]
    assert last >= 10 and panel.snapshot["step"] == last == panel.viewed.looks[-1]
    assert f"at step {last}" in panel.positions.source.text()
    assert panel.progress.value() == 12
    assert len(panel.viewed.looks) >= 5  # the looks not drawn still reach the step slider


def test_only_a_learned_table_is_read_whole():
    from tfstudio.compiler import compile_graph
    from tfstudio.probes import position_data
    from tfstudio.probes.snapshot import shown_positions

    rope = shown_positions(compile_graph(load_preset("tiny-llama")), 16)["rope"]
    np.testing.assert_array_equal(rope["offsets"], np.arange(16))  # RoPE: the length asked
    assert rope["similarity"].shape == (16, 16)
    torch.manual_seed(0)
    model = compile_graph(load_preset("tiny-gpt"))
    assert position_data(model, 16)["learned"]["table"].shape[0] == 16  # default: ``length``
    assert position_data(model, 16, table_rows=100)["learned"]["table"].shape[0] == 100
    assert position_data(model, 16, table_rows=10**6)["learned"]["table"].shape[0] == 256


def test_an_svg_of_the_plots_keeps_the_cached_axes_as_vectors(qtbot, tmp_path):
    from PySide6.QtWidgets import QGraphicsItem

    from tfstudio.gui.training.picture_export import export_widget
    from tfstudio.gui.training.curves_view import CurvesView

    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    axis = view.loss_plot.getAxis("left")
    assert axis.cacheMode() == QGraphicsItem.DeviceCoordinateCache  # on screen: a pixmap
    svg = export_widget(view.plots, tmp_path / "curves.svg").read_text()
    assert "<image" not in svg  # ticks, labels and grid drawn as vectors, not as pictures
    assert svg.count("<text") >= 6 * 2 * 3  # six plots, two axes, a few tick labels each
    assert axis.cacheMode() == QGraphicsItem.DeviceCoordinateCache  # and cached again
