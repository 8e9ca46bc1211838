"""What the experts view says and shows, without Qt (gui/training/experts_lines.py): before a
run, the graph's own mixture-of-experts blocks, counted inside groups and their copies, or that
it has none (the tab that shows it: test_states.py); after, its layers, experts and first
choices (the view: tests/gui/test_experts_layers_and_streams.py)."""
from __future__ import annotations

import json

import numpy as np

from tfstudio.gui.training.experts_lines import (NO_LOOK_YET, balanced_share, before_training,
                                                 coloured_tokens_html, expert_count,
                                                 expert_layers, first_choices, first_choices_line,
                                                 look_caption, routed_tokens)
from tfstudio.presets import PRESET_DIR, load_preset


def test_before_training_the_hint_knows_whether_the_graph_has_experts():
    spec = json.loads((PRESET_DIR / "tiny-mixtral.json").read_text())

    def count(nodes, times=1):  # the preset file's own MoE blocks, copies of groups included
        n = 0
        for node in nodes:
            if node["type"] == "group":
                n += count(node["subgraph"]["nodes"], times * node["params"].get("repeat", 1))
            n += times * (node["type"] == "moe")
        return n

    expected = count(spec["nodes"])
    assert expected >= 1
    text = before_training(load_preset("tiny-mixtral"))
    assert f"has {expected} mixture-of-experts block" in text and "Press Train" in text
    assert "no mixture-of-experts" not in text
    assert "no mixture-of-experts block" in before_training(load_preset("tiny-gpt"))


def test_the_layers_offered_are_the_looks_then_those_only_the_curves_logged():
    assert expert_layers(["layers.0.moe", "layers.1.moe"], ["layers.1.moe", "layers.2.moe"]) \
        == ["layers.0.moe", "layers.1.moe", "layers.2.moe"]
    assert expert_layers([], ["layers.2.moe"]) == ["layers.2.moe"]   # a run opened, no look
    assert expert_layers([], []) == []


def test_a_layers_experts_and_their_balanced_share_come_from_its_logged_loads_else_its_look():
    loads = np.array([[0.5, 1.0, 0.25, 0.25], [0.5, 0.5, 0.5, 0.5]])  # top-2 of 4 experts
    assert expert_count(loads, {"experts": 8}) == 4
    assert expert_count(np.zeros((0,)), {"experts": 8}) == 8          # no loads logged yet
    assert expert_count(np.zeros((0,)), None) == 0
    assert balanced_share(loads[-1], 4) == 0.5                       # 2 tokens' worth over 4
    assert balanced_share([1.0], 0) == 0.0


def test_the_first_choices_line_counts_every_expert_on_the_routed_stream():
    assert routed_tokens({"tokens": ["a", "b"], "target": ["b", "c"]}) == ["b", "c"]
    assert routed_tokens({"tokens": ["a", "b"]}) == ["a", "b"]
    assert routed_tokens({"source": ["x"]}) == ["x"] and routed_tokens({}) == []
    assert first_choices_line([1, 1, 3], 4, 40) == \
        "First choices on this text: expert 0: 0, expert 1: 2, expert 2: 0, expert 3: 1 (step 40)"


def test_the_caption_counts_first_choices_once_a_look_routed_the_text_and_says_when_before():
    assert look_caption([0, 1, 1], 2, 7) == (
        "First choices on this text: expert 0: 1, expert 1: 2 (step 7)")
    assert look_caption(None, 2, 0) == NO_LOOK_YET
    assert "first look inside the model" in NO_LOOK_YET


def test_each_probe_token_is_coloured_by_its_first_choice_expert_and_escaped():
    routing = {"assignments": [[2, 0], [0, 1], [1, 2]]}          # top-2 routing of 3 tokens
    first = first_choices(routing)
    assert first == [2, 0, 1]
    shown = coloured_tokens_html(["<", " ", "b"], first)
    assert shown.startswith("<span style='font-family:monospace;font-size:13pt;'>")
    spans = shown.split("&#8203;")
    assert "title='expert 2'" in spans[0] and "rgba(225,87,89,0.6)" in spans[0]
    assert ">&lt;</span>" in spans[0] and ">␣</span>" in spans[1]
    assert "rgba(78,121,167,0.6)" in spans[1] and "title='expert 1'" in spans[2]
    assert coloured_tokens_html([], []) == \
        "<span style='font-family:monospace;font-size:13pt;'></span>"
