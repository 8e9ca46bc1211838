"""One shown state for the Train workspace (issue 39): which run, which step, which text, held
in a Qt-free model (gui/training/shown_state.py), and each case the issue found in the
transitions between runs, steps and texts."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from gui_runs import WAIT_MS, past_runs

from tfstudio.gui.training.shown_state import (DRAWN_VIEWS, ShownState, blocked_html,
                                               blocked_reason_of, buttons_for, is_training,
                                               look_where, train_tips)

torch.set_num_threads(1)


# ---------------------------------------------------------------------- the model, without Qt
def test_the_shown_state_imports_no_qt():
    code = ("import sys; import tfstudio.gui.training.shown_state; "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_buttons_follow_the_lifecycle_and_an_invalid_graph():
    state = ShownState()
    assert state.progress_text() == "no run yet" and state.refusal() is None
    idle = state.buttons()
    assert idle.train and not idle.pause and not idle.stop and idle.setup
    state.blocked_reason = "layers/attn: 3 heads do not divide d_model 64"
    assert not state.buttons().train
    assert state.refusal() == "Cannot train: layers/attn: 3 heads do not divide d_model 64"
    state.blocked_reason = None
    state.start_run(Path("/runs/a"), "a", 100)
    assert state.progress == (0, 100) and state.progress_text() == "%v / %m steps"
    running = state.buttons()
    assert not running.train and running.pause and running.pause_text == "Pause"
    assert running.stop and not running.setup
    assert state.refusal().startswith("A run is already going")
    state.run_state = "paused"
    assert state.buttons().pause_text == "Resume" and state.buttons().stop
    state.run_state = "stopping"
    assert not state.buttons().stop and not state.buttons().train
    state.run_state = "finished"
    assert state.buttons().train and state.refusal() is None


def test_the_buttons_offer_what_each_lifecycle_state_allows():
    """One rule for the panel's buttons and the Train menu (attach.update_actions)."""
    offered = {state: buttons_for(state, None) for state in
               ("idle", "running", "paused", "stopping", "finished", "failed")}
    assert [s for s, b in offered.items() if b.train] == ["idle", "finished", "failed"]
    assert [s for s, b in offered.items() if b.pause] == ["running", "paused"]
    assert [s for s, b in offered.items() if b.stop] == ["running", "paused"]
    assert [s for s, b in offered.items() if not b.setup] == ["running", "paused", "stopping"]
    assert offered["paused"].pause_text == "Resume" and offered["running"].pause_text == "Pause"
    assert not buttons_for("idle", "3 heads do not divide d_model 64").train


def test_train_is_blocked_by_the_graphs_first_error_and_says_how_many_more():
    def said(severity, where, message):
        return SimpleNamespace(severity=severity, where=where, message=message)
    warning = said("warning", "layers/ffn", "wide")
    error = said("error", "layers/attn", "3 heads do not divide d_model 64")
    second = said("error", "head", "no vocabulary")
    assert blocked_reason_of([warning], 0) is None          # a warning trains
    assert blocked_reason_of([warning, error], 1) == \
        "layers/attn: 3 heads do not divide d_model 64"
    assert blocked_reason_of([error, second], 2) == \
        "layers/attn: 3 heads do not divide d_model 64 (and 1 more)"
    assert blocked_reason_of((), 0) is None


def test_a_run_folder_is_the_training_runs_only_while_that_run_holds_the_trainer(tmp_path):
    run = SimpleNamespace(active=True, run_dir=tmp_path / "run-1")
    assert is_training(str(tmp_path / "run-1"), run)          # open: back to following it
    assert not is_training(str(tmp_path / "run-2"), run)      # another run: opened
    assert not is_training(str(tmp_path / "run-1"), SimpleNamespace(active=False,
                                                                    run_dir=run.run_dir))
    assert not is_training(str(tmp_path / "run-1"), None)    # nothing trains


