"""An encoder-decoder on open: tiny-t5 and t5-small whole at a legible zoom on a 1366x768
laptop and a 1920x1080 screen (open layer frames drawn compactly, the top level wrapped into
bands); in a window too small for that, the encoder layer with the decoder one click away (a
pill at the canvas's edge names it and brings it into view)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from tfstudio.graph.layout import WRAP_WIDTH, block_rects, untangled
from tfstudio.gui.zoom_rules import LEGIBLE_ZOOM
from tfstudio.presets import load_preset, preset_names


@pytest.fixture
def opened(make_window, qtbot):
    def make(preset: str, size: tuple[int, int]):
        w = make_window(load_preset(preset))
        w.resize(*size)
        qtbot.wait(10)
        w.view.fit_to_view()
        qtbot.wait(10)
        QApplication.processEvents()
        return w
    return make


def on_screen(view, scene_rect: QRectF) -> bool:
    return view.viewport().rect().contains(view.mapFromScene(scene_rect).boundingRect())


def drawn(item) -> QRectF:
    return item.mapRectToScene(item.body_rect())


def visible_markers(view):
    return [m for m in view.markers if m.isVisible()]


def test_t5_small_is_all_on_a_desktop_screen_at_a_legible_zoom(opened):
    w = opened("t5-small", (1920, 1080))
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, item in w.scene.node_items.items():
        assert on_screen(w.view, drawn(item)), nid
    assert not visible_markers(w.view)  # nothing out of view, nothing to point at


def test_in_a_small_window_the_decoder_is_one_click_away(opened, qtbot):
    w = opened("t5-small", (1200, 600))  # at 640 over 3/4 of the decoder shows: no pill
    view, scene = w.view, w.scene
    assert view.zoom >= LEGIBLE_ZOOM - 1e-6
    encoder, decoder = scene.node_items["encoder"], scene.node_items["decoder"]
    assert on_screen(view, drawn(encoder))  # what a student came to see
    assert not on_screen(view, drawn(decoder))
    markers = visible_markers(view)
    assert [m.text() for m in markers] == ["▼ decoder layer ×6"]
    assert view.viewport().rect().contains(markers[0].geometry())
    markers[0].click()
    qtbot.wait(10)
    QApplication.processEvents()
    assert view.zoom >= LEGIBLE_ZOOM - 1e-6
    header = decoder.mapRectToScene(QRectF(0, 0, 400, 60))  # its title and first blocks
    assert on_screen(view, header)
    first = min(decoder._minis, key=lambda m: m.rect.x())
    assert on_screen(view, decoder.mapRectToScene(first.rect))
    assert all(m.property("item") is not decoder for m in visible_markers(view))


def test_the_encoders_norm_shares_the_encoders_band_and_the_picture_keeps_its_width():
    """Wrapping leaves no short block alone on a band when there is room beside a layer."""
    rects = block_rects(untangled(load_preset("t5-small")))
    widest = max(r[2] for r in rects.values())
    encoder, norm = rects["encoder"], rects["encoder_norm"]
    # the encoder's final norm sits in the encoder's band, to its right
    assert norm[0] >= encoder[0] + encoder[2] and norm[1] < encoder[1] + encoder[3]
    right = max(r[0] + r[2] for r in rects.values()) - min(r[0] for r in rects.values())
    assert right <= max(WRAP_WIDTH, widest) + 1e-6  # and the picture is no wider for it


@pytest.mark.parametrize("preset", ["tiny-t5", "t5-small"])
def test_an_encoder_decoder_is_whole_on_a_laptop_at_a_legible_zoom(opened, preset):
    """Every block (stacked copies, ports and all) and every wire in view at 70% or more,
    with no pill: nothing is out of view. Fails with the frames drawn at their former
    size (tiny-t5 was 1500x1094 canvas units: 49% to fit)."""
    w = opened(preset, (1366, 768))
    view, scene = w.view, w.scene
    assert view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, item in scene.node_items.items():
        assert on_screen(view, item.drawn_rect()), nid
        if item.frame is not None:
            for mini in item._minis:
                assert on_screen(view, item.mapRectToScene(mini.rect)), mini.node.id
    for edge, wire in scene.wire_items.items():
        assert on_screen(view, wire.drawn_rect()), edge
    assert not visible_markers(view)


def test_tiny_t5_is_all_on_a_desktop_screen(opened):
    w = opened("tiny-t5", (1920, 1080))
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, item in w.scene.node_items.items():
        assert on_screen(w.view, item.sceneBoundingRect()), nid
    assert not visible_markers(w.view)


FLAT_PRESETS = [name for name in preset_names()
                if not any(n.subgraph is not None for n in load_preset(name).nodes.values())]


@pytest.mark.parametrize("preset", FLAT_PRESETS)
def test_a_graph_without_layer_groups_is_whole_on_a_laptop_at_a_legible_zoom(opened, preset):
    """A flat graph has no pill to point at what is out of view, so all of it is in view: the
    LM head of tiny-lstm was cut at the right edge when presets stepped 230 units between
    blocks (1,087 canvas units wide: 64% to fit)."""
    w = opened(preset, (1366, 768))
    view, scene = w.view, w.scene
    assert view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, item in scene.node_items.items():
        assert on_screen(view, item.drawn_rect()), nid
    for edge, wire in scene.wire_items.items():
        assert on_screen(view, wire.drawn_rect()), edge
