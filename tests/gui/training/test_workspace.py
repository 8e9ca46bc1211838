"""The Build | Train workspace: at laptop and desktop sizes every training view is readable
without moving a dock (sizes measured on the real widgets), the window never demands more than
1280x720, and each mode remembers its arrangement."""
from __future__ import annotations


import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication


torch.set_num_threads(1)
WAIT_MS = 60_000
PROBE = "Once upon a time there was a girl named Lily."  # 45 characters
MAX_MIN_SIZE = QSize(1280, 720)


def fits(hint: QSize) -> bool:
    return hint.width() <= MAX_MIN_SIZE.width() and hint.height() <= MAX_MIN_SIZE.height()


def settle(qtbot, ms=20):
    qtbot.wait(ms)
    QApplication.processEvents()


def train_briefly(window, qtbot):
    panel = window.training.panel
    s = panel.setup
    s.select_corpus("sample:small")
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(20)
    s.batch.setValue(4)
    s.seq_len.setValue(48)
    s.eval_every.setValue(10)
    s.probe_every.setValue(10)
    s.probe_text.setText(PROBE[:44])
    window.training.train_action.trigger()
    run = panel.run
    qtbot.waitUntil(lambda: not run.active, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.snapshot is not None, timeout=WAIT_MS)
    return panel


def plot_items(view):
    for widget in view.findChildren(pg.GraphicsLayoutWidget):
        if widget.isVisible():
            for item in widget.ci.items:
                if isinstance(item, pg.PlotItem):
                    yield widget, item


def assert_views_readable(panel, qtbot, size):
    for view in (panel.curves, panel.attention, panel.positions, panel.next_token):
        panel.tabs.setCurrentWidget(view)
        settle(qtbot)
        bar = panel.tabs.tabBar()  # every tab in view beside the view's own controls
        assert bar.tabRect(bar.count() - 1).right() <= bar.width(), (size, view)
        assert panel.corners.geometry().left() >= bar.mapTo(panel.tabs, bar.rect().topLeft()).x() \
            + bar.tabRect(bar.count() - 1).right(), (size, view)
        for widget, plot in plot_items(view):
            data = plot.getViewBox().sceneBoundingRect()
            assert data.height() >= 200, (size, view, plot.titleLabel.text, data.height())
            # nothing drawn outside what the widget shows: titles, ticks, labels, legends
            drawn = widget.ci.sceneBoundingRect()
            assert drawn.bottom() <= widget.viewport().height() + 1, (size, view, drawn)
            assert drawn.right() <= widget.viewport().width() + 1, (size, view, drawn)
    # the six curves fit without scrolling (the step axis under the bottom row included)
    panel.tabs.setCurrentWidget(panel.curves)
    settle(qtbot)
    scroll = panel.curves.scroll
    assert panel.curves.plots.height() <= scroll.viewport().height() + 1, (
        size, panel.curves.plots.height(), scroll.viewport().height())
    panel.tabs.setCurrentWidget(panel.attention)
    settle(qtbot)
    heatmap = panel.attention.heatmap
    assert heatmap.isVisible() and len(heatmap.rows) == 44 and len(heatmap.cols) == 44
    assert heatmap.label_font_px() >= 9, (size, heatmap.label_font_px(), heatmap.height())


@pytest.mark.slow
def test_train_workspace_gives_the_views_the_space_at_laptop_and_desktop_sizes(window, qtbot):
    from PySide6.QtWidgets import QApplication

    from tfstudio.gui import theme
    theme.apply_theme(QApplication.instance(), "light")  # the app's look: its padding counts
    training = window.training
    assert fits(window.minimumSizeHint())
    panel = train_briefly(window, qtbot)  # Train switches to the Train workspace
    assert training.workspace.mode == "train"
    assert training.workspace.actions["train"].isChecked()
    settle(qtbot)
    for dock in (window.palette_dock, window.inspector_dock, window.problems_dock):
        assert not dock.isVisible()
    assert training.dock.isVisible() and not training.dock.isFloating()
    strip = window.view
    assert strip.isVisible() and 60 <= strip.height() <= 200  # the graph stays in view
    assert fits(window.minimumSizeHint())
    assert_views_readable(panel, qtbot, "1366x768")

    training.workspace.forget()  # the default arrangement, as a first start at this size
    window.resize(1920, 1080)
    settle(qtbot)
    training.workspace.fit_strip()
    settle(qtbot)
    assert_views_readable(panel, qtbot, "1920x1080")

    training.workspace.set_mode("build")
    settle(qtbot)
    assert window.palette_dock.isVisible() and window.inspector_dock.isVisible()
    assert fits(window.minimumSizeHint())
    training.dock.show()  # the training dock beside the editor's docks, as View could show it
    settle(qtbot)
    assert fits(window.minimumSizeHint()), window.minimumSizeHint()


