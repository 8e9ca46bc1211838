"""What the attention view writes, without Qt (gui/training/attention_lines.py): which heads
share K/V in the graph, each head's title and the line under the map, each flipping with the
graph and the look; the view that shows them: test_plots.py."""
from __future__ import annotations

import numpy as np

from tfstudio.gui.training.attention_lines import (AVERAGE, GRID, NO_ATTENTION, colour_range,
                                                   empty_text, head_choices, head_entries,
                                                   head_groups, head_matrix, head_title,
                                                   info_line, kv_group, map_title, map_tokens,
                                                   roles_for, shared_kv)
from tfstudio.gui.training.kept_choice import kept_choice
from tfstudio.presets import load_preset


def test_query_heads_that_share_a_kv_head_are_named_by_their_group():
    llama = head_groups(load_preset("tiny-llama"))             # 4 query heads, 2 K/V heads
    assert kv_group("layers.0.attn", llama) == kv_group("layers.1.attn", llama) == (4, 2)
    shared = shared_kv(kv_group("layers.1.attn", llama), cross=False)
    assert [head_title(h, shared) for h in range(4)] == [
        "head 0 · K/V 0", "head 1 · K/V 0", "head 2 · K/V 1", "head 3 · K/V 1"]
    assert [head_title(h, (4, 1)) for h in range(4)] == [f"head {h} · K/V 0" for h in range(4)]
    gpt = head_groups(load_preset("tiny-gpt"))                  # plain multi-head: none shared
    assert shared_kv(kv_group("layers.0.attn", gpt), cross=False) is None
    assert head_title(1, None) == "head 1"
    assert shared_kv((4, 2), cross=True) is None                # cross-attention: not marked
    assert shared_kv(kv_group("nowhere.0.attn", llama), cross=False) is None


def test_a_heads_scores_are_in_its_title_only_when_given():
    roles = {"previous_token": [0.931, 0.1], "induction": [0.02, 0.5]}
    assert head_title(0, (4, 2), roles) == "head 0 · K/V 0 · prev 0.93 · ind 0.02"
    assert head_title(1, None, roles) == "head 1 · prev 0.10 · ind 0.50"
    assert head_title(2, None, roles) == "head 2"               # no score measured for it


def test_the_line_under_the_map_says_what_rows_columns_sharing_and_scores_are():
    plain = dict(cross=False, masked=True, shared=None, grid=False, roles_shown=False,
                 roles_step=None)
    assert info_line(**plain) == ("Rows sum to 1 · rows: queries, columns: the keys they read · "
                                  "hatched: masked (cannot look there) · hover a row; click a "
                                  "head in the grid")
    assert "hatched" not in info_line(**dict(plain, masked=False))
    assert "rows: decoder tokens, columns: source tokens" in info_line(**dict(plain, cross=True))
    assert "GQA: 4 query heads share 2 K/V heads, 2 per group (same K/V number: same keys)" in \
        info_line(**dict(plain, shared=(4, 2)))
    assert "MQA: all heads share one K/V head" in info_line(**dict(plain, shared=(4, 1)))
    assert "K/V" not in info_line(**plain)
    scored = info_line(**dict(plain, grid=True, roles_shown=True, roles_step=1200))
    assert "prev / ind (weights of step 1,200): how much each head attends" in scored
    elsewhere = info_line(**dict(plain, grid=True, roles_shown=False, roles_step=1200))
    assert elsewhere.endswith("measured on the weights of step 1,200: shown at that step only")


def test_head_scores_show_only_on_the_look_whose_weights_they_were_measured_on():
    roles = {"layers.0.attn": {"previous": [0.9, 0.1], "induction": [0.0, 0.8]}}
    assert roles_for(roles, 40, 40, "layers.0.attn") == roles["layers.0.attn"]
    assert roles_for(roles, 40, 10, "layers.0.attn") is None   # a replayed earlier look
    assert roles_for(roles, None, 40, "layers.0.attn") is None  # not measured yet
    assert roles_for(roles, 40, None, "layers.0.attn") is None  # no look on screen
    assert roles_for(roles, 40, 40, "layers.1.attn") is None    # no scores for that layer


def test_the_heads_box_picks_the_average_one_head_or_the_grid():
    weights = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.25, 0.75]]])  # 2 heads
    np.testing.assert_allclose(head_matrix(weights, AVERAGE), [[0.5, 0.5], [0.375, 0.625]])
    np.testing.assert_allclose(head_matrix(weights, 1), weights[1])
    assert head_matrix(weights, GRID) is None                   # the grid draws every head


def test_the_heads_box_offers_the_average_the_grid_then_each_head():
    assert head_choices(3) == [AVERAGE, GRID, 0, 1, 2]
    assert head_choices(0) == []                                # no heads: an empty box


def test_a_picked_head_is_kept_while_the_layer_has_it_else_the_average_shows():
    assert kept_choice(3, head_choices(4)) == 3                 # a new look of the same layer
    assert kept_choice(GRID, head_choices(2)) == GRID
    assert kept_choice(3, head_choices(2)) == AVERAGE           # a layer with fewer heads
    assert kept_choice(None, head_choices(2)) == AVERAGE        # nothing picked yet
    assert kept_choice(3, []) is None


def test_maps_share_the_zero_to_one_scale_unless_contrast_is_asked_for_and_the_title_says_so():
    assert colour_range(False) == (0.0, 1.0)
    assert colour_range(True) is None                           # each map to its own maximum
    assert map_title("encoder.0.attn", AVERAGE, 2, False) == "encoder.0.attn · mean of 2 heads"
    assert map_title("encoder.0.attn", 1, 2, False) == "encoder.0.attn · head 1"
    assert map_title("dec.attn", 0, 4, True) == (
        "dec.attn · head 0 · colours 0 to its largest weight")


def test_a_look_without_attention_says_the_graph_has_none_and_no_look_keeps_the_pages_reason():
    assert empty_text(True) == NO_ATTENTION             # a recurrent model's look
    assert "no attention block" in NO_ATTENTION
    assert empty_text(False) is None                    # "no run yet", "no look of this run"


def test_the_heads_box_names_each_head_without_its_scores_which_its_tooltip_gives():
    llama = head_groups(load_preset("tiny-llama"))
    shared = shared_kv(kv_group("layers.0.attn", llama), cross=False)
    roles = {"previous_token": [0.9, 0.1], "induction": [0.2, 0.8]}

    def title(h, scores):
        return head_title(h, shared, roles if scores else None)
    entries = head_entries(2, title)
    assert [(label, choice) for label, choice, _ in entries] == [
        ("Average of 2", AVERAGE), ("All heads", GRID),
        (head_title(0, shared).capitalize(), 0), (head_title(1, shared).capitalize(), 1)]
    assert [tip for *_, tip in entries] == [None, None, title(0, True), title(1, True)]
    assert entries[2][0].startswith("H") and entries[2][2] != entries[2][0]
    assert head_entries(0, title) == []


def test_a_maps_rows_are_its_queries_tokens_and_its_columns_its_keys():
    look = {"tokens": {"source": list("abc"), "target": list("xy")}}
    cross = {"query_role": "target", "key_role": "source"}
    assert map_tokens(look, cross) == (list("xy"), list("abc"))
    assert map_tokens(look, {"query_role": "target", "key_role": "target"}) == \
        (list("xy"), list("xy"))
    assert map_tokens({}, cross) == ([], []) and map_tokens(look, None) == ([], [])
