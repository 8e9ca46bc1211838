"""The training workspace's run lifecycle and view state, driven without a window (and
without Qt: the module must not import it)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tfstudio.gui.training.run_state import VIEWS, WorkspaceState


def test_run_state_imports_no_qt():
    code = ("import sys; import tfstudio.gui.training.run_state; "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_buttons_follow_the_lifecycle_and_an_invalid_graph():
    state = WorkspaceState()
    assert state.progress_text() == "no run yet" and state.refusal() is None
    idle = state.buttons()
    assert idle.train and not idle.pause and not idle.stop and idle.setup
    state.blocked_reason = "layers/attn: 3 heads do not divide d_model 64"
    assert not state.buttons().train
    assert state.refusal() == "Cannot train: layers/attn: 3 heads do not divide d_model 64"
    state.blocked_reason = None
    state.started(Path("/runs/a"), 100)
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


def test_views_draw_a_look_once_and_only_when_shown():
    state = WorkspaceState()
    state.started(Path("/runs/a"), 50)
    look = {"step": 10, "grad_norm": {"embed": 1.0}}
    state.probed(10)
    state.probed(10)
    assert state.viewed.steps == [10]
    state.show(look)
    assert state.stale == set(VIEWS)
    assert state.take_stale("attention") and not state.take_stale("attention")
    assert state.take_stale("positions")
    assert not state.take_stale("curves")  # not an inspection view
    state.show({"step": 20})
    assert state.take_stale("attention")  # a new look: out of date again


def test_telemetry_after_a_custom_look_comes_from_the_last_training_look():
    state = WorkspaceState()
    state.show({"step": 30, "grad_norm": {"embed": 2.0}, "activation_rms": {"embed": 1.0}})
    state.show({"step": 30, "custom": True, "activation_rms": {"embed": 0.5}})
    snapshot, note = state.telemetry("grad_norm")
    assert snapshot["grad_norm"] == {"embed": 2.0} and "colours from step 30" in note
    snapshot, note = state.telemetry("activation_rms")  # the custom look has it: its own
    assert snapshot["activation_rms"] == {"embed": 0.5} and note == ""
    assert state.telemetry("off") == (state.snapshot, "")
    state.training_snapshot = None
    assert state.telemetry("grad_norm") == (None, "No gradient norm in this look: nothing is "
                                                   "coloured")


def test_opening_a_past_run_keeps_nothing_of_the_previous_one():
    state = WorkspaceState()
    state.started(Path("/runs/live"), 400)
    state.show({"step": 40, "grad_norm": {"embed": 1.0}})
    state.opened(Path("/runs/old"), [5, 10], done=12, total=12)
    assert state.viewed.path == Path("/runs/old") and not state.viewed.live
    assert state.viewed.steps == [5, 10] and state.progress == (12, 12)
    assert state.snapshot is None and state.training_snapshot is None and not state.stale
    assert state.telemetry("grad_norm") == (None, "")


def test_an_opened_run_of_one_step_or_of_unknown_length_is_complete():
    state = WorkspaceState()
    state.opened(Path("/runs/one"), [1], done=1, total=1)
    assert state.progress == (1, 1)
    state.opened(Path("/runs/unknown"), [3], done=3, total=0)  # its config lost: done is all
    assert state.progress == (3, 3)