@pytest.mark.slow
def test_each_workspace_remembers_its_arrangement_across_switches_and_sessions(
        open_training_window, qtbot):
    window = open_training_window()
    workspace = window.training.workspace
    window.training.show_panel()
    settle(qtbot)
    assert workspace.mode == "train" and window.training.dock.isVisible()
    window.problems_dock.show()  # the user brings the problems back in Train mode
    settle(qtbot)
    workspace.set_mode("build")
    settle(qtbot)
    assert window.palette_dock.isVisible() and not window.training.dock.isVisible()
    window.palette_dock.hide()  # ... and hides the palette while building
    workspace.set_mode("train")
    settle(qtbot)
    assert window.problems_dock.isVisible() and not window.palette_dock.isVisible()
    workspace.set_mode("build")
    settle(qtbot)
    assert not window.palette_dock.isVisible() and not window.problems_dock.isHidden()
    window.training._panel.shutdown()
    window.close()  # the session ends: its arrangements are saved

    again = open_training_window()  # a new session: both arrangements come back
    again.restore_layout()  # as `tfstudio gui` does on start
    settle(qtbot)
    assert again.training.workspace.mode == "build"
    assert not again.palette_dock.isVisible()
    again.training.show_panel()
    settle(qtbot)
    assert again.problems_dock.isVisible() and again.training.dock.isVisible()


@pytest.mark.slow
def test_a_screenshot_neither_reads_nor_changes_the_remembered_arrangement(
        open_training_window, qtbot):
    """A screenshot taken on a machine where the views were squeezed once showed the canvas
    at 420 of 1080 px: it restored that user's arrangement."""
    window = open_training_window((1366, 768))
    window.training.show_panel()
    settle(qtbot)
    window.problems_dock.show()  # the user's own Train arrangement...
    settle(qtbot)
    window.training.workspace.remember()
    saved = window.settings.value("workspace/train")
    window.training._panel.shutdown()
    window.close()

    shot = open_training_window((1366, 768))  # as `tfstudio gui --screenshot` opens it
    shot.training.workspace.transient()
    shot.training.show_panel()
    settle(qtbot)
    assert not shot.problems_dock.isVisible()  # ...is not what the picture shows
    shot.palette_dock.show()
    settle(qtbot)
    shot.training.workspace.set_mode("build")
    shot.training.workspace.remember()
    assert shot.settings.value("workspace/train") == saved  # and is still what is saved


def test_adding_a_view_to_the_train_workspace_is_one_call(window, qtbot):
    from PySide6.QtWidgets import QLabel, QWidget

    class CompareView(QWidget):
        def __init__(self, panel):
            super().__init__()
            self.panel = panel
            self.corner = QLabel("compare controls")

    window.training.add_view(CompareView, "Compare")  # before the panel exists: added on build
    panel = window.training.panel
    view = panel.tabs.widget(panel.tabs.count() - 1)
    assert isinstance(view, CompareView) and view.panel is panel
    assert panel.tabs.tabText(panel.tabs.count() - 1) == "Compare"
    panel.tabs.setCurrentWidget(view)
    assert panel.corners.currentWidget() is view.corner
    window.training.add_view(lambda p: QLabel("explain"), "Explain")  # after: added at once
    assert panel.tabs.tabText(panel.tabs.count() - 1) == "Explain"
