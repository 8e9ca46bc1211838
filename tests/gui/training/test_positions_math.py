"""The numbers behind the positions view, without Qt (gui/training/positions_math.py): the
dimensions drawn as waveforms, the round bound of their axis, and whether a look's tensors are
those already drawn. The view that draws them: test_plots.py, test_training.py."""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.axis_range import nice_bound   # the waveforms' bound rounds by it
from tfstudio.gui.training.positions_math import (NO_POSITIONS, alibi_titles, drawn_already,
                                                  drawn_rows, nothing_to_draw_text,
                                                  own_tensors_line, page_for, rope_title,
                                                  same_positions, scheme_choice,
                                                  similarity_title, table_title, trained_rows,
                                                  waveform_bound, waveform_dims, waveform_title)


def test_the_waveforms_are_even_dimensions_from_the_fastest_to_the_slowest():
    assert waveform_dims(64) == [0, 12, 24, 38, 50, 62]
    assert waveform_dims(16, count=3) == [0, 8, 14]
    assert waveform_dims(8) == [0, 2, 4, 6]  # fewer sines than waveforms: every one


def test_a_waveforms_axis_bound_is_the_next_1_2_or_5_times_a_power_of_ten():
    assert [nice_bound(v) for v in (0.03, 0.05, 0.051, 0.7, 1.0, 1.2, 3.0, 7.5, 20.0)] == \
        [0.05, 0.05, 0.1, 1.0, 1.0, 2.0, 5.0, 10.0, 20.0]


def test_a_look_whose_position_tensors_equal_those_drawn_is_the_same():
    table = np.arange(12.0).reshape(4, 3)
    drawn = {"learned": {"table": table, "similarity": table @ table.T}}
    assert same_positions(drawn, {"learned": {"table": table.copy(),
                                              "similarity": table @ table.T}})
    trained = table.copy()
    trained[2, 1] += 1e-3                       # a learned table that moved: drawn again
    assert not same_positions(drawn, {"learned": {"table": trained,
                                                  "similarity": table @ table.T}})
    assert not same_positions(drawn, {"learned": {"table": table}})          # a tensor less
    assert not same_positions(drawn, {"rope": drawn["learned"]})             # another scheme
    assert same_positions({"alibi": {"slopes": [0.5, 0.25]}}, {"alibi": {"slopes": [0.5, 0.25]}})
    assert not same_positions({"alibi": {"slopes": [0.5, 0.25]}},
                              {"alibi": {"slopes": [0.5, 0.125]}})


def test_the_scheme_shown_stays_while_the_look_has_it_and_a_choice_needs_two():
    assert scheme_choice(["learned", "rope"], "rope") == ("rope", True)
    assert scheme_choice(["learned", "rope"], "alibi") == ("learned", True)  # gone: the first
    assert scheme_choice(["rope"], "") == ("rope", False)                    # nothing to pick
    assert scheme_choice([], "rope") == (None, False)


def test_only_a_learned_tables_rows_past_the_runs_length_are_untrained():
    assert trained_rows("learned", 64, 16) == 16       # rows 16-63 never reached a batch
    assert trained_rows("learned", 64, 64) is None     # trained at its full length
    assert trained_rows("learned", 64, None) is None   # an untrained graph: no run length
    assert trained_rows("learned", 64, 0) is None
    assert trained_rows("sinusoidal", 64, 16) is None  # fixed sin/cos: nothing to train


def test_the_waveforms_axis_is_round_and_one_when_there_is_nothing_to_fit():
    assert waveform_bound(0.37) == 0.5
    assert waveform_bound(2.0) == 2.0
    assert waveform_bound(0.0) == 1.0                 # an all-zero table
    assert waveform_bound(float("nan")) == 1.0        # a diverged one
    assert waveform_bound(float("inf")) == 1.0


def test_a_learned_tables_title_names_the_rows_shown_and_where_training_never_reached():
    assert waveform_title("sinusoidal") == "Waveforms per dimension (fixed sin/cos)"
    assert waveform_title("learned") == "Waveforms per dimension (learned, changes as it trains)"
    assert table_title("learned", (17, 8), 256, 17, False) == (
        "learned table: position (rows 0–16 of 256, the run's sequence length) x dimension "
        "(columns), 17 x 8")
    assert table_title("learned", (256, 8), 256, 17, True) == (
        "learned table: position (rows; from 17, past the run's sequence length, never "
        "trained) x dimension (columns), 256 x 8")
    assert table_title("sinusoidal", (64, 8), 64, None, True) == (   # every row is drawn
        "sinusoidal table: position (rows) x dimension (columns), 64 x 8")
    assert similarity_title(17) == "similarity p_i · p_j of positions i (row), j (column), 0–16"


def test_a_look_is_drawn_again_only_when_its_tensors_or_the_trained_rows_differ():
    table = {"learned": {"table": np.zeros((8, 4)), "similarity": np.eye(8)}}
    same = {"learned": {"table": np.zeros((8, 4)), "similarity": np.eye(8)}}
    moved = {"learned": {"table": np.ones((8, 4)), "similarity": np.eye(8)}}
    assert drawn_already(table, same, 8, 8)
    assert not drawn_already(table, moved, 8, 8)          # a learned table trained on
    assert not drawn_already(table, same, None, 8)        # the run's rows are known now
    assert not drawn_already({}, {}, None, None)          # an empty look clears the page


def test_a_graph_without_positions_says_so_and_no_graph_keeps_the_pages_reason():
    assert nothing_to_draw_text("tiny-rnn (untrained)") == NO_POSITIONS
    assert "no position information" in NO_POSITIONS
    assert nothing_to_draw_text("") is None


def test_a_looks_positions_are_named_as_the_runs_own_tensors_and_when_they_were_read():
    assert own_tensors_line("tiny-gpt · 04:28:00", "at step 1,200") == \
        "tiny-gpt · 04:28:00: the model's own tensors at step 1,200"
    assert own_tensors_line("tiny-gpt · 04:28:00", "now, on your text").endswith(
        ": the model's own tensors now, on your text")


def test_a_learned_tables_untrained_rows_are_left_out_unless_asked_for_and_then_marked():
    assert drawn_rows(64, 16, all_rows=False) == (16, None)
    assert drawn_rows(64, 16, all_rows=True) == (64, 15.5)   # between rows 15 and 16
    assert drawn_rows(64, None, all_rows=True) == (64, None)  # every row trained (or unknown)
    assert drawn_rows(64, None, all_rows=False) == (64, None)


def test_each_scheme_has_its_page_and_rope_and_alibi_their_titles():
    assert [page_for(s) for s in ("learned", "sinusoidal", "rope", "alibi")] == \
        ["table", "table", "rope", "alibi"]
    assert rope_title(10000.0, 1.0) == ("score of positions m (row), n (column): depends on "
                                        "m − n only (base 10000, scaling 1)")
    assert rope_title(500000.0, 8.0).endswith("(base 500000, scaling 8)")
    assert alibi_titles([0.5, 0.0078125, 1 / 3]) == \
        ["head 0 · slope 0.5", "head 1 · slope 0.007812", "head 2 · slope 0.3333"]
