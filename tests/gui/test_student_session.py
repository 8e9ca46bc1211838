"""The issue's "done when", as a student would do it at 1366x768 with real mouse events: GQA +
RoPE + SwiGLU + RMSNorm + pre-norm from the default in five clicks, a Dropout dropped onto the
layer's residual wire, a Norm dropped into the open layer. After every step the window's
picture is taken and the canvas checked: no wire through a block, no two blocks overlapping,
no block title cut short."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QFontMetricsF
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tfstudio.graph import Edge
from tfstudio.graph.switches import (activation_kind, attention_kind, norm_kind, placement,
                                     positional_scheme)
from tfstudio.graph.layout import HEADER_H
from tfstudio.gui.block_drawing import PAD
from tfstudio.gui.title_fit import title_font_fitting
from tfstudio.gui.palette import block_mime
from tfstudio.presets import load_preset


def _view_point(w, scene_pos: QPointF) -> QPoint:
    return w.view.mapFromScene(scene_pos)


def _drag_over(w, block_type: str, at: QPoint) -> None:
    """What a drag from the palette sends the canvas: it enters, then moves to ``at``."""
    mime = block_mime(block_type)
    for kind in (QDragEnterEvent, QDragMoveEvent):
        QApplication.sendEvent(w.view.viewport(),
                               kind(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))


def _drop(w, block_type: str, at: QPoint) -> None:
    mime = block_mime(block_type)  # kept alive while the event points at it
    QApplication.sendEvent(w.view.viewport(), QDropEvent(
        QPointF(at), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))


def _inner_wire_point(w, group: str, edge: Edge) -> QPointF:
    item = w.scene.node_items[group]
    path = item._inner_wires[item._inner_edges.index(edge)]
    return item.mapToScene(path.pointAtPercent(0.5))


def _body(item):
    return item.mapRectToScene(item.body_rect())


def _check_canvas(w, tmp_path, step: str) -> None:
    assert not w.grab().isNull() and w.grab().save(str(tmp_path / f"{step}.png"))
    items = w.scene.node_items
    bodies = {nid: _body(item) for nid, item in items.items()}
    ids = list(bodies)
    overlaps = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]
                if bodies[a].intersects(bodies[b])]
    assert overlaps == [], step
    for edge, wire in w.scene.wire_items.items():
        path = wire.mapToScene(wire._path)
        samples = [path.pointAtPercent(k / 200) for k in range(1, 200)]
        for nid, body in bodies.items():
            if nid in (edge.src, edge.dst):
                continue
            inner = body.adjusted(6, 6, -6, -6)
            assert not any(inner.contains(p) for p in samples), (step, edge, nid)
    for nid, item in items.items():
        room = item.width - 2 * PAD - 20 - (40 if item.node.is_group else 0)
        font = title_font_fitting(item.node.label, 13, room, floor=11)
        assert QFontMetricsF(font).horizontalAdvance(item.node.label) <= room + 0.5, (step, nid)
    assert w.width() <= 1366 and w.height() <= 768


def test_a_student_builds_a_llama_style_layer_and_drops_blocks_where_aimed(make_window,
                                                                           tmp_path):
    w = make_window(load_preset("tiny-gpt"))
    w.resize(1366, 768)
    w.view.fit_to_view()
    _check_canvas(w, tmp_path, "0-open")

    frame = w.scene.node_items["layers"]
    header = frame.mapToScene(QPointF(frame.width / 2, HEADER_H / 2))
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier,
                     w.view.mapFromScene(header))                       # 1: the layer
    w.inspector.rebuild()
    for n, (key, value) in enumerate((("attention", "gqa"), ("position", "rope"),
                                      ("activation", "swiglu"), ("norm", "rmsnorm")), 2):
        QTest.mouseClick(w.inspector.switch_buttons[key][value], Qt.LeftButton)   # 2-5
        w.inspector.rebuild()
        _check_canvas(w, tmp_path, f"{n}-{value}")
    root = w.session.root
    layer = root.node("layers").subgraph
    assert (attention_kind(layer), positional_scheme(root), activation_kind(layer),
            norm_kind(root), placement(layer)) == ("gqa", "rope", "swiglu", "rmsnorm", "pre")
    assert w.session.document.undo_text.startswith("Switch every norm")   # 4 edits, 4 undos

    residual = Edge("add_attn", "y", "add_ffn", "in1")
    point = _inner_wire_point(w, "layers", residual)
    w.view.centerOn(point)
    _drag_over(w, "dropout", _view_point(w, point))
    _drop(w, "dropout", _view_point(w, point))
    inside = w.session.root.node("layers").subgraph
    (drop,) = [n.id for n in inside if n.type == "dropout"]
    assert Edge("add_attn", "y", drop, "x") in inside.edges
    w.view.fit_to_view()
    _check_canvas(w, tmp_path, "6-dropout")

    frame = w.scene.node_items["layers"]
    corner = frame.mapToScene(frame.body_rect().bottomRight() - QPointF(20, 12))
    w.view.centerOn(corner)
    _drag_over(w, "norm", _view_point(w, corner))
    assert frame.drop_hint
    _drop(w, "norm", _view_point(w, corner))
    norms = [n for n in w.session.root.node("layers").subgraph if n.type == "norm"]
    assert len(norms) == 3 and all(n.param("kind") for n in norms)
    w.view.fit_to_view()
    _check_canvas(w, tmp_path, "7-norm")
