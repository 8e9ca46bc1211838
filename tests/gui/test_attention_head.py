"""The attention view shows the head the user picked: from the Heads box, from a click in the
grid, and the grid's i-th map is head i. The snapshot is a real one (tiny-gpt on a probe
text) whose weights are replaced by matrices that differ per head, so a wrong head cannot look
right."""
import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.probes.snapshot import take_snapshot


@pytest.fixture
def snapshot():
    torch.manual_seed(0)
    model = compile_graph(tfstudio.load_graph("tiny-gpt"))
    snap = take_snapshot(model, build_tokenizer("byte"), "hello there", step=7)
    rng = np.random.default_rng(0)
    for entry in snap["attention"].values():
        heads, rows, cols = np.asarray(entry["weights"]).shape
        # head h: row-stochastic, with a tag (h + 1) / 100 in cell [0, 0] besides
        w = rng.random((heads, rows, cols)) * np.asarray(entry["allowed"], dtype=float)
        w[:, 0, 0] += (np.arange(heads) + 1) / 100
        entry["weights"] = w / w.sum(-1, keepdims=True)
    return snap


@pytest.fixture
def view(qtbot):
    from tfstudio.gui.training.attention_view import AttentionView
    v = AttentionView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    return v


def test_heads_box_shows_that_head(view, snapshot):
    view.show_snapshot(snapshot)
    layers = list(snapshot["attention"])
    assert len(layers) == 2 and [view.layer.itemText(i) for i in range(view.layer.count())] \
        == layers
    for layer in layers:
        view.layer.setCurrentText(layer)
        weights = snapshot["attention"][layer]["weights"]
        assert weights.shape[0] == 4
        for head in range(4):
            view.head.setCurrentIndex(view.head.findData(head))
            assert view.head.currentText() == f"Head {head}"
            np.testing.assert_array_equal(view.heatmap.matrix, weights[head])
            assert view.heatmap.title == f"{layer} · head {head}"
        view.head.setCurrentIndex(0)  # the average
        np.testing.assert_allclose(view.heatmap.matrix, weights.mean(0))


def test_grid_maps_are_heads_in_order_and_a_click_opens_that_head(view, snapshot, qtbot):
    view.show_snapshot(snapshot)
    layer = list(snapshot["attention"])[1]
    view.layer.setCurrentText(layer)
    weights = snapshot["attention"][layer]["weights"]
    view.head.setCurrentIndex(view.head.findData("grid"))
    assert view.stack.currentWidget() is view.grid
    shown = [m for m in view.grid.maps if m.isVisible()]
    assert len(shown) == 4
    for head, heatmap in enumerate(shown):
        np.testing.assert_array_equal(heatmap.matrix, weights[head])
    qtbot.mouseClick(shown[2], Qt.LeftButton)  # the third map opens head 2
    assert view.head.currentData() == 2
    assert view.stack.currentWidget() is view.heatmap
    np.testing.assert_array_equal(view.heatmap.matrix, weights[2])


def test_picked_head_survives_a_new_snapshot(view, snapshot):
    view.show_snapshot(snapshot)
    view.head.setCurrentIndex(view.head.findData(3))
    later = {**snapshot, "step": 8,
             "attention": {k: {**e, "weights": e["weights"][::-1].copy()}
                           for k, e in snapshot["attention"].items()}}
    view.show_snapshot(later)
    assert view.head.currentData() == 3
    layer = view.layer.currentText()
    np.testing.assert_array_equal(view.heatmap.matrix, later["attention"][layer]["weights"][3])


def test_the_grid_titles_carry_each_heads_scores(view, snapshot):
    view.show_snapshot(snapshot)
    layer = list(snapshot["attention"])[0]
    view.layer.setCurrentText(layer)
    view.head.setCurrentIndex(view.head.findData("grid"))
    prev, ind = [0.91, 0.05, 0.33, 0.0], [0.02, 0.88, 0.10, 0.5]
    roles = {layer: {"previous_token": np.array(prev), "induction": np.array(ind)}}
    view.set_head_roles(roles, step=snapshot["step"])  # measured on the weights shown
    titles = [m.title for m in view.grid.maps if m.isVisible()]
    assert titles == [f"head {h} · prev {prev[h]:.2f} · ind {ind[h]:.2f}" for h in range(4)]
    assert "prev / ind" in view.info.text()
    view.set_head_roles(roles, step=snapshot["step"] + 100)  # other weights: not on this look
    assert [m.title for m in view.grid.maps if m.isVisible()] == [f"head {h}" for h in range(4)]
    view.set_head_roles(roles, step=snapshot["step"])
    view.set_head_roles({})
    assert [m.title for m in view.grid.maps if m.isVisible()] == [f"head {h}" for h in range(4)]
