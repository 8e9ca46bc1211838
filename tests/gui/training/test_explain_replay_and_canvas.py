"""The Explain view as the canvas and the run's history see it: the Embeddings tab's step slider
replays the map at each kept checkpoint (checked against a PCA and an alignment done here with
numpy on the checkpoint's own table), and a block switched off in Explain is drawn off on the
canvas, in step with the Ablation tab and the canvas's right-click."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter

import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.background import Background
from tfstudio.gui.training.explain_view import ExplainView
from tfstudio.presets import load_preset
from tfstudio.probes import ablation_effect, probe_inputs
from tfstudio.runs import RunFolder, TrainConfig, load_checkpoint
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.trainer import Trainer

torch.set_num_threads(1)
TEXT = "abcdefgh"


@pytest.fixture(scope="module")
def run_with_checkpoints(tmp_path_factory):
    """A tiny-gpt run that kept its checkpoints of steps 4 and 8."""
    run_dir = tmp_path_factory.mktemp("replay") / "run"
    cfg = TrainConfig(corpus="task:copy", tokenizer="byte", steps=8, batch_size=4,
                      checkpoint_every=4, keep_checkpoints=3, eval_every=100, log_every=4,
                      warmup_steps=1, lr=3e-2)
    end = Trainer(tfstudio.load_graph("tiny-gpt"), cfg, run_dir=run_dir).run()
    assert end.kind == "Finished"
    return RunFolder(run_dir)


def table_at(folder: RunFolder, step: int) -> np.ndarray:
    """The token embedding table of one checkpoint, read into a fresh model here."""
    model = compile_graph(folder.graph())
    load_checkpoint(folder.checkpoints / f"step-{step:08d}", model)
    return model.embed.weight.detach().double().numpy()


def pca(rows: np.ndarray) -> np.ndarray:
    centred = rows - rows.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:2].T


def test_the_step_slider_replays_the_map_at_each_checkpoint(qtbot, run_with_checkpoints):
    folder = run_with_checkpoints
    background = Background()
    view = ExplainView(background)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    model, tokenizer = folder.load_model(), folder.tokenizer()
    latest_before = {k: v.clone() for k, v in model.state_dict().items()}
    view.set_model(model, tokenizer, folder.path)
    view.tabs.setCurrentWidget(view.embedding_page)
    view.set_text(TEXT)
    view.refresh()
    qtbot.waitUntil(lambda: len(view.replay) == 2, timeout=60_000)
    background.wait()
    assert view.step_slider.isEnabled() and view.step_slider.maximum() == 1
    assert view.step_slider.value() == 1 and view.step_label.text() == "step 8"

    view.step_slider.setValue(0)  # back to the first kept step
    assert view.step_label.text() == "step 4"
    x, y = view.embedding_points.getData()
    shown = np.column_stack([x, y])
    ids = list(dict.fromkeys(tokenizer.encode(TEXT)))
    first, latest = pca(table_at(folder, 4)[ids]), pca(table_at(folder, 8)[ids])
    # the view rotates (or reflects) each step's PCA onto the latest step's axes: the
    # orthogonal Procrustes solution, R = U V^T from the SVD of first^T latest
    u, _, vt = np.linalg.svd(first.T @ latest)
    np.testing.assert_allclose(shown, first @ (u @ vt), atol=1e-6)
    # ... which moves no point relative to another: the step's own distances
    d_shown = np.linalg.norm(shown[:, None] - shown[None], axis=-1)
    d_first = np.linalg.norm(first[:, None] - first[None], axis=-1)
    np.testing.assert_allclose(d_shown, d_first, atol=1e-6)
    assert not np.allclose(first, latest, atol=1e-3)  # training did move the embeddings

    view.show_embedding_step(8)  # the last step is the model's own PCA, unrotated
    x, y = view.embedding_points.getData()
    np.testing.assert_allclose(np.column_stack([x, y]), latest, atol=1e-6)
    # the axes hold both steps' points: fixed while the slider moves
    x_range, y_range = view.embedding_plot.viewRange()
    for coords in (first @ (u @ vt), latest):
        assert x_range[0] <= coords[:, 0].min() and coords[:, 0].max() <= x_range[1]
        assert y_range[0] <= coords[:, 1].min() and coords[:, 1].max() <= y_range[1]
    # the model keeps its latest weights once the replay has read the others
    assert all(torch.equal(a, latest_before[k]) for k, a in model.state_dict().items())
    background.shutdown()


def fresh_tiny_gpt_view(qtbot, text: str):
    """(view, model, tokenizer): Explain on an untrained tiny-gpt (byte tokens, seed 0) with
    ``text`` typed in."""
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    view = ExplainView()
    qtbot.addWidget(view)
    view.set_model(model, tokenizer)
    view.set_text(text)
    return view, model, tokenizer


def test_fresh_weights_have_nothing_to_replay(qtbot):
    view, _, _ = fresh_tiny_gpt_view(qtbot, TEXT)
    view.refresh()
    assert len(view.replay) == 1 and not view.step_slider.isEnabled()
    assert "train or open a run" in view.replay_hint.text()


def rendered(scene, item) -> QImage:
    """The item's patch of the canvas, painted offscreen."""
    rect = item.sceneBoundingRect()
    image = QImage(int(rect.width()), int(rect.height()), QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    scene.render(painter, image.rect(), rect)
    painter.end()
    return image


def test_blocks_switched_off_in_explain_are_drawn_off_on_the_canvas(open_training_window):
    window = open_training_window((1366, 768))
    panel = window.training.panel
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    explain.set_model(compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"),
                                                           tokenizer)).eval(), tokenizer)
    scene = window.scene
    scene.set_path(("layers",))
    attn, ffn = scene.node_items["attn"], scene.node_items["ffn"]
    normal = rendered(scene, attn)
    assert not attn.ablated and attn.opacity() == 1.0

    # tick layer 1's attention in the Ablation tab: the canvas's attn block shows it off
    explain.switches.findItems("layers.1.attn", Qt.MatchExactly)[0].setCheckState(Qt.Checked)
    assert attn.ablated and attn.switched_off == ["layers.1.attn"]
    assert attn.opacity() < 1.0 and "Switched off in Explain" in attn.toolTip()
    assert rendered(scene, attn) != normal
    assert not ffn.ablated and ffn.opacity() == 1.0
    # a head alone: marked, not dimmed (the block still runs)
    explain.set_ablations(["layers.0.attn:head=1"])
    assert attn.switched_off == ["layers.0.attn:head=1"] and not attn.ablated
    assert attn.opacity() == 1.0 and rendered(scene, attn) != normal
    explain.set_ablations(["layers.0.attn:head=1", "layers.1.attn"])
    assert attn.switched_off == ["layers.0.attn:head=1", "layers.1.attn"]

    # at the top level the open group draws its inner block off, and its tooltip says so
    scene.set_path(())
    layers = scene.node_items["layers"]
    assert layers.inner_switched_off == {"attn": ["layers.0.attn:head=1", "layers.1.attn"]}
    assert "layers.1.attn" in layers.toolTip() and layers.opacity() == 1.0
    scene.set_path(("layers",))
    attn = scene.node_items["attn"]  # the level was rebuilt: the new item keeps the mark
    assert attn.ablated

    # untick in the Ablation tab: back to the normal drawing
    explain.set_ablations([])
    assert not attn.ablated and attn.switched_off == [] and attn.opacity() == 1.0
    assert "Switched off" not in attn.toolTip()
    assert rendered(scene, attn) == normal

    # the canvas's right-click switches every copy, and the Ablation tab follows
    ablate = next(a for a in window.view.context_actions
                  if a is not None and a.text().startswith("Switch off in Explain"))
    scene.select_nodes(["ffn"])
    ablate.trigger()
    checked = [explain.switches.item(i).text() for i in range(explain.switches.count())
               if explain.switches.item(i).checkState() == Qt.Checked]
    assert checked == ["layers.0.ffn", "layers.1.ffn"]
    ffn = scene.node_items["ffn"]
    assert ffn.ablated and ffn.switched_off == ["layers.0.ffn", "layers.1.ffn"]
    assert ablate.text() == "Switch on again in Explain"  # it says what it will do
    ablate.trigger()  # again: on, in both places
    assert explain.ablations() == [] and not scene.node_items["ffn"].ablated
    window.view.context_menu_opening.emit()  # as a right-click does before its menu shows
    assert ablate.text().startswith("Switch off in Explain")


