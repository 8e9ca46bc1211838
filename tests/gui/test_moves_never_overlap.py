"""A block dragged onto another lands clear of it, as node editors snap a drop (the rule is
graph.edit_rules.move_edit)."""
from __future__ import annotations

from PySide6.QtCore import QPointF

from tfstudio.graph.layout import overlapping_pairs
from tfstudio.presets import load_preset


def test_a_block_dragged_on_top_of_another_lands_beside_it(make_window):
    w = make_window(load_preset("tiny-gpt"))
    scene = w.scene
    scene.node_items["pos"].setPos(scene.node_items["final_norm"].pos())   # the drag
    assert scene.commit_moves()                                            # the release
    assert overlapping_pairs(w.session.root) == []
    item, norm = scene.node_items["pos"], scene.node_items["final_norm"]
    assert not item.mapRectToScene(item.body_rect()).intersects(
        norm.mapRectToScene(norm.body_rect()))
    assert "nearest free spot" in w.statusBar().currentMessage()
    w.session.undo()                                                       # one step back
    assert overlapping_pairs(w.session.root) == []


def test_a_block_dragged_close_above_its_neighbour_draws_the_wire_label_off_both(make_window):
    """Token embedding dragged (grid off) 32 units above Positional encoding: the wire turns
    back through that gap, too low for its label above or below the run; the canvas draws
    the label where graph.layout.place_labels puts it, beside the wire, on neither block."""
    w = make_window(load_preset("tiny-gpt"))
    scene = w.scene
    scene.snap_to_grid = False
    scene.node_items["embed"].setPos(QPointF(426.0, -130.0))             # the drag
    assert scene.commit_moves()                                            # the release
    kept = scene.node_items["embed"].pos() - QPointF(426.0, -130.0)         # where dropped
    assert kept.manhattanLength() < 0.1
    wire = next(x for e, x in scene.wire_items.items() if (e.src, e.dst) == ("embed", "pos"))
    label = wire.mapRectToScene(wire.label_rect())
    assert not label.isEmpty()
    assert [nid for nid, item in scene.node_items.items()
            if label.intersects(item.mapRectToScene(item.body_rect()))] == []
