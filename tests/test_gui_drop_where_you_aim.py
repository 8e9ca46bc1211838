"""Drop where you aim: a block dropped, double-clicked in the palette or searched over an open
layer frame goes inside the layer (into the one inside its copies share); a block dropped on a
wire is spliced into it; a wire let go in empty space opens a search of the blocks that fit it
and wires the chosen one; wiring into an occupied input says so and is one undo step. Mouse and
drop gestures are real Qt events sent to the canvas."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tfstudio.graph import Disconnect, Edge, dumps
from tfstudio.gui.palette import block_mime
from tfstudio.presets import load_preset


def _window(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.view.set_zoom(0.8)
    return w


def _view_point(w, scene_pos: QPointF) -> QPoint:
    return w.view.mapFromScene(scene_pos)


def _drag_over(w, block_type: str, at: QPoint) -> None:
    """What a drag from the palette sends the canvas: it enters, then moves to ``at``."""
    mime = block_mime(block_type)
    enter = QDragEnterEvent(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(w.view.viewport(), enter)
    move = QDragMoveEvent(at, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(w.view.viewport(), move)


def _drop(w, block_type: str, at: QPoint) -> None:
    mime = block_mime(block_type)
    drop = QDropEvent(QPointF(at), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(w.view.viewport(), drop)


def _inner_wire_point(w, group: str, edge: Edge) -> QPointF:
    """A scene point on the wire ``edge`` drawn inside the open frame of ``group``."""
    item = w.scene.node_items[group]
    path = item._inner_wires[item._inner_edges.index(edge)]
    return item.mapToScene(path.pointAtPercent(0.5))


def _new_ids(before, graph) -> list[str]:
    return [n for n in graph.nodes if n not in before]


def test_palette_double_click_over_the_open_layer_adds_inside_the_layer(make_window):
    w = _window(make_window)
    frame = w.scene.node_items["layers"]
    w.view.centerOn(frame.sceneBoundingRect().center())
    root_before = set(w.session.root.nodes)
    inside_before = set(w.session.root.node("layers").subgraph.nodes)
    norm = next(i for i in w.palette.block_items() if i.data(0, Qt.UserRole + 1) == "norm")
    w.palette.tree.scrollToItem(norm)
    rect = w.palette.tree.visualItemRect(norm)
    # a double-click as the mouse sends it: a click, then the second press
    QTest.mouseClick(w.palette.tree.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    QTest.mouseDClick(w.palette.tree.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    assert set(w.session.root.nodes) == root_before          # nothing at the top level
    inside = w.session.root.node("layers").subgraph
    (added,) = _new_ids(inside_before, inside)
    assert inside.node(added).type == "norm"
    assert "inside" in w.statusBar().currentMessage()
    # one inside for every copy: the compiled layer count is unchanged, each copy has it
    assert w.session.root.node("layers").param("repeat") == 2
    # the added block does not sit on another when the group is entered
    w.scene.enter_group("layers")
    def body(item):
        return item.mapRectToScene(item.body_rect())
    mine = body(w.scene.node_items[added])
    assert not [nid for nid, i in w.scene.node_items.items()
                if nid != added and mine.intersects(body(i))]


def test_tab_search_with_the_pointer_over_the_frame_adds_inside(make_window):
    w = _window(make_window)
    frame = w.scene.node_items["layers"]
    corner = frame.mapToScene(frame.body_rect().bottomRight() - QPointF(20, 12))
    w.open_search(corner)  # what Tab does with the pointer there
    w.search.edit.setText("dropout")
    QTest.keyClick(w.search.edit, Qt.Key_Return)
    assert not any(n.type == "dropout" for n in w.session.root)
    assert any(n.type == "dropout" for n in w.session.root.node("layers").subgraph)


def test_a_block_dragged_over_the_frame_lights_it_and_drops_inside(make_window):
    w = _window(make_window)
    frame = w.scene.node_items["layers"]
    corner = frame.mapToScene(frame.body_rect().bottomRight() - QPointF(20, 12))
    w.view.centerOn(corner)
    at = _view_point(w, corner)
    _drag_over(w, "norm", at)
    assert frame.drop_hint and frame.hot_edge is None
    _drop(w, "norm", at)
    assert not frame.drop_hint                              # the highlight goes with the drop
    assert sum(n.type == "norm" for n in w.session.root) == 1   # only final_norm at the top
    assert sum(n.type == "norm" for n in w.session.root.node("layers").subgraph) == 3


def test_a_dropout_dropped_on_the_residual_wire_is_spliced_in_one_undo_step(make_window):
    w = _window(make_window)
    before = dumps(w.session.root)
    residual = Edge("add_attn", "y", "add_ffn", "in1")
    point = _inner_wire_point(w, "layers", residual)
    w.view.centerOn(point)
    at = _view_point(w, point)
    frame = w.scene.node_items["layers"]
    _drag_over(w, "dropout", at)
    assert frame.hot_edge == residual and not frame.drop_hint    # the wire lights up first
    _drop(w, "dropout", at)
    inside = w.session.root.node("layers").subgraph
    (drop,) = [n.id for n in inside if n.type == "dropout"]
    assert residual not in inside.edges
    assert Edge("add_attn", "y", drop, "x") in inside.edges
    assert Edge(drop, "y", "add_ffn", "in1") in inside.edges
    assert w.session.document.undo_text.startswith("Insert Dropout")
    w.session.undo()
    assert dumps(w.session.root) == before


def test_a_block_dropped_on_a_top_level_wire_is_spliced_in(make_window):
    w = _window(make_window)
    wire = w.scene.wire_items[Edge("final_norm", "y", "head", "x")]
    point = wire.mapToScene(wire._path.pointAtPercent(0.5))
    w.view.centerOn(point)
    at = _view_point(w, point)
    _drag_over(w, "dropout", at)
    assert wire.hot
    _drop(w, "dropout", at)
    (drop,) = [n.id for n in w.session.root if n.type == "dropout"]
    edges = w.session.root.edges
    assert Edge("final_norm", "y", drop, "x") in edges and Edge(drop, "y", "head", "x") in edges
    # a block whose ports do not fit the wire is added beside it, the wire left alone
    w.session.undo()
    wire = w.scene.wire_items[Edge("final_norm", "y", "head", "x")]
    at = _view_point(w, wire.mapToScene(wire._path.pointAtPercent(0.5)))
    _drag_over(w, "token_input", at)
    assert not wire.hot                                       # it would not be spliced
    _drop(w, "token_input", at)
    assert Edge("final_norm", "y", "head", "x") in w.session.root.edges
    assert any(n.type == "token_input" and n.id != "tokens" for n in w.session.root), (
        w.statusBar().currentMessage())


def test_a_dropout_dropped_on_the_embeddings_wire_goes_in_line(make_window):
    """Issue 40's case through a real drop: Dropout onto tiny-gpt's Token embedding ->
    Positional encoding wire stands between them on their row (it landed beside the wire,
    later below the LM head); Positional encoding moved along, the status bar says so."""
    w = _window(make_window)
    wire = w.scene.wire_items[Edge("embed", "y", "pos", "x")]
    point = wire.mapToScene(wire._path.pointAtPercent(0.5))
    w.view.centerOn(point)
    at = _view_point(w, point)
    before = {n: w.scene.node_items[n].sceneBoundingRect() for n in ("embed", "pos", "layers")}
    _drag_over(w, "dropout", at)
    _drop(w, "dropout", at)
    (drop,) = [n.id for n in w.session.root if n.type == "dropout"]
    embed, new, pos = (w.scene.node_items[n].sceneBoundingRect() for n in ("embed", drop, "pos"))
    assert embed.top() == new.top() == pos.top()              # one row
    assert embed.right() < new.left() and new.right() < pos.left()
    assert pos.left() > before["pos"].left()                  # moved along
    assert w.scene.node_items["layers"].sceneBoundingRect() == before["layers"]
    assert "moved along to make room" in w.statusBar().currentMessage()


def _mouse(w, kind, button, buttons, scene_pos: QPointF) -> None:
    at = QPointF(_view_point(w, scene_pos))
    event = QMouseEvent(kind, at, w.view.viewport().mapToGlobal(at), button, buttons,
                        Qt.NoModifier)
    QApplication.sendEvent(w.view.viewport(), event)


def test_a_wire_let_go_in_empty_space_searches_blocks_that_fit_and_wires_one(make_window):
    w = _window(make_window)
    port = w.scene.node_items["final_norm"].outputs["y"]
    start = port.scenePos()
    empty = start + QPointF(120, 260)
    w.view.centerOn(start + QPointF(80, 60))
    _mouse(w, QEvent.MouseButtonPress, Qt.LeftButton, Qt.LeftButton, start)
    _mouse(w, QEvent.MouseMove, Qt.NoButton, Qt.LeftButton, empty)
    _mouse(w, QEvent.MouseButtonRelease, Qt.LeftButton, Qt.NoButton, empty)
    assert w.search.isVisible()
    shown = w.search.result_types()
    assert "norm" in shown and "lm_head" in shown              # they take the hidden stream
    assert "token_embedding" not in shown and "token_input" not in shown   # they do not
    assert "takes hidden" in w.search.edit.placeholderText()
    w.search.edit.setText("dropout")
    w.search.accept_current()
    (new,) = [n for n in w.session.root.nodes if n not in load_preset("tiny-gpt").nodes]
    assert w.session.root.edge_into(new, "x") == Edge("final_norm", "y", new, "x")
    w.session.undo()                                         # block and wire: one step
    assert new not in w.session.root.nodes


def test_wiring_into_an_occupied_input_says_so_and_undoes_in_one_step(make_window):
    w = _window(make_window)
    assert w.scene.connect_ports("embed", "y", "final_norm", "x")
    assert "Replaced the wire from layers into final_norm's input 'x'" in (
        w.statusBar().currentMessage())
    assert "Replaced" in w.scene.note_text
    assert w.session.root.edge_into("final_norm", "x") == Edge("embed", "y", "final_norm", "x")
    w.session.undo()
    assert w.session.root.edge_into("final_norm", "x") == Edge("layers", "y", "final_norm", "x")


def test_a_wire_pulled_from_a_free_input_into_space_adds_a_block_that_feeds_it(make_window):
    w = _window(make_window)
    w.session.execute(Disconnect((), Edge("final_norm", "y", "head", "x")))
    port = w.scene.node_items["head"].inputs["x"]
    w.scene.begin_wire(port, port.scenePos())
    w.scene.finish_wire(port.scenePos() + QPointF(-40, 300))      # empty canvas below
    assert w.search.isVisible() and "gives hidden" in w.search.edit.placeholderText()
    assert "token_input" not in w.search.result_types()           # gives ids, not the stream
    w.search.edit.setText("norm")
    w.search.accept_current()
    new = w.session.root.edge_into("head", "x")
    assert new is not None and w.session.root.node(new.src).type == "norm"


def test_a_block_dropped_on_a_frame_sits_beside_the_block_it_was_dropped_by(make_window):
    """Dropped on an open frame's empty part just under the Self-attention, the block goes
    inside the group and, entered, stands next to the Self-attention (it went to the level's
    bottom-left corner, in the last band)."""
    from tfstudio.graph.layout import NODE_WIDTH, block_rects
    w = make_window(load_preset("tiny-gpt"))
    frame = w.scene.node_items["layers"]
    attn = next(m for m in frame._minis if m.node.id == "attn")
    spot = frame.mapToScene(attn.rect.center().x(), attn.rect.bottom() + 12)
    nid = w.scene.add_block("dropout", spot)
    inside = w.session.root.node("layers").subgraph
    assert nid in inside.nodes
    rects = block_rects(inside)
    centre = lambda r: (r[0] + r[2] / 2, r[1] + r[3] / 2)  # noqa: E731
    dx, dy = (a - b for a, b in zip(centre(rects[nid]), centre(rects["attn"])))
    assert (dx * dx + dy * dy) ** 0.5 < 2 * NODE_WIDTH      # a block's width or so away


def test_a_block_dropped_on_a_frame_shows_in_the_frame_by_the_block_it_was_dropped_by(
        make_window):
    """In the open frame itself (not entered), the block dropped by the Feed-forward stands
    in the Feed-forward's column (it stood at the frame's bottom-left, by the group's input,
    as seen in a real drag under Xvfb)."""
    w = make_window(load_preset("tiny-gpt"))
    frame = w.scene.node_items["layers"]
    ffn = next(m for m in frame._minis if m.node.id == "ffn")
    spot = frame.mapToScene(ffn.rect.center().x(), ffn.rect.bottom() + 12)
    nid = w.scene.add_block("norm", spot)
    frame = w.scene.node_items["layers"]                     # redrawn with the new block
    minis = {m.node.id: m.rect for m in frame._minis}
    assert nid in minis
    assert abs(minis[nid].center().x() - minis["ffn"].center().x()) < minis["ffn"].width()
    assert minis[nid].center().x() > minis["add_attn"].right()
