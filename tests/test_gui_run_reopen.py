"""Reopening a past run in the GUI: the canvas shows the graph it trained (one undoable edit),
and its weights come from the newest checkpoint that verifies, saying which one was skipped."""
from __future__ import annotations

import pytest
import torch
from gui_runs import WAIT_MS, short_run

from tfstudio.graph import MoveNodes, SetParam
from tfstudio.presets import load_preset

torch.set_num_threads(1)


def record_of(panel, run):
    return next(r for r in panel.history.records() if r.path == str(run.run_dir))


def d_ff(window) -> int:
    return window.session.root.node("layers").subgraph.node("ffn").param("d_ff")


def test_reopening_a_run_puts_its_graph_on_the_canvas_and_undo_brings_the_users_back(
        window, qtbot):
    panel = window.training.panel
    trained_d_ff = load_preset("tiny-gpt").node("layers").subgraph.node("ffn").param("d_ff")
    run = short_run(panel, qtbot, steps=4, every=4)
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)

    # the same model on the canvas (moved blocks, the run's fitted vocabulary): nothing changes
    assert window.session.execute(MoveNodes((), {"embed": (500.0, 40.0)}))
    canvas, undo_text = window.session.root, window.session.document.undo_text
    panel.open_run(record_of(panel, run))
    assert window.session.root is canvas and window.session.document.undo_text == undo_text
    assert window.session.root.node("embed").pos == (500.0, 40.0)

    # graph B on the canvas: the run's graph A replaces it, as one edit
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", trained_d_ff // 2))
    assert d_ff(window) == trained_d_ff // 2
    messages = []
    panel._report_message = messages.append
    record = record_of(panel, run)
    panel.open_run(record)
    assert d_ff(window) == trained_d_ff                      # the canvas is the run's graph
    assert record.label in window.session.document.undo_text  # Edit > Undo names the run
    assert any(record.label in m and "Ctrl+Z" in m for m in messages)
    assert window.session.dirty                              # not the user's saved graph
    assert window.windowTitle().endswith(f" — graph of run {record.label} — tfstudio")
    assert window.session.undo()
    assert d_ff(window) == trained_d_ff // 2                 # the user's graph B is back
    assert "graph of run" not in window.windowTitle()
    assert window.session.root.node("embed").pos == (500.0, 40.0)
    assert window.session.redo() and d_ff(window) == trained_d_ff


def test_a_run_whose_graph_cannot_be_read_keeps_the_canvas_and_says_why(window, qtbot):
    panel = window.training.panel
    run = short_run(panel, qtbot, steps=4, every=4)
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", 96))
    (run.run_dir / "graph.json").write_text("{not json", encoding="utf-8")
    messages = []
    panel._report_message = messages.append
    panel.open_run(record_of(panel, run))
    assert d_ff(window) == 96
    assert any("the canvas keeps your graph" in m and "graph.json" in m for m in messages)


def test_a_damaged_newest_checkpoint_is_skipped_and_named(make_panel, qtbot, tmp_path):
    from safetensors.torch import load_file

    import tfstudio
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.trainer import Trainer

    run_dir = tmp_path / "run"
    config = TrainConfig(corpus="sample:small", tokenizer="byte", steps=8, batch_size=2,
                         seq_len=16, eval_every=0, warmup_steps=1, checkpoint_every=4,
                         keep_checkpoints=2)
    assert Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=run_dir).run().kind == \
        "Finished"
    older, newer = sorted(p for p in (run_dir / "checkpoints").iterdir() if p.is_dir())
    expected = load_file(older / "model.safetensors")  # read before the newer one is damaged
    damaged = newer / "model.safetensors"
    damaged.write_bytes(damaged.read_bytes()[:1000])

    messages = []
    panel = make_panel(report_message=messages.append)
    assert panel.add_run_folder(str(run_dir)) is not None
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    assert panel.host.step == 4 and panel.host.checkpoint == older
    state = panel.host.model.state_dict()
    for name, tensor in expected.items():
        assert torch.equal(state[name], tensor), name
    line = next(m for m in messages if "skipped" in m)
    assert "\n" not in line
    assert older.name in line and f"{newer.name}/model.safetensors" in line
    assert "truncated" in line
    row = panel.runs.item_of(str(run_dir))
    status = row.text(5)
    assert "older checkpoint" in status and row.toolTip(5) == line.split("; the canvas")[0]
    assert panel.runs.note.text() == "⚠ " + row.toolTip(5) and not panel.runs.note.isHidden()
    assert damaged.exists()  # nothing deleted


@pytest.mark.slow
def test_while_a_run_trains_the_canvas_keeps_the_graph_in_training(window, qtbot):
    panel = window.training.panel
    first = short_run(panel, qtbot, steps=4, every=4)
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", 96))
    panel.setup.steps.setValue(100_000)
    live = panel.train()
    assert live is not None
    try:
        qtbot.waitUntil(lambda: live.state == "running", timeout=WAIT_MS)
        messages = []
        panel._report_message = messages.append
        panel.open_run(record_of(panel, first))
        assert d_ff(window) == 96  # the graph being trained stays on the canvas
        assert any("the canvas keeps your graph" in m and "training" in m for m in messages)
    finally:
        live.stop()
        qtbot.waitUntil(lambda: not live.active, timeout=WAIT_MS)