def test_the_blocked_line_and_trains_tips_say_why_only_while_the_graph_is_invalid():
    reason = "head: d_model <64> is not 32"
    assert blocked_html(reason) == ("Cannot train: head: d_model &lt;64&gt; is not 32 "
                                    "<a href='problem'>Show the problem</a>")
    assert train_tips(reason) == (reason, f"Cannot train: {reason}")
    assert blocked_html(None) == "" and blocked_html("") == ""   # the line is hidden
    assert train_tips(None) == ("Train the graph on the canvas with these settings",
                                "train the graph on the canvas with the run setup")


def test_views_draw_a_look_once_and_only_when_shown():
    state = ShownState()
    state.start_run(Path("/runs/a"), "a", 50)
    look = {"step": 10, "text": "abc", "grad_norm": {"embed": 1.0}}
    state.look_arrived(10, "abc", follow=False)
    state.look_arrived(10, "abc", follow=False)
    assert state.now.run.looks == (10,)
    state.show_look(look)
    assert state.stale == set(DRAWN_VIEWS)
    assert state.take_stale("attention") and not state.take_stale("attention")
    assert state.take_stale("positions")
    assert not state.take_stale("curves")  # not an inspection view
    state.show_look({"step": 20, "text": "abc"})
    assert state.take_stale("attention")  # a new look: out of date again


def test_a_look_of_the_run_training_moves_every_view_and_says_whether_they_follow():
    state = ShownState()
    state.start_run(Path("/runs/a"), "tiny-gpt · 14:02:03", 400)
    assert state.caption() == "tiny-gpt · 14:02:03 · no look inside yet (training, 400 steps)"
    state.show_look({"step": 300, "text": "abc"})
    assert state.now.run.looks == (300,) and state.now.shows("attention")[1:] == (300, "abc")
    assert state.caption() == "tiny-gpt · 14:02:03 · step 300 of 400 · following training"
    state.follow = False
    assert state.caption().endswith("· replay (training goes on: tick Follow training)")
    state.run_state = "finished"  # its end: nothing to follow
    assert state.caption() == "tiny-gpt · 14:02:03 · step 300 of 400"


def test_a_moment_with_no_look_of_its_run_has_none_on_screen():
    state = ShownState()
    state.open_run(Path("/runs/old"), "old", 12, looks=[5, 10], checkpoints=[12], done=12)
    state.show_look({"step": 10, "text": "abc"})
    assert state.snapshot is not None and state.shown_step == 10
    state.slider_moved(7, "")  # no look kept at step 7: its empty state, not step 10's
    assert state.snapshot is None and state.shown_step is None and not state.stale
    assert state.caption() == "old · no look kept at step 7"


def test_telemetry_after_a_custom_look_comes_from_the_last_training_look():
    state = ShownState()
    state.show_look({"step": 30, "grad_norm": {"embed": 2.0}, "activation_rms": {"embed": 1.0}})
    state.show_look({"step": 30, "custom": True, "activation_rms": {"embed": 0.5}})
    snapshot, note = state.telemetry("grad_norm")
    assert snapshot["grad_norm"] == {"embed": 2.0} and "colours from step 30" in note
    snapshot, note = state.telemetry("activation_rms")  # the custom look has it: its own
    assert snapshot["activation_rms"] == {"embed": 0.5} and note == ""
    assert state.telemetry("off") == (state.snapshot, "")
    state.training_snapshot = None
    assert state.telemetry("grad_norm") == (None, "No gradient norm in this look: nothing is "
                                                   "coloured")


def test_a_look_is_placed_at_its_training_step_or_now_on_the_users_text():
    assert look_where({"step": 1200, "grad_norm": {}}) == "at step 1,200"
    assert look_where({"step": 1200, "custom": True}) == "now, on your text"
    assert look_where({"step": 40, "custom": False}) == "at step 40"
    assert look_where({}) == "at step 0"


