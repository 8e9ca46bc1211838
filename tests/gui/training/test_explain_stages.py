"""The walk as stages: the keyboard alone walks from the token ids to the probabilities, the
canvas lights the block explained, and a block clicked on the canvas is explained."""
from __future__ import annotations

import pytest
import torch
from PySide6.QtCore import Qt

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
TEXT = "abcdefgh>hgfedcba"


def explain_of(window):
    panel = window.training.panel
    return next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                if panel.tabs.tabText(i) == "Explain")


@pytest.mark.slow
def test_the_keyboard_walks_every_stage_and_the_canvas_follows(open_training_window, qtbot):
    window = open_training_window((1366, 768))
    explain = explain_of(window)
    window.training.show_panel()
    panel = window.training.panel
    panel.tabs.setCurrentWidget(explain)
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    explain.set_model(model, tokenizer)
    explain.set_text(TEXT)
    explain.refresh()                         # on the panel's worker thread
    qtbot.waitUntil(lambda: explain.result is not None, timeout=30_000)
    steps = explain.result["walk"].steps
    assert explain.stage == 0 and explain.stage_label.text().startswith(
        f"Stage 1 of {len(steps)}: embed: token ids")
    lit = []
    explain.stage_changed.connect(lit.append)
    explain.scroll.setFocus()
    for _ in range(len(steps) + 3):          # past the end: it stays on the last stage
        qtbot.keyClick(explain.scroll, Qt.Key_Right)
    assert explain.stage == len(steps) - 1
    assert lit == [s.block for s in steps[1:]]   # every stage once, in order
    assert not explain.next_button.isEnabled() and explain.previous_button.isEnabled()
    assert explain.stage_label.text().endswith(steps[-1].name)
    last = explain.pictures()[-1]           # scrolled into view, and framed
    assert last.isVisible()                 # laid out: its place is where it is drawn
    top = explain.scroll.verticalScrollBar().value()
    assert top <= last.y() and last.y() + last.height() <= \
        top + explain.scroll.viewport().height()
    assert last.current and not explain.pictures()[0].current
    qtbot.keyClick(explain.scroll, Qt.Key_Left)
    assert explain.stage == len(steps) - 2
    # a stage of layer 1's feed-forward: the canvas selects the group holding it...
    scene = window.scene
    explain.set_stage([s.name for s in steps].index("layers.1.ffn: activation"))
    assert scene.selected_node_ids() == ["layers"]
    # ... and inside the group, the block itself
    scene.set_path(("layers",))
    explain.set_stage([s.name for s in steps].index("layers.1.attn: output projection"))
    assert scene.selected_node_ids() == ["attn"]
    # clicking a block on the canvas explains it, in the layer already shown
    scene.select_nodes(["norm_ffn"])
    assert steps[explain.stage].name == "layers.1.norm_ffn: input"
    scene.set_path(())
    scene.select_nodes(["head"])
    assert steps[explain.stage].name == "head: logits"


def test_the_command_line_emits_the_apps_stages_in_its_order(qtbot, capsys):
    import json

    import numpy as np

    from tfstudio.cli import main
    from tfstudio.gui.training.explain_view import ExplainView

    code = main(["explain", "tiny-llama", "--text", TEXT, "--json",
                 "--seed", "2", "--position", "5"])
    out, err = capsys.readouterr()
    assert code == 0, err
    stages = json.loads(out)["stages"]
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(2)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-llama"), tokenizer)).eval()
    view = ExplainView()
    qtbot.addWidget(view)
    view.set_model(model, tokenizer)
    view.set_text(TEXT)
    view.refresh()
    view.token.setCurrentIndex(5)
    view.token.activated.emit(5)
    pictures = view.pictures()
    assert [s["name"] for s in stages] == [p.name for p in pictures]
    app = view.result["walk"].summaries()
    for cli, shown in zip(stages, app):
        assert cli["formula"] == shown["formula"] and cli["block"] == shown["block"]
        for key in ("picked", "per_position", "top_values"):
            if key in shown:
                want = np.asarray(shown[key], dtype=np.float64)
                got = np.asarray([np.nan if v is None else v for v in cli[key]],
                                 dtype=np.float64)
                finite = np.isfinite(want)
                np.testing.assert_allclose(got[finite], want[finite], atol=1e-6)


@pytest.mark.slow
def test_a_new_walk_keeps_the_explained_stage_in_view(open_training_window, qtbot):
    """Changing a setting walks again and remakes every picture; the stage being explained
    stays framed and on screen (it scrolled to pictures not yet laid out, near the top)."""
    window = open_training_window((1366, 768))
    explain = explain_of(window)
    window.training.show_panel()
    window.training.panel.tabs.setCurrentWidget(explain)
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    explain.set_model(model, tokenizer)
    explain.set_text(TEXT)
    explain.refresh()
    qtbot.waitUntil(lambda: explain.result is not None, timeout=30_000)
    explain.set_stage(30)
    first = explain.result
    explain.temperature.setValue(0.5)          # a new walk, on the worker thread
    qtbot.waitUntil(lambda: explain.result is not None and explain.result is not first,
                    timeout=30_000)
    qtbot.wait(200)                            # the app's event loop runs on, as a user's would
    shown = explain.pictures()[explain.stage]
    top = explain.scroll.verticalScrollBar().value()
    assert explain.stage == 30 and shown.current and shown.isVisible()
    assert top <= shown.y() and shown.y() + shown.height() <= \
        top + explain.scroll.viewport().height()
