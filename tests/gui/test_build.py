"""Build a working tiny GPT from an empty canvas the way a mouse does, compile it, run it,
then undo every step back to nothing and redo it all."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tfstudio.graph import Edge, Graph, dumps


@pytest.fixture
def window(make_window):
    return make_window(Graph(meta={"name": "scratch"}))


def palette_item(window, block_type):
    return next(i for i in window.palette.block_items() if i.data(0, Qt.UserRole + 1) == block_type)


def drop_from_palette(window, block_type, scene_xy) -> str:
    """Drag a palette entry onto the canvas: the palette's own mime data, the view's drop."""
    mime = window.palette.tree.mimeData([palette_item(window, block_type)])
    view = window.view
    at = QPointF(view.mapFromScene(QPointF(*scene_xy)))
    before = set(window.scene.graph.nodes)
    enter = QDragEnterEvent(at.toPoint(), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(view.viewport(), enter)
    assert enter.isAccepted()
    drop = QDropEvent(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(view.viewport(), drop)
    (new,) = set(window.scene.graph.nodes) - before
    return new


def wire(window, src, src_port, dst, dst_port) -> None:
    """Drag from an output port to an input port (the calls the port's mouse handlers make)."""
    scene = window.scene
    start = scene.node_items[src].outputs[src_port]
    end = scene.node_items[dst].inputs[dst_port]
    scene.begin_wire(start, start.scenePos())
    scene.drag_wire((start.scenePos() + end.scenePos()) / 2)
    scene.drag_wire(end.scenePos() + QPointF(3, -2))  # near the port is close enough
    assert scene.finish_wire(end.scenePos() + QPointF(3, -2))


def mouse_wire(window, src, src_port, dst, dst_port) -> None:
    """The same gesture with real mouse events on the canvas widget."""
    view, scene = window.view, window.scene
    start = view.mapFromScene(scene.node_items[src].outputs[src_port].scenePos())
    end = view.mapFromScene(scene.node_items[dst].inputs[dst_port].scenePos())
    QTest.mousePress(view.viewport(), Qt.LeftButton, Qt.NoModifier, start)
    for t in (0.3, 0.7, 1.0):
        p = QPointF(start + (end - start) * t)
        move = QMouseEvent(QEvent.MouseMove, p, view.viewport().mapToGlobal(p), Qt.NoButton,
                           Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(view.viewport(), move)
    QTest.mouseRelease(view.viewport(), Qt.LeftButton, Qt.NoModifier, end)


def set_param(window, node_id, name, value):
    """Select the block and commit a value through its inspector editor."""
    window.scene.select_nodes([node_id])
    window.inspector.rebuild()
    editor = window.inspector.editors[name].widget
    editor.setValue(value)  # a spin box with keyboard tracking off commits at once


def test_build_tiny_gpt_from_empty_canvas_then_undo_and_redo_everything(window, qtbot):
    import torch

    import tfstudio

    assert not window.scene.node_items
    steps = 0
    x = lambda i: 280.0 * i  # one column per block, left to right
    tokens = drop_from_palette(window, "token_input", (x(0), 0))
    embed = drop_from_palette(window, "token_embedding", (x(1), 0))
    pos = drop_from_palette(window, "positional_encoding", (x(2), 0))
    norm1 = drop_from_palette(window, "norm", (x(3), 120))
    attn = drop_from_palette(window, "attention", (x(4), 120))
    add1 = drop_from_palette(window, "add", (x(5), 0))
    norm2 = drop_from_palette(window, "norm", (x(6), 120))
    ffn = drop_from_palette(window, "feed_forward", (x(7), 120))
    add2 = drop_from_palette(window, "add", (x(8), 0))
    final = drop_from_palette(window, "norm", (x(9), 0))
    head = drop_from_palette(window, "lm_head", (x(10), 0))
    steps += 11
    assert len(window.scene.node_items) == 11
    window.view.fit_to_view()

    mouse_wire(window, tokens, "ids", embed, "ids")
    assert Edge(tokens, "ids", embed, "ids") in window.session.root.edges
    for edge in [(embed, "y", pos, "x"), (pos, "y", norm1, "x"), (norm1, "y", attn, "x"),
                 (pos, "y", add1, "in1"), (attn, "y", add1, "in2"), (add1, "y", norm2, "x"),
                 (norm2, "y", ffn, "x"), (add1, "y", add2, "in1"), (ffn, "y", add2, "in2"),
                 (add2, "y", final, "x"), (final, "y", head, "x")]:
        wire(window, *edge)
    steps += 12
    assert len(window.session.root.edges) == 12 == len(window.scene.wire_items)

    set_param(window, embed, "d_model", 64)
    set_param(window, ffn, "d_ff", 256)
    steps += 2

    # the two sublayers become one layer group, repeated twice
    window.scene.select_nodes([norm1, attn, add1, norm2, ffn, add2])
    group = window.group_selection()
    set_param(window, group, "repeat", 2)
    steps += 2
    root = window.session.root
    assert root.node(group).is_group and len(root.node(group).subgraph.nodes) == 8

    window.session.refresh_report()
    assert window.session.report.diagnostics == []
    # d_model 64 flows to every wire after the embedding: B×T×64 written on the wire
    assert window.scene.wire_items[Edge(group, "y", final, "x")].label == "B×T×64"

    model = tfstudio.compile_graph(root)
    ids = torch.randint(0, 256, (2, 16))
    logits = model(ids)
    assert tuple(logits.shape) == (2, 16, 256)
    assert torch.isfinite(logits).all()
    # two layers of (2 norms + attention + FFN), as built
    expected = (256 * 64                                    # embedding (head tied to it)
                + 2 * (2 * 2 * 64                           # two LayerNorms
                       + 4 * (64 * 64 + 64)                 # q, k, v, o with biases
                       + (64 * 256 + 256) + (256 * 64 + 64))  # FFN with biases
                + 2 * 64)                                   # final LayerNorm
    assert sum(p.numel() for p in model.parameters()) == expected

    finished = dumps(root)
    undone = 0
    while window.session.document.can_undo:
        window.session.undo()
        undone += 1
    assert undone == steps
    assert not window.session.root.nodes and not window.session.root.edges
    assert not window.scene.node_items and not window.scene.wire_items
    while window.session.document.can_redo:
        window.session.redo()
    assert dumps(window.session.root) == finished
    assert set(window.scene.node_items) == set(window.session.root.nodes)
    assert len(window.scene.wire_items) == len(window.session.root.edges)