def test_a_text_set_for_the_training_run_holds_its_boxes_and_no_other_runs():
    state = ShownState()
    state.start_run(Path("/runs/live"), "live", 100)
    state.ask(Path("/runs/live"), "the mill")
    assert state.box_text("abc>cba") is None          # its next look reads "the mill"
    assert state.box_text("the mill") == "the mill"   # a look that read it names it
    state.open_run(Path("/runs/past"), "past", 6, looks=[6], text="Eva")
    assert state.box_text("Eva") == "Eva"              # a past run's look names its own text
    state.back_to_training(Path("/runs/live"), "live", 100)
    assert state.box_text("abc>cba") is None
    state.show_look({"step": 20, "text": "the mill"})  # read: nothing waits any more
    assert state.box_text("abc>cba") == "abc>cba"
    assert state.box_text("") is None and state.box_text("x", typing=True) is None


def test_opening_a_past_run_keeps_nothing_of_the_previous_one():
    state = ShownState()
    state.start_run(Path("/runs/live"), "live", 400)
    state.show_look({"step": 40, "grad_norm": {"embed": 1.0}})
    state.open_run(Path("/runs/old"), "old", 12, looks=[5, 10], done=12)
    assert state.now.run.path == Path("/runs/old") and not state.now.run.live
    assert state.now.run.looks == (5, 10) and state.progress == (12, 12)
    assert state.snapshot is None and state.training_snapshot is None and not state.stale
    assert state.telemetry("grad_norm") == (None, "")


def test_an_opened_run_of_one_step_or_of_unknown_length_is_complete():
    state = ShownState()
    state.open_run(Path("/runs/one"), "one", 1, looks=[1], done=1)
    assert state.progress == (1, 1)
    state.open_run(Path("/runs/unknown"), "unknown", 0, looks=[3], done=3)  # config lost
    assert state.progress == (3, 3) and state.caption() == "unknown · step 3 of 3"


# ---------------------------------------------------------------------- in the window

def test_a_run_added_from_disk_is_named_by_its_folder_time_not_a_file_mtime(finished_run,
                                                                            tmp_path):
    """The window that trained a run calls it "tiny-gpt · 04:33:47" (folder 20261206-043347);
    added after a restart it read the time config.json was last modified (04:34:16)."""
    from tfstudio.gui.training.history import RunHistory

    stamped = shutil.copytree(finished_run, tmp_path / "runs" / "20261206-043347-tiny-gpt")
    later = os.stat(stamped / "config.json").st_mtime + 29
    os.utime(stamped / "config.json", (later, later))
    history = RunHistory(tmp_path)
    assert history.record_for_folder(stamped).label == "tiny-gpt · 04:33:47"
    # a folder the CLI named: its own name, never a modification time
    named = shutil.copytree(finished_run, tmp_path / "R")
    assert history.record_for_folder(named).label == "tiny-gpt · R"
    # and a run the app trains is named by the folder it makes
    from tfstudio.gui.training.history import folder_started
    run_dir = history.new_run_dir("tiny-gpt")
    assert folder_started(run_dir)[11:] == run_dir.name[9:11] + ":" + run_dir.name[11:13] + \
        ":" + run_dir.name[13:15]


# ---------------------------------------------------------------------- runs made once
@pytest.fixture(scope="module")
def made_runs(tmp_path_factory):
    return past_runs(tmp_path_factory.mktemp("made"))


def add(panel, path, qtbot, tmp_path):
    """Runs > Add folder on a copy of ``path`` (copied: each test owns its folders); waits
    for its weights."""
    copy = shutil.copytree(path, tmp_path / "runs" / path.name)
    record = panel.add_run_folder(str(copy))
    assert record is not None
    qtbot.waitUntil(lambda: panel.host.ready and panel.host.run_dir == copy, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not panel.background.busy, timeout=WAIT_MS)
    return record, copy


