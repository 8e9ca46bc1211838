"""What each transition of the shown state does to the views, without Qt
(gui/training/shown_views.py): which checkpoint the weight views load, or that the loaded
weights are only named for a new step; why a run's positions wait; the preview's length; the
views it empties and the weights it loads, told to stand-ins. The real views drawing them:
test_shown_state.py, test_what_is_shown.py."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.gui.training.shown_state import Shown, ShownRun, ShownState
from tfstudio.gui.training.shown_views import (LOAD, SAME, ShownViews, positions_waiting,
                                               preview_length, weights_action)

A = ShownRun(Path("/runs/a"), "tiny-gpt · 04:28:00", live=False, total=8, looks=(2, 4, 6, 8),
             checkpoints=(4, 8))
B = ShownRun(Path("/runs/b"), "tiny-llama · 04:31:25", live=False, total=6, checkpoints=(6,))


def host(run=None, step=None):
    return SimpleNamespace(ready=run is not None, run_dir=run.path if run else None, step=step)


def test_the_weight_views_load_the_checkpoint_a_new_run_or_step_reads_once():
    assert weights_action(Shown(), Shown(A, 8), host()) == LOAD          # a run opened
    assert weights_action(Shown(A, 8), Shown(A, 4), host(A, 8)) == LOAD  # another checkpoint
    assert weights_action(Shown(A, 8), Shown(B, 6), host(A, 8)) == LOAD  # another run
    # already loaded (the load finished first): nothing to load, only named for the step
    assert weights_action(Shown(), Shown(A, 8), host(A, 8)) == SAME


def test_a_step_that_keeps_its_nearest_checkpoint_only_renames_the_weights():
    assert weights_action(Shown(A, 8), Shown(A, 0), host(A, 8)) == LOAD   # 8 reads 8, 0 reads 4
    assert weights_action(Shown(A, 6), Shown(A, 0), host(A, 4)) == SAME   # both read 4
    assert weights_action(Shown(A, 4), Shown(A, 2), host(A, 4)) == SAME
    # the last moment's load still on its way (B's weights held): not asked for again
    assert weights_action(Shown(A, 4), Shown(A, 2), host(B, 6)) is None
    live = ShownRun(Path("/runs/c"), "tiny-gpt · 05:00:00", live=True, total=60)
    assert weights_action(Shown(), Shown(live, None), host()) is None     # training: no weights
    assert weights_action(Shown(A, 8), Shown(), host(A, 8)) is None       # nothing shown
    bare = ShownRun(Path("/runs/d"), "tiny-gpt · 06:00:00", live=False, total=4)
    assert weights_action(Shown(), Shown(bare, None), host()) is None     # it kept none


def test_a_runs_positions_wait_for_its_weights_or_say_it_saved_none():
    assert positions_waiting(A) == \
        "tiny-gpt · 04:28:00: its positions appear when its weights load"
    bare = ShownRun(Path("/runs/d"), "tiny-gpt · 06:00:00", live=False, total=4)
    assert positions_waiting(bare) == "tiny-gpt · 06:00:00 saved no weights to read them from"
    live = ShownRun(Path("/runs/c"), "tiny-gpt · 05:00:00", live=True, total=60)
    assert positions_waiting(live).endswith("when its weights load")
    assert [preview_length(SimpleNamespace(meta=meta)) for meta in
            ({"context_length": 16}, {"context_length": 1024}, {})] == [16, 64, 64]


class Recorder:
    """A view or controller that records what it is told."""

    def __init__(self, **fields):
        self.told: list = []
        self.__dict__.update(fields)

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.told.append((name, *args, *kwargs.values()))


def panel_showing(now, held):
    panel = SimpleNamespace(
        shown=ShownState(), attention=Recorder(), experts=Recorder(), positions=Recorder(),
        tabs=SimpleNamespace(currentWidget=lambda: None), host=held, generation=Recorder(),
        next_token=Recorder(logits=None, source=Recorder()), shown_changed=Recorder(),
        view_caption=lambda view: now.caption(view))
    return panel


def test_a_transition_empties_the_look_views_and_loads_the_weights_it_reads():
    now = Shown(A, 4)
    panel = panel_showing(now, host())
    views = ShownViews(panel)
    views.moved(Shown(), Shown(B, None))                 # B kept no look: every look view empty
    assert panel.attention.told == [("show_empty", Shown(B, None).caption("attention"))]
    assert panel.experts.told == [("show_snapshot", None)]
    assert panel.positions.told == [("show_unavailable", "")]   # drawn when its tab shows
    assert panel.generation.told == [("load_weights", B.path, 6)]
    views.moved(Shown(B, None), now)                     # A's look at 4: its weights at 4
    assert panel.generation.told[-1] == ("load_weights", A.path, 4)
    assert len(panel.attention.told) == 1                # a look to show: not emptied
    assert panel.shown_changed.told == [("emit",), ("emit",)]
