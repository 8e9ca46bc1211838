"""The Train workspace's views against the run training, without Qt
(gui/training/live_look.py): whether they show it, which look a step or Follow training
draws, the progress line's height. The panel drawing them during a real run:
test_what_is_shown.py, test_training.py."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tfstudio.gui.training.live_look import PROGRESS_LINES, line_height, newest_look, shows_run
from tfstudio.gui.training.shown_state import ShownRun

LIVE = ShownRun(Path("/runs/live"), "tiny-gpt · 10:00:00", live=True, total=60, looks=(10, 20))
PAST = ShownRun(Path("/runs/past"), "tiny-gpt · 09:00:00", live=False, total=40, looks=(40,))


def training(latest: dict | None):
    return SimpleNamespace(run_dir=Path("/runs/live"), latest_probe=latest)


def test_the_views_show_the_run_training_only_while_it_is_the_run_they_show():
    assert shows_run(LIVE, training(None))
    assert not shows_run(PAST, training(None))        # a past run opened meanwhile
    assert not shows_run(None, training(None)) and not shows_run(LIVE, None)


def test_a_step_or_following_again_draws_the_live_runs_newest_look_from_memory():
    newest = {"step": 20, "text": "abc>cba"}
    run = training(newest)
    assert newest_look(LIVE, run, 20) is newest       # the step it holds: no disk read
    assert newest_look(LIVE, run, 10) is None         # an older step: the kept look
    assert newest_look(LIVE, run) is newest           # Follow training ticked again
    assert newest_look(PAST, run, 20) is None         # a past run reads its own looks
    assert newest_look(LIVE, training(None)) is None  # no look yet: nothing to follow
    assert newest_look(LIVE, None, 20) is None


def test_the_progress_line_keeps_two_lines_and_grows_by_whole_lines():
    assert line_height(17.0, 17) == PROGRESS_LINES * 17      # one line of text: room for two
    assert line_height(50.0, 17) == 3 * 17                   # three lines, rounded
    assert line_height(0.0, 17) == 34
