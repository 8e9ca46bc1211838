"""Desktop editor conventions and a 1366x768 screen: Ctrl+Shift+Z redoes as Ctrl+Y does, Help
lists the keyboard shortcuts made from the actions, the canvas's context menu has Enter group,
Tidy and Add block, the empty Problems dock is one line and opens on the first problem, and a
user's name never widens the window (elided, its line breaks read as spaces)."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from tfstudio.graph import Disconnect, Edge, Graph
from tfstudio.gui.actions import shortcut_rows
from tfstudio.gui.text import short_name
from tfstudio.presets import load_preset


def test_ctrl_shift_z_redoes_like_ctrl_y(make_window):
    """Both keys are the redo action's, and no other action claims them (an ambiguous key
    does nothing in Qt). Offscreen windows never become active, so the key press itself
    is not sent here."""
    w = make_window(load_preset("tiny-gpt"))
    for key in ("Ctrl+Shift+Z", "Ctrl+Y"):
        owners = [a for a in w.findChildren(QAction) if QKeySequence(key) in a.shortcuts()]
        assert owners == [w.actions.redo], key
    w.session.execute(Disconnect((), Edge("final_norm", "y", "head", "x")))
    w.session.undo()
    w.actions.redo.trigger()
    assert w.session.root.edge_into("head", "x") is None


def test_help_lists_every_shortcut_made_from_the_actions(make_window):
    w = make_window(Graph())
    rows = dict(shortcut_rows(w.actions))
    assert rows["Group"] == QKeySequence("Ctrl+G").toString(QKeySequence.NativeText)
    assert "Ctrl+Shift+Z" in rows["Redo"]
    box = w.show_shortcuts()
    for name, keys in rows.items():
        assert name in box.text()
    # a new shortcut shows up without touching the list
    w.actions.code.setShortcut(QKeySequence("Ctrl+Alt+P"))
    assert "Generated PyTorch code" in dict(shortcut_rows(w.actions))
    help_menu = [m for m in w.menuBar().actions() if m.text() == "&Help"][0].menu()
    assert w.actions.shortcuts in help_menu.actions()


def test_the_context_menu_enters_groups_tidies_and_adds(make_window):
    w = make_window(load_preset("tiny-gpt"))
    actions = [a for a in w.view.context_actions if a is not None]
    for wanted in (w.actions.enter_group, w.actions.tidy, w.actions.add_block):
        assert wanted in actions
    w.scene.select_nodes(["embed"])
    assert not w.actions.enter_group.isEnabled()
    w.scene.select_nodes(["layers"])
    assert w.actions.enter_group.isEnabled()
    w.actions.enter_group.trigger()
    assert w.scene.path == ("layers",)


def test_the_problems_dock_is_one_line_until_there_is_a_problem(make_window):
    w = make_window(load_preset("tiny-gpt"))
    assert w.problems.collapsed
    assert w.problems_dock.height() < 70
    w.session.execute(Disconnect(("layers",), Edge("norm_attn", "y", "attn", "x")))
    w.session.refresh_report()
    assert not w.problems.collapsed
    from PySide6.QtWidgets import QApplication
    QApplication.processEvents()
    assert w.problems_dock.height() > 100                        # opened on the problem
    w.session.undo()
    w.session.refresh_report()
    QApplication.processEvents()
    assert w.problems.collapsed and w.problems_dock.height() < 70


def test_short_names_read_as_one_line_and_elide_in_the_middle():
    assert short_name("tiny\ngpt\tv2") == "tiny gpt v2"
    long = short_name("a" * 30 + "b" * 10_000 + "c" * 30)
    assert len(long) == 48 and long.startswith("aaaa") and long.endswith("cccc") and "…" in long


def test_a_name_of_ten_thousand_characters_does_not_widen_the_window(make_window, qtbot):
    graph = load_preset("tiny-gpt")
    graph.meta["name"] = "x" * 5_000 + "\n" + "y" * 5_000
    w = make_window(graph)
    w.resize(1366, 768)
    w.scene.clearSelection()
    w.inspector.rebuild()
    w.scene.set_path(("layers",))
    from PySide6.QtWidgets import QApplication
    QApplication.processEvents()
    assert w.width() <= 1366
    assert "\n" not in w.windowTitle() and len(w.windowTitle()) < 100
    assert all(len(b.text()) <= 48 for b in w.breadcrumb.buttons)
    assert w.minimumSizeHint().width() <= 1366


def test_every_block_title_fits_its_small_block_in_an_open_frame(make_window):
    """"Mixture of experts" was cut to "Mixture of expe…": the fitted size rounded up."""
    from PySide6.QtGui import QFontMetricsF
    from tfstudio.gui.title_fit import title_font_fitting
    from tfstudio.graph import all_specs
    for boost in (1.0, 1.2):
        for spec in all_specs():
            font = title_font_fitting(spec.title, 12 * boost, 114.0, floor=10)
            fits = QFontMetricsF(font).horizontalAdvance(spec.title) <= 114.0
            assert fits or font.pixelSize() == 10, spec.title
    moe = title_font_fitting("Mixture of experts", 12 * 1.2, 114.0, floor=10)
    assert QFontMetricsF(moe).horizontalAdvance("Mixture of experts") <= 114.0


def test_a_pill_at_the_canvas_edge_never_covers_a_block_title(make_window, qtbot):
    """tiny-t5 and t5-small at 1366x768: the pills naming the layers out of view sit on
    the edge where no block's title (nor a small block's title in a frame) is."""
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QApplication
    seen = 0
    for preset in ("tiny-t5", "t5-small"):
        w = make_window(load_preset(preset))
        w.resize(1366, 768)
        qtbot.wait(10)
        for centre_on in (None, "encoder", "decoder"):
            w.view.fit_to_view()
            if centre_on:
                w.view.centerOn(w.scene.node_items[centre_on].sceneBoundingRect().topLeft())
            w.view.update_markers()
            QApplication.processEvents()
            titles = w.view.edge_markers.title_rects()
            for marker in (m for m in w.view.markers if m.isVisible()):
                seen += 1
                box = QRectF(marker.geometry())
                assert not any(box.intersects(t) for t in titles), (preset, marker.text())
    assert seen  # the check looked at pills


def test_each_toolbar_word_means_one_thing(window):
    """Starting a run and showing the Train workspace were two buttons both called Train."""
    from PySide6.QtWidgets import QToolBar
    toolbar = window.findChild(QToolBar, "main_toolbar")
    words = [a.iconText().strip("▶ ").lower() for a in toolbar.actions()
             if not a.isSeparator() and a.isVisible()]
    assert len(words) == len(set(words)), words
    assert "start training" in words and "train" in words


def test_the_shortcut_list_names_the_workspaces_and_stays_the_same_after_an_edit(
        open_training_window):
    from tfstudio.graph import SetParam
    w = open_training_window()
    rows = dict(shortcut_rows(w.actions, w))
    assert rows["Build workspace"] == "Ctrl+1" and rows["Train workspace"] == "Ctrl+2"
    w.session.execute(SetParam(("layers",), "attn", "heads", 8))
    assert w.actions.undo.text() == "&Undo Change parameter"  # the menu says what it undoes
    box = w.show_shortcuts()
    assert dict(shortcut_rows(w.actions, w)) == rows          # the list does not
    assert "Undo Change" not in box.text() and "Ctrl+1" in box.text()


def test_a_right_click_selects_as_editor_state_context_selection_says(make_window):
    """The adapter of context_selection: real context-menu events on the canvas (the menu
    itself left out: no actions)."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication

    w = make_window(load_preset("tiny-gpt"))
    view, scene = w.view, w.scene
    view.context_actions = []

    def right_click(at: QPoint) -> list[str]:
        QApplication.sendEvent(view.viewport(), QContextMenuEvent(
            QContextMenuEvent.Mouse, at, view.viewport().mapToGlobal(at)))
        return sorted(scene.selected_node_ids())

    def on(node_id: str) -> QPoint:
        item = scene.node_items[node_id]
        return view.mapFromScene(item.mapToScene(item.body_rect().center()))
    scene.select_nodes(["embed", "pos"])
    assert right_click(on("embed")) == ["embed", "pos"]       # a selected block: kept
    assert right_click(on("head")) == ["head"]                # another block: only it
    view.centerOn(scene.itemsBoundingRect().bottomRight())
    empty = view.mapFromScene(scene.itemsBoundingRect().bottomRight() + QPointF(60, 60))
    assert view.itemAt(empty) is None
    assert right_click(empty) == []                           # the empty canvas: nothing
