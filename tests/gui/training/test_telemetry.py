"""Telemetry's values, scale and words, without Qt (gui/training/telemetry.py): what each block
of the level on the canvas and of an open frame is coloured by, where it sits on the one log
scale, each copy's own value, and the legend's lines. The canvas and strip that draw them:
test_strip_telemetry.py and test_training.py."""
from __future__ import annotations

import math

import pytest

from tfstudio.gui.training.shown_state import ShownState
from tfstudio.gui.training.telemetry import legend_lines, legend_text, note_line, shown_values

LOOK = {"grad_norm": {"embed": 1.0, "layers.0": 3.0, "layers.1": 4.0, "head": 0.01},
        "activation_rms": {"embed": 1.0, "layers.0.attn": 0.5, "layers.1.attn": 0.5}}


def test_the_levels_blocks_sit_on_one_log_scale_from_the_smallest_to_the_largest():
    shown = shown_values(LOOK, "grad_norm")
    assert shown.top == {"embed": 1.0, "layers": 5.0, "head": 0.01}  # sqrt(3² + 4²): both copies
    assert shown.label(shown.top["layers"]) == "‖g‖ 5"
    assert shown.scale_at(0.01) == 0.0 and shown.scale_at(5.0) == 1.0  # the blue and red ends
    assert shown.scale_at(1.0) == pytest.approx(2 / (2 + math.log10(5)))  # log, not linear
    look = {"grad_norm": dict(LOOK["grad_norm"], head=50.0)}  # the head's gradients explode
    loud = shown_values(look, "grad_norm")
    assert loud.scale_at(loud.top["head"]) == 1.0 and loud.scale_at(loud.top["embed"]) == 0.0
    inside = shown_values(LOOK, "activation_rms", ("layers",))
    assert inside.top == {"attn": 0.5} and inside.label(0.5) == "rms 0.5"
    assert inside.scale_at(0.5) == 0.5                          # one value: the middle
    assert shown_values(LOOK, "off") is None and shown_values(None, "grad_norm") is None
    assert shown_values({"grad_norm": {"embed": 0.0}}, "grad_norm") is None  # nothing measured


def test_a_closed_groups_copies_and_the_scale_come_from_the_values_by_hand():
    look = {"grad_norm": {"embed": 0.1, "layers.0": 3.0, "layers.1": 4.0,
                          "layers.0.attn": 1.0, "layers.1.attn": 2.0}}
    shown = shown_values(look, "grad_norm", (), open_groups=(), groups=("layers",))
    assert shown.top == {"embed": 0.1, "layers": 5.0}  # sqrt(3² + 4²): both copies' norm
    assert shown.copies == {"layers": [3.0, 4.0]} and (shown.lo, shown.hi) == (0.1, 5.0)
    assert legend_lines(shown)[0] == "Gradient norm, log scale: ‖g‖ 0.1 … 5"  # no step known
    look["step"] = 120
    assert legend_lines(shown_values(look, "grad_norm"))[0].startswith("Gradient norm at step 120,")
    assert legend_lines(shown)[-1] == "layers per copy: 0: 3 · 1: 4"
    opened = shown_values(look, "grad_norm", (), open_groups=("layers",))
    assert opened.inner == {"layers": {"attn": pytest.approx(5 ** 0.5)}}  # sqrt(1² + 2²)
    assert shown_values(look, "off") is None


def test_the_note_says_what_the_colours_mean_whose_look_they_are_or_why_there_are_none():
    """After a look at the user's own text (no backward pass) gradient norms come from the last
    training look, and the note says so; with no such look nothing is coloured, and the note
    says only that. (The canvas and its note: test_states.py.)"""
    state = ShownState()
    state.show_look({"step": 40, "grad_norm": {"embed": 2.0, "layers.0": 1.0}})
    state.show_look({"step": 40, "custom": True, "text": "hello",
                     "activation_rms": {"embed": 1.0}})
    snapshot, extra = state.telemetry("grad_norm")
    note = note_line("grad_norm", snapshot is not None, extra)
    assert note.startswith(legend_text("grad_norm")) and "colours from step 40" in note
    snapshot, extra = state.telemetry("activation_rms")        # its own: nothing to add
    assert note_line("activation_rms", snapshot is not None, extra) == \
        legend_text("activation_rms")
    state.training_snapshot = None
    snapshot, extra = state.telemetry("grad_norm")
    assert note_line("grad_norm", snapshot is not None, extra) == \
        "No gradient norm in this look: nothing is coloured"
    assert note_line("off", False, "") == ""
