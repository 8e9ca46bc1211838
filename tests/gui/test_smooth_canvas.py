"""The canvas stays cheap to repaint while a run recolours it (issue 27, item 6): its blocks are
kept as pixmaps and a look inside repaints only the telemetry bands over them, yet the canvas
still shows every new colour, a theme change, and an SVG of vectors; the strip's legend keeps
its width from look to look, so the canvas is not resized (and refitted) at each."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from tfstudio.presets import load_preset


def on_screen(window, item, point: QPointF) -> QPoint:
    """Where ``point`` of ``item`` is in the window."""
    view = window.view
    return view.viewport().mapTo(window, view.mapFromScene(item.mapToScene(point)))


def screen(window) -> QImage:
    """What the window shows: its painted pixels (a widget's grab() would paint it afresh)."""
    return QApplication.primaryScreen().grabWindow(window.winId()).toImage()


def pixel(window, at: QPoint) -> QColor:
    return screen(window).pixelColor(at)


def test_the_canvas_shows_each_new_colour_of_a_block_it_keeps_as_a_pixmap(make_window, qtbot):
    w = make_window(load_preset("tiny-gpt"))
    item = w.scene.node_items["embed"]
    body = item.body_rect()
    band_middle = on_screen(w, item, QPointF(body.width() / 2, body.bottom() - 4))
    for colour, label in (("#d04040", "‖g‖ 0.5"), ("#2060c0", "‖g‖ 0.01"),
                          ("#d04040", "‖g‖ 0.7")):
        item.set_telemetry(QColor(colour), label)
        qtbot.waitUntil(lambda: pixel(w, band_middle).name() == colour, timeout=2000)
    item.set_telemetry(None)
    qtbot.waitUntil(lambda: pixel(w, band_middle).name() != "#d04040", timeout=2000)


def body_colour(window, item) -> str:
    """The colour most of ``item``'s body shows on screen (the part in view)."""
    view = window.view
    rect = view.mapFromScene(item.mapRectToScene(item.body_rect())).boundingRect()
    rect = rect.intersected(view.viewport().rect())
    assert rect.width() > 20 and rect.height() > 20
    rect.moveTopLeft(view.viewport().mapTo(window, rect.topLeft()))
    image = screen(window)
    seen = Counter(image.pixelColor(x, y).name() for x in range(rect.left() + 3, rect.right() - 3)
                   for y in range(rect.top() + 3, rect.bottom() - 3))
    return seen.most_common(1)[0][0]


def test_a_theme_change_repaints_the_blocks_kept_as_pixmaps(make_window, qtbot):
    from tfstudio.gui import theme

    w = make_window(load_preset("tiny-gpt"))
    item = w.scene.node_items["embed"]
    light = theme.THEMES["light"].color("node_body").name()
    dark = theme.THEMES["dark"].color("node_body").name()
    try:
        w.set_dark(False)
        qtbot.waitUntil(lambda: body_colour(w, item) == light, timeout=2000)
        w.set_dark(True)
        qtbot.waitUntil(lambda: body_colour(w, item) == dark, timeout=2000)
    finally:
        w.set_dark(False)


def test_an_svg_of_the_canvas_draws_its_cached_blocks_as_vectors(make_window, qtbot, tmp_path):
    from PySide6.QtWidgets import QGraphicsItem

    from tfstudio.gui.export import export_svg

    w = make_window(load_preset("tiny-gpt"))
    item = w.scene.node_items["embed"]
    assert item.cacheMode() == QGraphicsItem.DeviceCoordinateCache  # on screen: a pixmap
    svg = export_svg(w.scene, tmp_path / "graph.svg").read_text()
    assert "<image" not in svg and item.node.label in svg  # the title is text, not pixels
    assert item.cacheMode() == QGraphicsItem.DeviceCoordinateCache  # and cached again


def test_the_strip_legend_keeps_its_width_while_shown(open_training_window, qtbot):
    """A look's numbers are as long as they come ("0.5", "0.000123"): a legend that followed
    them resized the canvas at each look, which refitted and repainted every block."""
    from tfstudio.gui.training.strip import StripLegend
    from tfstudio.gui.training.telemetry import Shown

    w = open_training_window((1366, 768))
    w.training.show_panel()
    legend = StripLegend(w.view)
    wide = Shown("grad_norm", step=12000, top={"embed": 0.000123}, lo=0.000123, hi=1.23,
                 copies={"layers": [0.000123, 0.000234, 0.000345, 0.000456]})
    narrow = Shown("grad_norm", step=20, top={"embed": 0.5}, lo=0.5, hi=2.0,
                   copies={"layers": [0.5, 0.7]})
    legend.set_shown(wide)
    width, canvas = legend.width(), w.view.viewport().width()
    legend.set_shown(narrow)
    assert legend.lines[-1] == "layers per copy: 0: 0.5 · 1: 0.7"  # its own numbers...
    assert (legend.width(), w.view.viewport().width()) == (width, canvas)  # ...at that width
    legend.set_shown(None)  # colouring off: the canvas gets its width back
    assert not legend.isVisible() and w.view.viewport().width() > canvas
    legend.set_shown(narrow)  # shown again, as wide as its lines now
    assert legend.width() < width and w.view.viewport().width() > canvas


@pytest.mark.parametrize("kind", ["sequential", "negative", "diverging"])
def test_one_values_ramp_colour_is_the_ramps(kind):
    from tfstudio.gui.training.colours import colour_ramp, ramp_colour

    values = np.concatenate([np.linspace(-0.5, 1.5, 2001), [0.0, 0.25, 0.5, 0.75, 1.0, np.nan]])
    expected = colour_ramp(values, kind)
    got = np.array([ramp_colour(v, kind).getRgb()[:3] for v in values])
    np.testing.assert_array_equal(got, expected)