def slide_to(panel, step, qtbot):
    """The user drags the step bar's handle to ``step`` and waits for every view."""
    panel.step_bar.slider.setValue(panel.step_bar.steps.index(step))
    qtbot.waitUntil(lambda: not panel.background.busy and panel.host.ready, timeout=WAIT_MS)


def tab(panel, title):
    for i in range(panel.tabs.count()):
        if panel.tabs.tabText(i) == title:
            panel.tabs.setCurrentIndex(i)
            return panel.tabs.widget(i)
    raise AssertionError(title)


@pytest.mark.slow
def test_opening_a_run_without_looks_leaves_nothing_of_the_previous_runs_attention(
        window, made_runs, qtbot, tmp_path):
    """Attention drew the first run's step-4 map under the caption of a run with no looks
    (OpenedRuns._open never cleared the view's snapshot); and said "Press Train" although
    Look works on the opened run's weights."""
    panel = window.training.panel
    window.training.show_panel()
    tab(panel, "Attention")
    add(panel, made_runs["looks"], qtbot, tmp_path)
    slide_to(panel, 4, qtbot)
    assert panel.attention.snapshot is not None and panel.attention.snapshot["step"] == 4
    record, _ = add(panel, made_runs["bare"], qtbot, tmp_path)
    assert panel.attention.snapshot is None
    assert panel.attention.stack.currentWidget() is panel.attention.empty
    empty = panel.attention.empty.text()
    assert record.label in empty and "press Look" in empty and "Press Train" not in empty
    assert panel.step_bar.caption.text() == f"{record.label} · " + \
        "no look inside kept: press Look to read the probe text with the weights of step 6"
    # Look works there, and its look is named as the user's text on those weights
    panel.set_probe_text("the mill")
    qtbot.waitUntil(lambda: panel.attention.snapshot is not None, timeout=WAIT_MS)
    assert panel.attention.snapshot["text"] == "the mill"
    assert panel.step_bar.caption.text() == f"{record.label} · step 6 of 6 · your text, read now"


@pytest.mark.slow
def test_the_step_slider_drives_next_token_and_explain_and_its_bar_shows_on_them(
        window, made_runs, qtbot, tmp_path):
    """Next token and Explain stayed on "the weights of step 8 of 8" while Attention followed
    the slider to step 2, and the step bar was hidden on those two tabs."""
    panel = window.training.panel
    window.training.show_panel()
    record, copy = add(panel, made_runs["looks"], qtbot, tmp_path)
    assert panel.host.step == 8
    slide_to(panel, 4, qtbot)
    assert panel.host.step == 4                       # the checkpoint kept at step 4
    for title, name in (("Next token", "next_token"), ("Explain", "explain")):
        tab(panel, title)
        assert panel.step_bar.isVisible(), title
        assert panel.step_bar.caption.text() == f"{record.label} · the weights of step 4 of 8"
    slide_to(panel, 2, qtbot)                          # no checkpoint at 2: the nearest, 4
    assert panel.host.step == 4
    explain = tab(panel, "Explain")
    said = f"{record.label} · the weights of step 4 of 8 (the nearest kept to step 2)"
    assert panel.step_bar.caption.text() == said
    assert explain.caption.text() == said
    slide_to(panel, 8, qtbot)
    assert panel.host.step == 8
    tab(panel, "Next token")
    qtbot.waitUntil(lambda: "step 8 of 8" in panel.next_token.source.text(), timeout=WAIT_MS)
    # the weights the chart ran are those of the checkpoint the caption names
    from tfstudio.runs.checkpoint import load_checkpoint
    from tfstudio.runs.folder import RunFolder
    model = RunFolder(copy).graph()
    from tfstudio.compiler import compile_graph
    model = compile_graph(model)
    load_checkpoint(copy / "checkpoints" / "step-00000008", model)
    for name, value in model.state_dict().items():
        assert torch.equal(value, panel.host.model.state_dict()[name]), name


