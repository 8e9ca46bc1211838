"""Editing gestures on the canvas: refused wires say why, copy/paste keeps inner wires, groups,
moves and deletes are single undo steps, and search-to-add finds blocks by fuzzy names."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tfstudio.graph import Document, Edge, Graph, dumps, kept_tidy
from tfstudio.graph.edit_rules import set_param_edit
from tfstudio.gui.canvas_units import SPREAD
from tfstudio.gui.fuzzy import fuzzy_score, rank_blocks
from tfstudio.gui.layer_switches import setting_edit
from tfstudio.gui.scene import GRID
from tfstudio.presets import load_preset


def test_a_refused_wire_says_why_on_the_canvas_and_in_the_status_bar(make_window):
    w = make_window(load_preset("tiny-gpt"))
    scene = w.scene
    before = list(w.session.root.edges)
    # token ids (an ids output) cannot feed the LM head's hidden-stream input
    tokens = scene.node_items["tokens"].outputs["ids"]
    head_in = scene.node_items["head"].inputs["x"]
    scene.begin_wire(tokens, tokens.scenePos())
    assert head_in.highlight == "no"            # incompatible ports dim while dragging
    assert scene.node_items["embed"].inputs["ids"].highlight == "ok"
    assert not scene.finish_wire(head_in.scenePos())
    assert w.session.root.edges == before
    assert "gives ids but 'x' takes hidden" in scene.note_text
    assert "gives ids but 'x' takes hidden" in w.statusBar().currentMessage()
    assert not scene.connect_ports("head", "logits", "embed", "ids")
    assert "gives logits but 'ids' takes ids" in scene.note_text
    # a wire that would close a loop is refused too, naming the cycle
    assert not scene.connect_ports("final_norm", "y", "pos", "x")
    assert "cycle" in scene.note_text
    assert w.session.root.edges == before


def test_picking_up_a_wire_from_its_input_moves_or_removes_it(make_window):
    w = make_window(load_preset("tiny-gpt"))
    scene, doc = w.scene, w.session.document
    wire_in = scene.node_items["final_norm"].inputs["x"]
    # drop it on another compatible input: the wire moves there in one undoable step
    scene.begin_wire(wire_in, wire_in.scenePos())
    target = scene.node_items["head"].inputs["x"]
    assert scene.finish_wire(target.scenePos())
    assert Edge("layers", "y", "head", "x") in w.session.root.edges
    assert Edge("layers", "y", "final_norm", "x") not in w.session.root.edges
    assert doc.undo_text == "Reconnect"
    doc.undo()
    assert Edge("layers", "y", "final_norm", "x") in w.session.root.edges
    # drop it in empty space: the wire goes
    scene.begin_wire(wire_in, wire_in.scenePos())
    scene.finish_wire(QPointF(-5000, -5000))
    assert w.session.root.edge_into("final_norm", "x") is None
    # Escape on the canvas lets go of a wire being drawn (canvas_gestures.key_action)
    edges = list(w.session.root.edges)
    out = scene.node_items["tokens"].outputs["ids"]
    scene.begin_wire(out, out.scenePos())
    assert scene.dragging_wire
    QTest.keyClick(w.view, Qt.Key_Escape)
    assert not scene.dragging_wire and w.session.root.edges == edges


def test_copy_paste_of_a_chain_keeps_the_wires_between_copied_blocks(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.select_nodes(["embed", "pos", "layers"])
    w.copy()
    new = w.paste()
    root = w.session.root
    ids = dict(zip(["embed", "pos", "layers"], sorted(new, key=list(root.nodes).index)))
    assert Edge(ids["embed"], "y", ids["pos"], "x") in root.edges
    assert Edge(ids["pos"], "y", ids["layers"], "x") in root.edges
    # wires from outside the selection are not copied: the pasted embedding has no input
    assert root.edge_into(ids["embed"], "ids") is None
    assert sorted(w.scene.selected_node_ids()) == sorted(new)   # what was pasted is selected
    assert w.session.document.undo_text.startswith("Paste")


def test_duplicate_group_ungroup_and_delete(make_window):
    w = make_window(load_preset("tiny-gpt"))
    scene, doc = w.scene, w.session.document
    scene.select_nodes(["final_norm"])
    (dup,) = w.duplicate()
    node = w.session.root.node(dup)
    assert node.type == "norm" and node.params == w.session.root.node("final_norm").params
    doc.undo()

    # group the embedding and positions: one group, wired where they were
    scene.select_nodes(["embed", "pos"])
    gid = w.group_selection()
    root = w.session.root
    assert root.node(gid).is_group
    assert Edge("tokens", "ids", gid, "x") in root.edges  # the first input is the chained "x"
    assert Edge(gid, "y", "layers", "x") in root.edges
    assert doc.undo_text == "Group"
    scene.select_nodes([gid])
    assert w.ungroup_selection()
    root = w.session.root
    assert {"embed", "pos"} <= set(root.nodes) and gid not in root.nodes
    assert Edge("tokens", "ids", "embed", "ids") in root.edges
    assert Edge("pos", "y", "layers", "x") in root.edges

    scene.select_nodes(["final_norm"])
    w.actions.delete.trigger()
    assert "final_norm" not in w.session.root.nodes
    assert "final_norm" not in scene.node_items
    doc.undo()
    assert Edge("layers", "y", "final_norm", "x") in w.session.root.edges
    assert len(scene.wire_items) == len(w.session.root.edges)


def test_dragging_blocks_snaps_to_the_grid_and_is_one_move_command(make_window):
    w = make_window(load_preset("tiny-gpt"))
    view, scene = w.view, w.scene
    view.set_zoom(1.0)
    item = scene.node_items["embed"]
    home = QPointF(item.pos())  # where the opened file put it
    view.centerOn(item)
    start = view.mapFromScene(item.mapToScene(60, 12))  # on the title bar
    end = start + (view.mapFromScene(QPointF(137, 53)) - view.mapFromScene(QPointF(0, 0)))
    QTest.mousePress(view.viewport(), Qt.LeftButton, Qt.NoModifier, start)
    QTest.mouseMove(view.viewport(), start + (end - start) / 2)
    QTest.mouseMove(view.viewport(), end)
    QTest.mouseRelease(view.viewport(), Qt.LeftButton, Qt.NoModifier, end)
    x, y = item.pos().x(), item.pos().y()
    assert (x, y) != (home.x(), home.y())
    assert x % GRID == 0 and y % GRID == 0            # snapped
    assert w.session.root.node("embed").pos == (round(x / SPREAD, 2), round(y / SPREAD, 2))
    assert w.session.document.undo_text == "Move"
    w.session.undo()
    assert item.pos() == home


def test_search_to_add_finds_blocks_by_fuzzy_names_and_adds_where_asked(make_window):
    w = make_window(Graph())
    # Enter in the palette's field adds its best match mid-canvas (test_palette_rows: which)
    w.palette.search.setText("rnn")
    w.palette.search.returnPressed.emit()
    (rnn,) = w.session.root.nodes
    assert w.session.root.node(rnn).type == "rnn"
    centre = w.view.mapToScene(w.view.viewport().rect().center())
    assert w.scene.node_items[rnn].sceneBoundingRect().contains(centre)
    w.session.undo()
    w.open_search(QPointF(100, 50))
    w.search.edit.setText("swiglu")       # an alias: the FFN block is what people mean
    assert w.search.result_types()[0] == "feed_forward"
    w.search.edit.setText("lnorm")        # letters in order: layernorm
    assert w.search.result_types()[0] == "norm"
    w.search.edit.setText("xattn")
    assert "cross_attention" in w.search.result_types()
    w.search.edit.setText("mixture")
    assert w.search.result_types()[0] == "moe"
    w.search.accept_current()
    (nid,) = w.session.root.nodes
    assert w.session.root.node(nid).type == "moe"
    item = w.scene.node_items[nid]
    assert item.sceneBoundingRect().contains(QPointF(100, 50))


def test_fuzzy_scores_prefer_runs_and_word_starts():
    assert fuzzy_score("attn", "self attention") is not None
    assert fuzzy_score("zz", "attention") is None
    assert fuzzy_score("norm", "layernorm") > fuzzy_score("nrm", "layernorm")
    assert fuzzy_score("ca", "cross attention") > fuzzy_score("ca", "scale")
    from tfstudio.graph import all_specs
    assert rank_blocks("", all_specs())[0] is all_specs()[0]  # empty query: catalogue order


def test_entering_a_group_and_the_breadcrumb_back(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    item = w.scene.node_items["layers"]
    w.view.centerOn(item)
    pos = w.view.mapFromScene(item.mapToScene(80, 14))
    QTest.mouseDClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier, pos)
    assert w.scene.path == ("layers",)
    assert set(w.scene.node_items) == set(w.session.root.node("layers").subgraph.nodes)
    labels = [b.text() for b in w.breadcrumb.buttons]
    assert labels == ["tiny-gpt", "decoder layer ×2"]
    w.breadcrumb.buttons[0].click()
    assert w.scene.path == ()
    assert "layers" in w.scene.node_items


def test_undo_of_a_group_while_inside_it_returns_to_the_top(make_window):
    w = make_window(load_preset("tiny-gpt"))
    w.scene.select_nodes(["embed", "pos"])
    gid = w.group_selection()
    w.scene.enter_group(gid)
    w.session.undo()  # the group no longer exists: the canvas goes back up
    assert w.scene.path == ()
    assert {"embed", "pos"} <= set(w.scene.node_items)


def test_every_edit_is_undoable_and_redo_restores_it():
    """The inspector's edits (a parameter: graph.edit_rules.set_param_edit; a layer's and the
    model's switches: layer_switches.setting_edit), each one step of the document's history."""
    doc = Document(load_preset("tiny-gpt"))
    start = dumps(doc.root)
    doc.execute(kept_tidy(set_param_edit(doc.root, (), "layers", "repeat", 5).edit))
    doc.execute(kept_tidy(setting_edit(doc.root, "attention", "mqa", ((), "layers"))))
    doc.execute(kept_tidy(setting_edit(doc.root, "position", "rope")))
    after = dumps(doc.root)
    assert doc.root.node("layers").param("repeat") == 5
    for _ in range(3):
        doc.undo()
    assert dumps(doc.root) == start
    for _ in range(3):
        doc.redo()
    assert dumps(doc.root) == after


def test_the_inspectors_name_field_renames_in_one_step_and_makes_none_for_the_same_name(
        make_window):
    from PySide6.QtWidgets import QLineEdit
    w = make_window(load_preset("tiny-gpt"))
    w.scene.select_nodes(["head"])
    w.inspector.rebuild()
    field = w.inspector.findChild(QLineEdit, "node_title")
    field.setText("  Output head ")
    field.editingFinished.emit()
    assert w.session.root.node("head").label == "Output head"      # trimmed, as ruled
    assert w.session.document.undo_text == "Rename block"
    w.session.undo()
    assert not w.session.document.can_undo                          # one step
    w.inspector.rebuild()
    field = w.inspector.findChild(QLineEdit, "node_title")
    field.setText(w.session.root.node("head").label + " ")
    field.editingFinished.emit()
    assert not w.session.document.can_undo                          # same name: no step
