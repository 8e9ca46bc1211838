"""View navigation and keyboard: zoom around the cursor, pan, Tab to search, shortcuts,
the presets gallery, and an exception in a slot that does not take the editor down."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QKeySequence, QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tfstudio.graph import SetParam
from tfstudio.gui.dialogs import PresetGallery
from tfstudio.gui.errors import install_excepthook
from tfstudio.gui.gallery_lines import gallery_order, preset_facts
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.presets import load_preset, preset_names


@pytest.fixture
def window(make_window):
    return make_window(load_preset("tiny-gpt"))


def wheel(view, at: QPoint, steps: int) -> None:
    event = QWheelEvent(QPointF(at), QPointF(view.viewport().mapToGlobal(at)), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase,
                        False)
    QApplication.sendEvent(view.viewport(), event)


def test_wheel_zooms_around_the_cursor(window):
    view = window.view
    view.set_zoom(1.0)
    at = QPoint(300, 200)
    under = view.mapToScene(at)
    wheel(view, at, 2)
    assert view.zoom == pytest.approx(1.15 ** 2)
    after = view.mapToScene(at)
    # the scene point under the cursor stays under the cursor (to within a pixel or two)
    assert abs(after.x() - under.x()) < 2.0 and abs(after.y() - under.y()) < 2.0
    for _ in range(40):
        wheel(view, at, -1)
    assert view.zoom == pytest.approx(0.08)  # clamped: never lost in an infinitely small view


def mouse(view, kind, button, buttons, at: QPointF):
    event = QMouseEvent(kind, at, view.viewport().mapToGlobal(at), button, buttons,
                        Qt.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


def test_middle_drag_and_space_drag_pan_the_view(window):
    view = window.view
    view.set_zoom(1.0)
    start = QPointF(400, 300)
    centre = view.mapToScene(view.viewport().rect().center())
    mouse(view, QEvent.MouseButtonPress, Qt.MiddleButton, Qt.MiddleButton, start)
    mouse(view, QEvent.MouseMove, Qt.NoButton, Qt.MiddleButton, start + QPointF(-100, -40))
    mouse(view, QEvent.MouseButtonRelease, Qt.MiddleButton, Qt.NoButton, start + QPointF(-100, -40))
    moved = view.mapToScene(view.viewport().rect().center())
    assert moved.x() - centre.x() == pytest.approx(100, abs=1)
    assert moved.y() - centre.y() == pytest.approx(40, abs=1)

    selected_before = window.scene.selected_node_ids()
    QTest.keyPress(view, Qt.Key_Space)
    mouse(view, QEvent.MouseButtonPress, Qt.LeftButton, Qt.LeftButton, start)
    mouse(view, QEvent.MouseMove, Qt.NoButton, Qt.LeftButton, start + QPointF(50, 0))
    mouse(view, QEvent.MouseButtonRelease, Qt.LeftButton, Qt.NoButton, start + QPointF(50, 0))
    QTest.keyRelease(view, Qt.Key_Space)
    again = view.mapToScene(view.viewport().rect().center())
    assert again.x() - moved.x() == pytest.approx(-50, abs=1)
    assert window.scene.selected_node_ids() == selected_before  # a pan selects nothing


def test_tab_on_the_canvas_opens_search_to_add(window, qtbot):
    window.view.setFocus()
    QTest.keyClick(window.view, Qt.Key_Tab)
    assert window.search.isVisible()
    window.search.edit.setText("dropout")
    QTest.keyClick(window.search.edit, Qt.Key_Return)
    assert not window.search.isVisible()
    assert [n.type for n in window.session.root.nodes_of_type("dropout")] == ["dropout"]


def test_standard_shortcuts_undo_redo_and_delete(window, qtbot):
    window.activateWindow()
    qtbot.waitActive(window)  # window shortcuts reach the active window only
    assert QKeySequence(QKeySequence.StandardKey.Undo) in window.actions.undo.shortcuts()
    window.session.execute(SetParam(("layers",), "attn", "heads", 8))
    window.view.setFocus()
    QTest.keySequence(window, QKeySequence(QKeySequence.StandardKey.Undo))
    assert window.session.root.node("layers").subgraph.node("attn").param("heads") == 4
    QTest.keySequence(window, QKeySequence(QKeySequence.StandardKey.Redo))
    assert window.session.root.node("layers").subgraph.node("attn").param("heads") == 8
    window.scene.select_nodes(["pos"])
    QTest.keyClick(window.view, Qt.Key_Delete)
    assert "pos" not in window.session.root.nodes
    assert window.actions.undo.text() == "&Undo Delete"


def test_new_from_preset_loads_the_choice(window, monkeypatch):
    shown = {}

    def pick_tiny_t5(gallery) -> int:
        """The gallery as the user sees it, tiny-t5 picked: its list, title and facts."""
        gallery.select("tiny-t5")
        shown.update(names=[gallery.list.item(i).text() for i in range(gallery.list.count())],
                     title=gallery.title.text(), description=gallery.description.text(),
                     facts=gallery.facts.text())
        return 1
    monkeypatch.setattr(PresetGallery, "exec", pick_tiny_t5)
    window.new_from_preset()
    # it shows gallery_lines' order and a preset's facts (test_gallery_lines)
    t5 = load_preset("tiny-t5")
    assert shown == {"names": gallery_order(preset_names()), "title": "tiny-t5",
                     "description": t5.meta["description"],
                     "facts": "<br>".join(preset_facts(t5, report_on_graph(t5)))}
    assert window.session.root.meta["name"] == "tiny-t5"
    assert {"encoder", "decoder"} <= set(window.scene.node_items)
    assert not window.session.document.can_undo  # a new document starts a new history


@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_is_reported_and_the_editor_carries_on(window, qtbot, tmp_path):
    log = tmp_path / "errors.log"
    previous = install_excepthook(lambda: window, log)
    try:
        def broken_slot():
            raise RuntimeError("boom in a slot")
        QTimer.singleShot(0, broken_slot)
        qtbot.waitUntil(lambda: "boom in a slot" in window.statusBar().currentMessage(),
                        timeout=3000)
        assert "RuntimeError: boom in a slot" in log.read_text()
        assert window.isVisible()
        assert window._last_error_box.informativeText() == "RuntimeError: boom in a slot"
        window._last_error_box.close()
        # and it still edits
        window.scene.select_nodes(["final_norm"])
        assert window.scene.delete_selected()
    finally:
        sys.excepthook = previous


def test_the_scene_redraws_every_kind_of_graph_change():
    """Every typed change has a handler at the canvas's own level (none falls through): the
    scene's table, read without a window."""
    from tfstudio.graph import GraphChange
    from tfstudio.gui.scene import GraphScene
    assert set(GraphScene.REDRAWS) == set(GraphChange)
    assert all(callable(handler) for handler in GraphScene.REDRAWS.values())