@pytest.mark.slow
def test_the_canvas_ablation_switches_off_exactly_the_selected_blocks(open_training_window,
                                                                     qtbot):
    # tiny-t5's decoder: select its self- and cross-attention (not its feed-forward, not the
    # encoder's blocks), right-click > Switch off in Explain: the report is that ablation's
    window = open_training_window((1366, 768))
    window.load_graph(load_preset("tiny-t5"))
    panel = window.training.panel
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-t5"), tokenizer)).eval()
    explain.set_model(model, tokenizer)
    explain.set_text("abcdef>fedc")
    window.scene.set_path(("decoder",))
    window.scene.select_nodes(["attn", "cross"])
    ablate = next(a for a in window.view.context_actions
                  if a is not None and a.text().startswith("Switch off in Explain"))
    ablate.trigger()
    chosen = ["decoder.0.attn", "decoder.0.cross", "decoder.1.attn", "decoder.1.cross"]
    assert explain.ablations() == chosen  # every copy of each selected block, nothing else
    qtbot.waitUntil(lambda: "Switched off" in explain.ablation_report.text(), timeout=20_000)

    inputs = probe_inputs(model, tokenizer, "abcdef>fedc")
    effect = ablation_effect(model, inputs, chosen, tokenizer)
    lines = explain.ablation_report.text().split("\n")
    assert lines[0] == f"Switched off: {', '.join(chosen)}."
    assert lines[1] == (f"Loss on the whole text {effect.loss_before:.4f} → "
                        f"{effect.loss_after:.4f}.")
    assert f"KL at position 4: {effect.kl:.4f} nats." in lines  # the target's last token
    # switching off the whole decoder would read differently: the choice is what was scored
    everything = ablation_effect(model, inputs, chosen + ["decoder.0.ffn", "decoder.1.ffn"])
    assert f"{everything.loss_after:.4f}" != f"{effect.loss_after:.4f}"


