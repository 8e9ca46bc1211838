"""t5-small on open: the whole encoder-decoder at a legible zoom on a 1920x1080 screen; on a
1366x768 laptop the encoder layer with the decoder one click away (a pill at the canvas's edge
names it and brings it into view)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from tfstudio.graph.layout import WRAP_WIDTH, block_rects, untangled
from tfstudio.gui.view import LEGIBLE_ZOOM
from tfstudio.presets import load_preset


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


def test_on_a_laptop_the_decoder_is_one_click_away(opened, qtbot):
    w = opened("t5-small", (1366, 768))
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


def test_a_layer_as_wide_as_the_picture_lets_short_blocks_share_its_band():
    """Wrapping leaves no short block alone on a band when a wider layer sets the width."""
    rects = block_rects(untangled(load_preset("t5-small")))
    widest = max(r[2] for r in rects.values())
    assert widest > WRAP_WIDTH  # the decoder's frame
    encoder, norm = rects["encoder"], rects["encoder_norm"]
    # the encoder's final norm sits in the encoder's band, to its right
    assert norm[0] >= encoder[0] + encoder[2] and norm[1] < encoder[1] + encoder[3]
    right = max(r[0] + r[2] for r in rects.values()) - min(r[0] for r in rects.values())
    assert right <= widest + 1e-6  # and the picture is no wider for it


def test_tiny_t5_opens_on_its_whole_encoder_on_a_laptop(opened):
    """The first layer along the stream is the one shown whole (its frame's top was cut when
    the decoder, which starts further left, was picked); the decoder is a pill away."""
    w = opened("tiny-t5", (1366, 768))
    view, scene = w.view, w.scene
    encoder, decoder = scene.node_items["encoder"], scene.node_items["decoder"]
    assert on_screen(view, encoder.sceneBoundingRect())      # frame, stacked copies and all
    for mini in encoder._minis:
        assert on_screen(view, encoder.mapRectToScene(mini.rect)), mini.node.id
    assert not on_screen(view, drawn(decoder))
    assert [m.property("item") for m in visible_markers(view)] == [decoder]


def test_tiny_t5_is_all_on_a_desktop_screen(opened):
    w = opened("tiny-t5", (1920, 1080))
    assert w.view.zoom >= LEGIBLE_ZOOM - 1e-6
    for nid, item in w.scene.node_items.items():
        assert on_screen(w.view, item.sceneBoundingRect()), nid
    assert not visible_markers(w.view)
