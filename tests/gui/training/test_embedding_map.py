"""The Embeddings tab's map, without Qt (gui/training/embedding_map.py): fixed axes for a replay,
labels stacked instead of printed over each other, the picked token's neighbours, the step and
what a new read-out does to the replay. The tab drawing them: test_explain_view.py,
test_explain_replay_and_canvas.py."""
from __future__ import annotations

import numpy as np
import pytest

from tfstudio.gui.training.embedding_map import (MAP_MARGIN, label_offsets, map_range,
                                                 neighbours, replay_action, step_caption)


def test_a_replays_axes_hold_every_maps_points_with_a_margin():
    early = {"coords": np.array([[0.0, 0.0], [1.0, 2.0]])}
    late = {"coords": np.array([[-1.0, 0.5], [3.0, 1.0]])}
    (x0, x1), (y0, y1) = map_range([early, late])
    assert (x0, x1) == pytest.approx((-1 - 4 * MAP_MARGIN, 3 + 4 * MAP_MARGIN))
    assert (y0, y1) == pytest.approx((0 - 2 * MAP_MARGIN, 2 + 2 * MAP_MARGIN))
    one = map_range([{"coords": np.array([[2.0, 2.0]])}])          # a single point: not flat
    assert one[0][0] < 2.0 < one[0][1]


def test_labels_on_one_spot_stack_a_line_apart_and_apart_ones_stay():
    ranges = ((0.0, 1.0), (0.0, 1.0))
    together = np.array([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    lifts = label_offsets(together, ["a", "b", "c"], ranges, cell=(0.01, 0.05))
    assert lifts[:, 0].tolist() == [0.0, 0.0, 0.0]
    assert lifts[:, 1] == pytest.approx([0.0, 0.05, 0.10])
    apart = np.array([[0.1, 0.1], [0.9, 0.9]])
    assert label_offsets(apart, ["a", "b"], ranges, cell=(0.01, 0.05)).tolist() == \
        [[0.0, 0.0], [0.0, 0.0]]
    wide = np.array([[0.50, 0.5], [0.54, 0.5]])         # close, but wide labels touch
    assert label_offsets(wide, ["hello", "world"], ranges, cell=(0.01, 0.05))[1, 1] > 0
    assert label_offsets(wide, ["a", "b"], ranges, cell=(0.01, 0.05))[1, 1] == 0


def test_the_picked_token_is_marked_with_its_nearest_neighbours_when_it_is_one_token():
    entry = {"ids": [7, 8, 9], "labels": ["a", "b", "c"],
             "neighbours": [[8, 9], [7, 9], [8, 7]],
             "neighbour_cosines": [[0.9, 0.1], [0.9, 0.3], [0.3, 0.1]]}
    assert neighbours(entry, [9]) == (2, [("b", 0.3), ("a", 0.1)])
    assert neighbours(entry, [5]) == (None, None)              # not in the map
    assert neighbours(entry, [7, 8]) == (None, None)           # two tokens: no one point
    assert step_caption(None) == "now" and step_caption(1200) == "step 1,200"


def test_a_new_text_or_run_asks_for_its_replay_once_and_fresh_weights_have_none():
    key = (1, "/runs/a", (7, 8))
    assert replay_action(None, key, None, False) == "fresh"
    assert replay_action("/runs/a", key, None, False) == "ask"
    assert replay_action("/runs/a", key, (1, "/runs/a", (7,)), True) == "ask"   # a new text
    assert replay_action("/runs/a", key, key, False) == "wait"      # still loading
    assert replay_action("/runs/a", key, key, True) == "show"
