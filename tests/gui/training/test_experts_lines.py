"""What the experts view says before a run, without Qt (gui/training/experts_lines.py): the
graph's own mixture-of-experts blocks, counted inside groups and their copies, or that it has
none. The tab that shows it: test_states.py."""
from __future__ import annotations

import json

from tfstudio.gui.training.experts_lines import before_training
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
