"""Reopening a past run in the GUI: the canvas shows the graph it trained (one undoable edit),
and its weights come from the newest checkpoint that verifies, saying which one was skipped."""
from __future__ import annotations

import shutil

import pytest
import torch
from gui_runs import WAIT_MS

from tfstudio.graph import MoveNodes, SetParam
from tfstudio.presets import load_preset

torch.set_num_threads(1)
pytestmark = pytest.mark.xdist_group("past_run")  # one worker trains the shared run once


@pytest.fixture(scope="module")
def past_run(tmp_path_factory):
    """An 8-step tiny-gpt run on task:reverse with the app's character tokens (its vocabulary
    fitted, so not the preset's), checkpoints at steps 4 and 8 both kept. Each test opens a copy
    of it (``opened``): how the run was trained is not what these tests check."""
    import tfstudio
    from tfstudio.runs.config import TrainConfig
    from tfstudio.train.trainer import Trainer

    run_dir = tmp_path_factory.mktemp("past") / "run"
    config = TrainConfig(corpus="task:reverse", tokenizer="char", steps=8, batch_size=4,
                         seq_len=32, eval_every=0, warmup_steps=1, checkpoint_every=4,
                         keep_checkpoints=2, probe_every=4)
    assert Trainer(tfstudio.load_graph("tiny-gpt"), config, run_dir=run_dir).run().kind == \
        "Finished"
    return run_dir


def copy_of(run_dir, tmp_path):
    return shutil.copytree(run_dir, tmp_path / "run")


def opened(panel, run_dir, tmp_path, qtbot):
    """The panel's record of a copy of ``run_dir``, added from Runs, its weights loaded."""
    record = panel.add_run_folder(str(copy_of(run_dir, tmp_path)))
    assert record is not None
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    return record


def d_ff(window) -> int:
    return window.session.root.node("layers").subgraph.node("ffn").param("d_ff")


@pytest.mark.slow
def test_reopening_a_run_puts_its_graph_on_the_canvas_and_undo_brings_the_users_back(
        window, qtbot, past_run, tmp_path):
    panel = window.training.panel
    trained_d_ff = load_preset("tiny-gpt").node("layers").subgraph.node("ffn").param("d_ff")
    record = opened(panel, past_run, tmp_path, qtbot)

    # the same model on the canvas (moved blocks, the run's fitted vocabulary): nothing changes
    assert window.session.execute(MoveNodes((), {"embed": (500.0, 40.0)}))
    canvas, undo_text = window.session.root, window.session.document.undo_text
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    assert window.session.root is canvas and window.session.document.undo_text == undo_text
    assert window.session.root.node("embed").pos == (500.0, 40.0)

    # graph B on the canvas: the run's graph A replaces it, as one edit
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", trained_d_ff // 2))
    assert d_ff(window) == trained_d_ff // 2
    messages = []
    panel._report_message = messages.append
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
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


def test_a_run_whose_graph_cannot_be_read_keeps_the_canvas_and_says_why(window, qtbot, past_run,
                                                                         tmp_path):
    panel = window.training.panel
    record = opened(panel, past_run, tmp_path, qtbot)
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", 96))
    (tmp_path / "run" / "graph.json").write_text("{not json", encoding="utf-8")
    messages = []
    panel._report_message = messages.append
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    assert d_ff(window) == 96
    assert any("the canvas keeps your graph" in m and "graph.json" in m for m in messages)


def test_a_run_whose_config_went_missing_opens_and_says_run_setup_keeps_the_users(
        window, qtbot, past_run, tmp_path):
    panel = window.training.panel
    record = opened(panel, past_run, tmp_path, qtbot)
    panel.setup.steps.setValue(777)  # the user's own setting, not the run's 8 steps
    (tmp_path / "run" / "config.json").unlink()
    messages = []
    panel._report_message = messages.append
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    line = next(m for m in messages if m.startswith(f"Opened {record.label}"))
    assert "config.json cannot be read, so Run setup keeps your settings" in line
    assert panel.setup.steps.value() == 777
    assert panel.viewed.name == record.label and panel.error.isHidden()


def test_adding_a_folder_whose_config_is_damaged_is_refused_with_the_file_named(
        make_panel, past_run, tmp_path):
    run_dir = copy_of(past_run, tmp_path)
    (run_dir / "config.json").write_text("{not json", encoding="utf-8")
    errors = []
    panel = make_panel()
    panel.show_error = lambda text, title="": errors.append((title, text))
    assert panel.add_run_folder(str(run_dir)) is None
    assert errors == [("Cannot open the run", errors[0][1])]
    assert "config.json is damaged" in errors[0][1] and "\n" not in errors[0][1]
    assert str(run_dir) not in [r.path for r in panel.history.records()]


def test_a_damaged_newest_checkpoint_is_skipped_and_named(make_panel, qtbot, past_run,
                                                          tmp_path):
    from safetensors.torch import load_file

    run_dir = copy_of(past_run, tmp_path)
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
def test_while_a_run_trains_the_canvas_keeps_the_graph_in_training(window, qtbot, past_run,
                                                                   tmp_path):
    panel = window.training.panel
    past = opened(panel, past_run, tmp_path, qtbot)
    assert window.session.execute(SetParam(("layers",), "ffn", "d_ff", 96))
    panel.setup.steps.setValue(100_000)
    live = panel.train()
    assert live is not None
    try:
        qtbot.waitUntil(lambda: live.state == "running", timeout=WAIT_MS)
        messages = []
        panel._report_message = messages.append
        panel.open_run(past)
        panel.background.wait()  # its curves are read off the GUI thread
        assert d_ff(window) == 96  # the graph being trained stays on the canvas
        assert any("the canvas keeps your graph" in m and "training" in m for m in messages)
    finally:
        live.stop()
        qtbot.waitUntil(lambda: not live.active, timeout=WAIT_MS)
