"""The canvas strip of the Train workspace shows telemetry where the user is (issue 27, item
2): the blocks inside the open layer frame are coloured by a real look inside a model, a legend
on the strip gives the scale, what the number is and each copy's value, and the strip fits its
blocks on entering the workspace and after a resize."""
from __future__ import annotations


import pytest
import torch
from PySide6.QtCore import QRectF

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.graph.layout import HEADER_H, SUMMARY_H
from tfstudio.probes.snapshot import take_snapshot
from tfstudio.probes.telemetry import node_values
from tfstudio.gui.training.strip import InnerTelemetry, StripLegend, inner_rects
from tfstudio.train.pipeline import fit_graph_to_tokenizer


def real_look(graph, step=40, scale_layer_1=1.0):
    """A look inside the window's own model after one backward pass (as a training step's)."""
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(graph, tokenizer))
    ids = torch.randint(0, 256, (2, 16))
    model(ids).float().logsumexp(-1).mean().backward()
    if scale_layer_1 != 1.0:  # a layer whose gradients explode
        blocks = {".".join(map(str, k)): m for k, m in model.blocks()}
        for p in blocks["layers.1.ffn"].parameters():
            p.grad.mul_(scale_layer_1)
    return take_snapshot(model, tokenizer, "hello there", step=step)


@pytest.fixture
def train_window(open_training_window, qtbot):
    w = open_training_window((1366, 768))
    w.training.show_panel()
    qtbot.wait(50)
    return w


def overlay(window) -> InnerTelemetry:
    item = window.scene.node_items["layers"]
    return next(c for c in item.childItems() if isinstance(c, InnerTelemetry))


def test_the_blocks_inside_the_open_layer_are_coloured_by_a_real_look(train_window, qtbot):
    w, panel = train_window, train_window.training.panel
    look = real_look(w.session.root)
    panel.show_snapshot(look)
    before = w.view.grab().toImage()
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    qtbot.wait(20)
    after = w.view.grab().toImage()
    assert before != after  # the strip itself changes (it changed 0 pixels before)
    inside = node_values(look["grad_norm"], ("layers",), combine="norm")
    values = overlay(w).values
    assert set(values) == {n for n, v in inside.items() if v > 0}
    for node, (colour, label) in values.items():
        assert label == f"‖g‖ {inside[node]:.3g}"
    # the largest and smallest values shown are the ends of the blue-to-red scale
    lowest = min(values, key=lambda n: inside[n])
    highest = max(values, key=lambda n: inside[n])
    assert values[highest][0].red() > values[highest][0].blue()
    assert values[lowest][0].blue() > values[lowest][0].red()
    legend = w.view.findChild(StripLegend)
    assert legend.isVisible()
    shown = [v for v in list(inside.values()) + [
        v for k, v in node_values(look["grad_norm"], (), combine="norm").items()] if v > 0]
    assert legend.lines[0] == (f"Gradient norm at step 40, log scale: ‖g‖ {min(shown):.3g} … "
                               f"{max(shown):.3g}")
    copies = look["grad_norm"]
    assert legend.lines[-1] == (f"layers per copy: 0: {copies['layers.0']:.3g} · "
                                f"1: {copies['layers.1']:.3g}")
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("off"))
    assert overlay(w).values == {} and not legend.isVisible()


def test_a_layer_whose_gradients_explode_turns_red_and_its_copy_says_so(train_window, qtbot):
    w, panel = train_window, train_window.training.panel
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    panel.show_snapshot(real_look(w.session.root))
    calm = overlay(w).values["ffn"][1]
    loud = real_look(w.session.root, scale_layer_1=1000.0)
    panel.show_snapshot(loud)
    ffn_colour, ffn_label = overlay(w).values["ffn"]
    assert ffn_label != calm and ffn_colour.red() > 150 and ffn_colour.blue() < 100
    per_copy = w.view.findChild(StripLegend).lines[-1]
    first, second = loud["grad_norm"]["layers.0"], loud["grad_norm"]["layers.1"]
    assert second > 100 * first and f"1: {second:.3g}" in per_copy


def whole_in_view(window) -> bool:
    item = window.scene.node_items["layers"]
    port = QRectF(window.view.viewport().rect())
    for rect in inner_rects(item).values():
        on_screen = window.view.mapFromScene(item.mapRectToScene(rect)).boundingRect()
        if not port.contains(QRectF(on_screen)):
            return False
    return True


def test_the_strip_fits_its_blocks_on_entering_and_after_a_resize(open_training_window, qtbot):
    w = open_training_window((1366, 768))
    w.view.set_zoom(1.0)
    w.view.centerOn(0, 0)
    assert not whole_in_view(w)  # at 100% the strip cuts the layer's blocks
    w.training.show_panel()
    qtbot.waitUntil(lambda: whole_in_view(w), timeout=2000)
    zoom = w.view.zoom
    assert 0.5 < zoom <= 1.0  # still legible
    w.resize(1100, 700)
    qtbot.waitUntil(lambda: w.view.zoom < zoom - 0.01 and whole_in_view(w), timeout=2000)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080), (1100, 700)])
def test_the_strip_cuts_no_line_of_the_layers_title(open_training_window, qtbot, size):
    """Above the layer's blocks its frame has a title and a parameter count: in the strip they
    are whole or out of view, never a line cut through its letters (as at 1366x768, where
    centring the blocks left the count's lower half at the top edge)."""
    w = open_training_window(size)
    w.training.show_panel()
    qtbot.waitUntil(lambda: whole_in_view(w), timeout=2000)
    frame = w.scene.node_items["layers"]
    top = frame.scenePos().y()  # the header's top; the count's line ends below it
    lines = (top, top + HEADER_H + 2 + SUMMARY_H * 1.3)  # (at the largest text boost)
    shown = w.view.mapToScene(w.view.viewport().rect()).boundingRect()
    assert not lines[0] < shown.top() < lines[1], (lines, shown)


def blocks_on_screen(window) -> list[QRectF]:
    """Every block the strip draws (its top-level blocks and those inside open frames), in
    the view's own pixels, as much of each as the canvas shows."""
    view = window.view
    canvas = QRectF(view.viewport().geometry())
    rects = []
    for item in window.scene.node_items.values():
        scene_rects = [item.sceneBoundingRect()] + [item.mapRectToScene(r)
                                                    for r in inner_rects(item).values()]
        for rect in scene_rects:
            drawn = QRectF(view.mapFromScene(rect).boundingRect()).translated(canvas.topLeft())
            if drawn.intersects(canvas):
                rects.append(drawn.intersected(canvas))
    return rects


def test_the_legend_covers_no_block_of_the_strip_at_1366x768(train_window, qtbot):
    w, panel = train_window, train_window.training.panel
    panel.show_snapshot(real_look(w.session.root))
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("grad_norm"))
    legend = w.view.findChild(StripLegend)
    assert legend.isVisible()
    qtbot.waitUntil(lambda: whole_in_view(w), timeout=2000)  # refitted beside the legend
    blocks = blocks_on_screen(w)
    assert len(blocks) > len(inner_rects(w.scene.node_items["layers"]))  # the strip's blocks
    covered = [b for b in blocks if QRectF(legend.geometry()).intersects(b)]
    assert covered == []
    panel.telemetry.setCurrentIndex(panel.telemetry.findData("off"))
    assert w.view.viewportMargins().right() == 0  # the canvas gets its width back
