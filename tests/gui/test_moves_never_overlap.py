"""A block dragged onto another lands clear of it, as node editors snap a drop (the rule is
graph.edit_rules.move_edit)."""
from __future__ import annotations

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
