"""The canvas as a new user meets it at 1366x768: the main layer's blocks visible on open at a
legible zoom, subtitles whole, shapes on every wire, wires clear of other blocks' ports, and no
two drawn blocks overlapping after any switch, group, ungroup, paste or Tidy."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QKeySequence
from PySide6.QtTest import QTest

from tfstudio.graph import Edge, Graph, Node
from tfstudio.gui import layer_switches as switches
from tfstudio.graph.layout import GROUP_WIDTH
from tfstudio.gui.block_drawing import PORT_R, scaled_font
from tfstudio.gui.summaries import port_tooltip
from tfstudio.gui.zoom_rules import LEGIBLE_ZOOM, text_boost
from tfstudio.presets import load_preset

LAPTOP = (1366, 768)


@pytest.fixture
def laptop(make_window, qtbot):
    from PySide6.QtWidgets import QApplication

    from tfstudio.gui import theme
    theme.apply_theme(QApplication.instance(), "light")  # the app's look: its padding counts

    def make(graph):
        w = make_window(graph)
        w.resize(*LAPTOP)
        qtbot.wait(10)
        w.view.fit_to_view()
        return w
    return make


def drawn_rects(scene) -> dict[str, QRectF]:
    return {nid: item.mapRectToScene(item.body_rect()) for nid, item in scene.node_items.items()}


def assert_no_two_blocks_intersect(scene, what: str) -> None:
    rects = list(drawn_rects(scene).items())
    for i, (a, ra) in enumerate(rects):
        for b, rb in rects[i + 1:]:
            assert not ra.intersects(rb), f"{what}: '{a}' {ra} overlaps '{b}' {rb}"


def on_screen(view, scene_rect: QRectF) -> bool:
    shown = view.mapFromScene(scene_rect).boundingRect()
    return view.viewport().rect().contains(shown)


@pytest.mark.parametrize("preset", ["tiny-gpt", "llama", "t5-small", "tiny-mixtral"])
def test_on_open_the_main_layers_blocks_are_visible_and_legible(laptop, preset):
    w = laptop(load_preset(preset))
    view, scene = w.view, w.scene
    assert view.zoom >= LEGIBLE_ZOOM - 1e-6
    groups = [i for i in scene.node_items.values() if i.node.is_group]
    main = min(groups, key=lambda i: i.x())
    assert main.frame is not None  # drawn open, its inside on show
    types = {m.node.type for m in main._minis}
    inside = {n.type for n in main.node.subgraph} - {"group_input", "group_output"}
    assert types == inside and "norm" in types and types & {"attention"}
    assert types & {"feed_forward", "moe"}
    for mini in main._minis:
        assert on_screen(view, main.mapRectToScene(mini.rect)), mini.node.id
    # the xN badge is on screen too
    badge = main.mapRectToScene(QRectF(main.width - 60, 0, 60, 30))
    assert on_screen(view, badge)


def test_fit_to_view_of_a_wide_hand_built_graph_stays_legible(laptop):
    g = Graph(meta={"context_length": 16})
    g.add_node(Node("tokens", "token_input", pos=(0, 0)))
    g.add_node(Node("embed", "token_embedding", {"vocab_size": 32, "d_model": 8}, (230, 0)))
    prev = "embed"
    for i in range(8):
        g.add_node(Node(f"d{i}", "dropout", pos=(460 + 230 * i, 0)))
        g.add_edge(Edge(prev, "y", f"d{i}", "x"))
        prev = f"d{i}"
    g.add_node(Node("head", "lm_head", {"vocab_size": 32}, (460 + 230 * 8, 0)))
    g.add_edge(Edge("tokens", "ids", "embed", "ids"))
    g.add_edge(Edge(prev, "y", "head", "x"))
    w = laptop(g)
    assert len(w.scene.node_items) == 11
    w.view.fit_to_view()
    assert w.view.zoom == pytest.approx(LEGIBLE_ZOOM)


@pytest.mark.parametrize("preset", ["tiny-gpt", "llama", "t5-small", "tiny-mixtral"])
def test_subtitles_are_whole_at_the_default_zoom(laptop, preset):
    w = laptop(load_preset(preset))
    boost = text_boost(w.view.zoom)
    assert boost <= 1.2  # the wrapping (not eliding) mode of the summaries
    for item in w.scene.node_items.values():
        if item.frame is not None:  # one line across the frame
            fm = QFontMetricsF(scaled_font(11 * boost))
            assert fm.horizontalAdvance(item._summary) < item.width - 20, item.node.id
            for mini in item._minis:
                if mini.node.type == "add":  # a junction on the stream: its title alone
                    continue
                font = scaled_font(11 * min(boost, 1.2))
                room = QRectF(0, 0, mini.rect.width() - 18, 1000)
                needed = QFontMetricsF(font).boundingRect(room, Qt.TextWordWrap, mini.summary)
                assert needed.height() <= mini.rect.height() - 8 - 18, (mini.node.id, mini.summary)
        else:
            fm = QFontMetricsF(scaled_font(11))
            room = QRectF(0, 0, item.width - 20, 1000)
            needed = fm.boundingRect(room, Qt.TextWordWrap, item._summary)
            lines = 2 if item.node.is_group else 1
            assert needed.height() <= 17 * lines + 1, (item.node.id, item._summary)


def test_a_short_wire_still_shows_its_shape(laptop):
    w = laptop(load_preset("tiny-gpt"))
    scene = w.scene
    # push the head right up against the final norm: the wire between them is a few units
    norm = scene.node_items["final_norm"]
    scene.node_items["head"].setPos(norm.pos() + QPointF(norm.width + 12, 0))
    scene.node_items["head"].setPos(norm.pos() + QPointF(norm.width + 12, 0))
    wire = scene.wire_items[Edge("final_norm", "y", "head", "x")]
    scene._place_wire(wire)
    assert wire.label.startswith("B×T")
    font = wire._label_font(w.view.zoom)
    assert font.pixelSize() * w.view.zoom >= 7.4  # drawn, and big enough to read
    port = scene.node_items["head"].inputs["x"]  # its port says the shape too (summaries)
    assert port.toolTip() == port_tooltip(port.spec, True, wire.label)


@pytest.mark.parametrize("preset", ["t5-small", "tiny-t5", "tiny-gpt", "tiny-mixtral",
                                    "bert-base"])
def test_wires_keep_clear_of_other_blocks_ports(laptop, preset):
    w = laptop(load_preset(preset))
    scene = w.scene
    levels = [()] + [(n.id,) for n in w.session.root if n.is_group]
    for path in levels:
        scene.set_path(path)
        for edge, wire in scene.wire_items.items():
            along = [wire._path.pointAtPercent(k / 100) for k in range(101)]
            for nid, item in scene.node_items.items():
                if nid in (edge.src, edge.dst):
                    continue
                ports = list(item.inputs.values()) + list(item.outputs.values())
                for p in along:
                    for port in ports:
                        d = p - port.scenePos()
                        assert d.x() ** 2 + d.y() ** 2 > (PORT_R + 1) ** 2, (
                            f"{preset} {path}: wire {edge} runs through port {nid}.{port.name}")


def test_the_t5_memory_wire_goes_round_and_the_pile_is_tidied_on_open(laptop):
    w = laptop(load_preset("t5-small"))
    scene = w.scene
    memory = scene.wire_items[Edge("encoder_norm", "y", "decoder", "memory")]
    decoder_x = scene.node_items["decoder"].inputs["x"].scenePos()
    for k in range(101):
        p = memory._path.pointAtPercent(k / 100)
        assert (p - decoder_x).manhattanLength() > PORT_R
    assert_no_two_blocks_intersect(scene, "t5-small on open")


SWITCHES = [("attention", k) for k in switches.ATTENTION_KINDS] + [
    ("ffn", k) for k in switches.FFN_KINDS] + [("placement", k) for k in switches.PLACEMENTS]


@pytest.mark.parametrize("preset", ["tiny-gpt", "tiny-t5", "tiny-mixtral", "tiny-bert",
                                    "tiny-llama", "tiny-lstm"])
@pytest.mark.slow
def test_no_drawn_blocks_overlap_after_any_switch(laptop, preset):
    w = laptop(load_preset(preset))
    scene = w.scene
    groups = [n.id for n in w.session.root if n.is_group]
    for gid in groups:
        for key, choice in SWITCHES:
            w.inspector.switch_layer(gid, key, choice)
            assert_no_two_blocks_intersect(scene, f"{preset} {gid} {key}={choice}")
            scene.set_path((gid,))  # and inside, at full size
            assert_no_two_blocks_intersect(scene, f"{preset} inside {gid} {key}={choice}")
            scene.set_path(())
    for scheme in switches.POSITION_SCHEMES:
        w.inspector.switch_positions(scheme)
        assert_no_two_blocks_intersect(scene, f"{preset} positions={scheme}")


def test_post_and_sandwich_norms_do_not_land_on_the_adds(laptop):
    w = laptop(load_preset("tiny-gpt"))
    for choice in ("post", "sandwich"):
        assert w.inspector.switch_layer("layers", "placement", choice)
        w.scene.set_path(("layers",))
        assert_no_two_blocks_intersect(w.scene, f"inside the layer, {choice}")
        ports = [p.scenePos() for i in w.scene.node_items.values()
                 for p in list(i.inputs.values()) + list(i.outputs.values())]
        rects = drawn_rects(w.scene)
        for nid, r in rects.items():  # no port hidden under another block
            own = w.scene.node_items[nid]
            for p in ports:
                if own.contains(own.mapFromScene(p)):
                    continue
                assert not r.adjusted(1, 1, -1, -1).contains(p), (choice, nid)
        w.scene.set_path(())


@pytest.mark.slow
def test_group_ungroup_paste_and_tidy_leave_no_drawn_overlap(laptop, qtbot):
    w = laptop(load_preset("tiny-gpt"))
    scene = w.scene
    scene.select_nodes(["layers"])
    assert w.ungroup_selection()
    assert_no_two_blocks_intersect(scene, "ungroup")
    scene.select_nodes(["final_norm", "head"])
    assert w.group_selection()
    assert_no_two_blocks_intersect(scene, "group")
    scene.select_nodes(["tokens", "embed"])
    assert w.copy()
    view = w.view
    view.cursor_scene_pos = lambda: scene.node_items["tokens"].scenePos()  # paste onto them
    assert len(w.paste()) == 2
    assert_no_two_blocks_intersect(scene, "paste")
    # pile everything up, then Tidy (its shortcut) lays it out again, one undo step
    for item in scene.node_items.values():
        item.setPos(0, 0)
    scene.commit_moves()
    QTest.keySequence(w, QKeySequence("Ctrl+L"))
    assert w.session.document.undo_text == "Tidy layout"
    assert_no_two_blocks_intersect(scene, "tidy")


def test_the_chevron_closes_and_opens_a_group(laptop):
    w = laptop(load_preset("tiny-gpt"))
    scene, view = w.scene, w.view
    item = scene.node_items["layers"]
    assert item.frame is not None and item.width > GROUP_WIDTH
    chevron = view.mapFromScene(item.mapToScene(item.chevron_rect().center()))
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, chevron)
    item = scene.node_items["layers"]
    assert item.frame is None and item.width == GROUP_WIDTH
    wire = scene.wire_items[Edge("layers", "y", "final_norm", "x")]
    assert (wire._start - item.outputs["y"].scenePos()).manhattanLength() < 0.01
    assert not w.session.document.can_undo  # a view setting, not an edit
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, chevron)
    assert scene.node_items["layers"].frame is not None


def test_a_wire_with_a_block_in_its_way_goes_round_it(laptop):
    g = Graph(meta={"context_length": 16})
    g.add_node(Node("tokens", "token_input", pos=(0, 0)))
    g.add_node(Node("drop", "dropout", pos=(300, 0)))  # on the wire's line, wired to nothing
    g.add_node(Node("embed", "token_embedding", {"vocab_size": 32, "d_model": 8}, (600, 0)))
    g.add_edge(Edge("tokens", "ids", "embed", "ids"))
    w = laptop(g)
    scene = w.scene
    assert {n: n_.pos for n, n_ in ((n.id, n) for n in w.session.root)} == {
        "tokens": (0, 0), "drop": (300, 0), "embed": (600, 0)}  # nothing overlapped: kept
    wire = scene.wire_items[Edge("tokens", "ids", "embed", "ids")]
    block = scene.node_items["drop"].mapRectToScene(scene.node_items["drop"].body_rect())
    for k in range(101):
        assert not block.contains(wire._path.pointAtPercent(k / 100))
    assert wire.corners  # it bends round


@pytest.mark.parametrize("preset", ["tiny-gpt", "llama", "tiny-mixtral", "gpt2-small"])
def test_a_decoder_model_is_all_on_a_laptop_screen_at_a_legible_zoom(laptop, preset):
    """The top level wraps into bands (input chain, the layer, the output chain), so a whole
    decoder is seen at once on a 1366x768 screen without going below the legible zoom."""
    w = laptop(load_preset(preset))
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, rect in drawn_rects(w.scene).items():
        assert on_screen(w.view, rect), nid


def test_every_block_title_is_whole_on_the_canvas():
    """A title may shrink to 11 px (from 13, more when zoomed out) but is never cut: the
    longest, "Seq2seq decoder head", was drawn "Seq2seq decoder ..." at 70%."""
    from tfstudio.graph.layout import NODE_WIDTH
    from tfstudio.graph.schema import all_specs
    from tfstudio.gui.block_drawing import PAD

    room = NODE_WIDTH - 2 * PAD - 20  # the family icon beside it
    smallest = QFontMetricsF(scaled_font(11, bold=True))
    for spec in all_specs():
        assert smallest.horizontalAdvance(spec.title) <= room, spec.title


def test_the_cached_grid_follows_a_theme_change(make_window, qtbot):
    """The canvas caches its background (a live run recolours the blocks above it many times
    a second); switching to the dark theme must still repaint it in the dark theme's colour."""
    from tfstudio.gui import theme
    from tfstudio.gui.scene import GRID

    w = make_window(load_preset("tiny-gpt"))
    view = w.view
    # a point between grid lines with no block on it: the canvas colour shows there
    corner = view.mapToScene(view.viewport().rect().topLeft())
    spot = QPointF((int(corner.x() // GRID) + 1.5) * GRID, (int(corner.y() // GRID) + 1.5) * GRID)
    pixel = view.mapFromScene(spot)
    assert not view.items(pixel)

    def colour_there():
        return view.viewport().grab().toImage().pixelColor(pixel).name()

    try:
        w.set_dark(False)
        qtbot.wait(20)
        assert colour_there() == theme.THEMES["light"].color("canvas").name()
        w.set_dark(True)
        qtbot.wait(20)
        assert colour_there() == theme.THEMES["dark"].color("canvas").name()
    finally:
        w.set_dark(False)


def test_a_block_repaints_only_its_band_and_only_when_its_telemetry_changes(make_window,
                                                                            monkeypatch):
    """Every look inside sets every block's colouring, mostly to what it was (always to none
    when colouring is off): a repaint of the canvas each time cost the training process. The
    block itself stays the pixmap it is cached as; the band over it repaints, on a change."""
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QGraphicsItem
    item = make_window(load_preset("tiny-gpt")).scene.node_items["embed"]
    assert item.cacheMode() == QGraphicsItem.DeviceCoordinateCache
    blocks, bands = [], []
    monkeypatch.setattr(item, "update", lambda *args: blocks.append(args))
    monkeypatch.setattr(item.band, "update", lambda *args: bands.append(args))
    item.set_telemetry(None)
    assert bands == [] and not item.band.isVisible()
    item.set_telemetry(QColor("#d04040"), "‖g‖ 0.5")
    item.set_telemetry(QColor("#d04040"), "‖g‖ 0.5")
    assert len(bands) == 1 and item.telemetry[1] == "‖g‖ 0.5" and item.band.isVisible()
    item.set_telemetry(QColor("#d04040"), "‖g‖ 0.7")
    item.set_telemetry(None)
    assert len(bands) == 3 and item.telemetry is None and not item.band.isVisible()
    assert blocks == []
