"""The Explain view, driven as a user would (offscreen): type a text, pick a token, a layer and
a head, switch a head off; the cards show the model's real numbers and a bad choice is shown,
not raised. (Which pictures a stage and a card show, without Qt: test_explain_pictures.py.)"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.background import Background
from tfstudio.gui.training.token_text import display_token
from tfstudio.gui.training.explain_lines import orthogonality_text
from tfstudio.gui.training.explain_stages import StagePicture
from tfstudio.gui.training.explain_pictures import MAX_COLS_SHOWN
from tfstudio.gui.training.explain_view import ExplainView
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)


def make_view(qtbot, background=None):
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    view = ExplainView(background)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    view.set_model(model, tokenizer)
    return view, model, tokenizer


def cards(view) -> list[StagePicture]:
    return [view.steps_column.itemAt(i).widget() for i in range(view.steps_column.count() - 1)]


def test_walk_cards_lens_and_token_picker(qtbot):
    view, model, tokenizer = make_view(qtbot)
    view.set_text("hello hello")
    view.refresh()
    assert view.error == "" and view.result is not None
    shown = cards(view)
    assert len(shown) == len(view.result["walk"].steps)
    # the logits card holds the model's own logits (rows: positions)
    logits_picture = next(c for c in shown if c.name == "head: logits")
    assert logits_picture.matrix_card is None   # the whole matrix opens on demand
    logits_picture.show_matrix()
    with torch.no_grad():
        expected = model(torch.tensor([tokenizer.encode("hello hello")]))[0].numpy()
    np.testing.assert_allclose(logits_picture.matrix_card.heatmap.matrix, expected[:, :MAX_COLS_SHOWN],
                               atol=1e-5)
    assert view.token.count() == 11 and view.token.currentIndex() == 10
    assert view.lens.rowCount() == 3 and view.lens.columnCount() == 11
    # choosing a layer and a head updates the steps
    view.layer.setCurrentIndex(view.layer.findData(1))
    view.head.setValue(2)
    names = [s.name for s in view.result["walk"].steps]
    assert "layers.1.attn: head 2: scores" in names
    assert not [n for n in names if n.startswith("layers.0.attn: head")]
    view.token.setCurrentIndex(3)
    view.token.activated.emit(3)
    assert view.result["walk"].position == 3


def test_ablation_switch_reports_the_change(qtbot):
    view, _, _ = make_view(qtbot)
    seen = []
    view.ablations_changed.connect(seen.append)
    view.set_text("abcabc")
    view.refresh()
    item = view.switches.findItems("layers.0.attn:head=1", Qt.MatchExactly)[0]
    item.setCheckState(Qt.Checked)
    assert seen[-1] == ["layers.0.attn:head=1"]
    assert view.result["ablation"].targets == ["layers.0.attn:head=1"]
    assert "Loss on the whole text" in view.ablation_report.text()
    view.set_ablations([])
    assert view.result["ablation"] is None


def test_problems_are_shown_not_raised(qtbot):
    background = Background()
    view, _, _ = make_view(qtbot, background)
    view.set_text("abc")
    view.refresh()
    background.wait()
    assert view.error == ""
    view.token.addItem("99", 99)
    view.token.setCurrentIndex(view.token.count() - 1)
    view.refresh()
    background.wait()
    assert "position 99 is outside" in view.error
    assert view.status.isVisible()
    background.shutdown()


def test_the_embeddings_tab_maps_the_texts_tokens_with_their_neighbours(qtbot):
    view, model, tokenizer = make_view(qtbot)  # byte vocabulary: mapped by the text's tokens
    view.set_text("hello world")
    view.refresh()
    read_out = view.result["embeddings"]
    ids = list(dict.fromkeys(tokenizer.encode("hello world")))
    assert [int(i) for i in read_out["ids"]] == ids
    # the coordinates are the rows' projection on their two main directions (PCA by hand)
    rows = model.embed.weight.detach().numpy()[ids]
    centred = rows - rows.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    np.testing.assert_allclose(np.abs(read_out["coords"]), np.abs(expected), atol=1e-4)
    share = s ** 2 / (s ** 2).sum()   # each axis's share of the variance, as the note says
    assert f"keep {share[0]:.0%} and {share[1]:.0%} of their variance" in \
        view.embedding_note.text()
    (x0, x1), _ = view.embedding_plot.viewRange()  # every point in view, margins alike
    xs = read_out["coords"][:, 0]
    assert xs.min() - x0 == pytest.approx(x1 - xs.max()) and xs.min() > x0
    # the nearest neighbour of the picked token (the last, "d") by cosine, computed here
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -np.inf)
    d = ids.index(tokenizer.encode("d")[0])
    nearest = display_token(tokenizer.decode([ids[int(np.argmax(cos[d]))]]))  # " " shows as ␣
    note = view.embedding_note.text()
    assert "Nearest to d by cosine: " in note
    assert note.split("Nearest to d by cosine: ")[1].startswith(nearest)
    labels = [item for item in view.embedding_plot.items if hasattr(item, "textItem")]
    assert len(labels) == len(ids)
    # under the map, the sentence its read-out gives (its wording: test_explain_orthogonality)
    assert view.embeddings.orthogonality.text() == orthogonality_text(read_out["angles"])


def strip_colours(qtbot, picked: list[float]) -> list[tuple[int, int, int]]:
    """The colour of each cell of the strip a stage's picture draws for the vector ``picked``."""
    summary = {"name": "layers.0.ffn: out", "block": "layers.0.ffn", "kind": "vector",
               "shape": [3, len(picked)], "formula": "y = W2 gelu(W1 x)", "picked": picked}
    picture = StagePicture(summary, list("abc"), 1)
    qtbot.addWidget(picture)
    picture.resize(100 * len(picked), 200)
    picture.show()
    (strip,) = picture.pictures
    image, cell = strip.grab().toImage(), strip.width() / len(picked)
    return [image.pixelColor(int(cell * (i + 0.5)), strip.height() // 2).getRgb()[:3]
            for i in range(len(picked))]


def test_a_vectors_strip_shows_its_strongest_values_in_full_colour_and_zero_white(qtbot):
    """The strip's scale is symmetric around 0: the largest |value| is pure red or blue, half
    of it half as saturated, 0 white, a masked value grey; never a colour out of range."""
    picked = [-2.0, -1.0, 0.0, 1.0, 2.0, float("nan"), 0.5, -0.5]
    assert strip_colours(qtbot, picked) == [
        (0, 0, 255), (127, 127, 255), (255, 255, 255), (255, 127, 127), (255, 0, 0),
        (160, 160, 160), (255, 191, 191), (191, 191, 255)]
    assert strip_colours(qtbot, [0.0, 0.0, 0.0, float("inf")]) == [  # no scale: white
        (255, 255, 255), (255, 255, 255), (255, 255, 255), (160, 160, 160)]