def test_next_tokens_caption_follows_the_slider_between_steps_of_one_kept_checkpoint(
        window, made_runs, qtbot, tmp_path):
    """Steps 6 and 0 both read the checkpoint kept at 4: sliding from 6 to 0 loaded nothing
    and left Next token saying "the nearest kept to step 6" (found by test_sequences)."""
    panel = window.training.panel
    window.training.show_panel()
    record, _ = add(panel, made_runs["looks"], qtbot, tmp_path)
    tab(panel, "Next token")
    slide_to(panel, 6, qtbot)
    qtbot.waitUntil(lambda: "nearest kept to step 6" in panel.next_token.source.text(),
                    timeout=WAIT_MS)
    slide_to(panel, 0, qtbot)
    assert panel.host.step == 4
    said = f"{record.label} · the weights of step 4 of 8 (the nearest kept to step 0)"
    qtbot.waitUntil(lambda: panel.next_token.source.text().startswith(said), timeout=2000)


@pytest.mark.slow
def test_run_setup_shows_the_opened_runs_own_settings_and_preview(window, made_runs, qtbot,
                                                                  tmp_path):
    """Opening a run trained on sample:small / byte / 6 steps showed the form's defaults
    (task:reverse / char / 400 steps), mixing one run's probe text with another's
    tokenizer under a false "characters not in its vocabulary" warning."""
    panel = window.training.panel
    window.training.show_panel()
    add(panel, made_runs["looks"], qtbot, tmp_path)
    add(panel, made_runs["bare"], qtbot, tmp_path)
    window.session.report_ready.emit(window.session.report)  # the canvas's report arrives late
    qtbot.wait(50)
    s = panel.setup
    assert (s.corpus_spec(), s.tokenizer.currentText(), s.steps.value(), s.warmup.value()) == \
        ("sample:small", "byte", 6, 6)
    assert s.probe_text.text() == "Eva visited the old mill by the river."
    qtbot.waitUntil(lambda: "byte" in s.preview_info.text(), timeout=WAIT_MS)
    assert "not in its vocabulary" not in s.preview_info.text()


@pytest.mark.slow
def test_positions_of_an_opened_run_are_its_own_tensors(window, made_runs, qtbot, tmp_path):
    """Positions said "The graph on the canvas, untrained" for an opened run with no look."""
    panel = window.training.panel
    window.training.show_panel()
    record, copy = add(panel, made_runs["bare"], qtbot, tmp_path)
    tab(panel, "Positions")
    qtbot.waitUntil(lambda: record.label in panel.positions.source.text(), timeout=WAIT_MS)
    assert "untrained" not in panel.positions.source.text()
    # the RoPE tables tiny-llama's weights give, not a fresh graph's
    from tfstudio.probes.snapshot import shown_positions
    from tfstudio.runs.folder import RunFolder
    expected = shown_positions(RunFolder(copy).load_model(), 16)
    assert set(panel.positions.data) == set(expected)


def test_the_parameter_count_is_the_opened_runs_own_whatever_the_canvas_held(
        window, made_runs, qtbot, tmp_path):
    """The status bar read 132.9k after one launch and 119.8k after another for one opened
    run: the canvas kept a graph equal but for its vocabulary."""
    from tfstudio.graph.cost import estimate_cost
    from tfstudio.gui.text import count_label
    from tfstudio.presets import load_preset
    from tfstudio.runs.folder import RunFolder
    window.load_graph(load_preset("tiny-llama"))          # the preset's vocabulary
    panel = window.training.panel
    window.training.show_panel()
    _, copy = add(panel, made_runs["bare"], qtbot, tmp_path)
    own = estimate_cost(RunFolder(copy).graph()).total_params
    qtbot.waitUntil(lambda: count_label(own) in window.counts_label.text(), timeout=WAIT_MS)