def test_the_walk_follows_the_picked_token_in_numbers(qtbot):
    view, model, tokenizer = fresh_tiny_gpt_view(qtbot, "hello")
    view.refresh()                # the walk of the text fills the Token box...
    view.token.setCurrentIndex(2)  # ... where the user picks the first "l"
    view.token.activated.emit(2)
    cards = {view.steps_column.itemAt(i).widget().name: view.steps_column.itemAt(i).widget()
             for i in range(view.steps_column.count() - 1)}
    ids = tokenizer.encode("hello")
    # the embedding card's line: the picked token's row of the table, to 3 digits
    line = cards["embed: embedding"].picked.text()
    assert line.startswith("at l (position 2): ")
    numbers = [float(v) for v in line.split(": ", 1)[1].split(", …")[0].split(", ")]
    row = model.embed.weight[ids[2]].detach().numpy()
    np.testing.assert_allclose(numbers, row[:8], rtol=5e-3, atol=1e-6)
    assert "(64 values)" in line
    # the probabilities card's line: the five likeliest next tokens after "hel"
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([ids]))[0, 2].double(), -1).numpy()
    top = np.argsort(-probs)[:5]
    line = cards["probabilities at position 2"].picked.text()
    assert line.startswith("likeliest next: ")
    shown = line.removeprefix("likeliest next: ").split(" · ")
    assert [float(s.rsplit(" ", 1)[1]) for s in shown] == pytest.approx(probs[top], abs=1e-3)


def test_a_run_without_snapshots_starts_on_its_tasks_example(qtbot, run_with_checkpoints):
    import random

    from tfstudio.data import load_corpus

    folder = run_with_checkpoints
    view = ExplainView()
    qtbot.addWidget(view)
    view.set_model(folder.load_model(), folder.tokenizer(), folder.path)
    assert "Type a text" in view.status.text()
    view.start_on("")
    task = load_corpus(folder.config().corpus).task
    assert view.text.text() == task.example(random.Random(2024)).text.rstrip("\n")
    assert view.result is not None and view.error == ""
    view.text.setText("abc")
    view.start_on("other")  # a text the user typed stays
    assert view.text.text() == "abc"
