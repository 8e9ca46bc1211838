"""A block inside an open layer frame is edited where it is drawn: one click shows it in the
inspector, a double-click enters the group with it selected."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tfstudio.presets import load_preset


def _mini_point(w, group: str, inner: str):
    item = w.scene.node_items[group]
    mini = next(m for m in item._minis if m.node.id == inner)
    return w.view.mapFromScene(item.mapToScene(mini.rect.center()))


def test_one_click_on_an_inner_block_shows_that_block(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    w.view.fit_to_view()
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier,
                     _mini_point(w, "layers", "attn"))
    qtbot.waitUntil(lambda: w.inspector.node_id == "attn")
    assert w.inspector.path == ("layers",) and w.scene.path == ()
    assert "heads" in w.inspector.editors                       # its settings, editable
    assert w.inspector.set_param("heads", 8)
    assert w.session.root.node("layers").subgraph.node("attn").param("heads") == 8
    # a click on the frame's header shows the layer again
    header = w.view.mapFromScene(w.scene.node_items["layers"].mapToScene(60, 12))
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier, header)
    qtbot.waitUntil(lambda: w.inspector.node_id == "layers")
    assert w.inspector.path == ()


def test_delete_after_a_click_inside_removes_that_block_not_the_layer(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    w.view.fit_to_view()
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier,
                     _mini_point(w, "layers", "norm_ffn"))
    assert w.scene.inner_selected == ("layers", "norm_ffn")
    assert w.scene.delete_selected()
    assert "layers" in w.session.root.nodes
    assert "norm_ffn" not in w.session.root.node("layers").subgraph.nodes


def test_double_click_on_an_inner_block_enters_with_it_selected(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    w.view.fit_to_view()
    QTest.mouseDClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier,
                      _mini_point(w, "layers", "ffn"))
    assert w.scene.path == ("layers",)
    assert w.scene.selected_node_ids() == ["ffn"]
    qtbot.waitUntil(lambda: w.inspector.node_id == "ffn")
