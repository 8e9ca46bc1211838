"""Every built-in preset loads, validates without a single diagnostic, and equals what its
definition in tfstudio.presets builds (so the JSON files and the definitions stay in sync)."""
import pytest

import tfstudio
from tfstudio.graph.validate import validate
from tfstudio.presets import (DEFAULT_PRESET, DEFINITIONS, PresetNotFound, load_preset,
                              load_preset_or_file, preset_names)


def test_every_definition_has_a_file_and_every_file_a_definition():
    assert sorted(DEFINITIONS) == preset_names()
    assert DEFAULT_PRESET in DEFINITIONS
    assert len(preset_names()) >= 23


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_preset_loads_validates_clean_and_matches_its_definition(name):
    graph = load_preset(name)
    assert graph.meta["name"] == name and graph.meta["description"]
    assert validate(graph) == []
    assert graph == DEFINITIONS[name](), (
        f"resources/presets/{name}.json is out of date; run python -m tfstudio.presets")


def test_unknown_preset_lists_the_known_ones(tmp_path):
    with pytest.raises(PresetNotFound, match="no preset named 'gpt5'. Available: alibi-gpt"):
        load_preset("gpt5")
    path = tmp_path / "mine.json"
    from tfstudio.graph import save_graph
    save_graph(load_preset("tiny-gpt"), path)
    assert load_preset_or_file(str(path)) == load_preset("tiny-gpt")
    assert tfstudio.load_graph("tiny-gpt") == load_preset("tiny-gpt")
