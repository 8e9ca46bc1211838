"""Command-line outputs carry what they read and refusals name what they refuse: the presets list
gives each preset's description, inspect --json its FLOPs per token, and the window check
accepts an X11 display. In-process, no training.
Written from survivors of the cli mutation sample (issue 29)."""
from __future__ import annotations

import json

import pytest

from tfstudio.cli import main
from tfstudio.cli.errors import UsageError
from tfstudio.cli.gui import check_display
from tfstudio.graph.cost import estimate_cost
from tfstudio.presets import load_preset


def test_the_long_presets_list_gives_each_preset_its_description(capsys):
    assert main(["presets", "--long"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("tiny-gpt")
    assert lines[at + 1].strip() == load_preset("tiny-gpt").meta["description"].strip()


def test_inspect_json_gives_the_flops_per_token_of_the_cost_model(capsys):
    assert main(["inspect", "tiny-gpt", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flops_per_token"] == estimate_cost(load_preset("tiny-gpt")).flops_per_token > 0


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="Linux rule")
def test_a_window_opens_on_an_x11_display_and_is_refused_without_one(monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    check_display(None)                      # an X11 display: no refusal
    monkeypatch.delenv("DISPLAY")
    with pytest.raises(UsageError, match="no display"):
        check_display(None)
