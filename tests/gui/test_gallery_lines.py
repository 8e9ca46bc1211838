"""What the presets gallery lists and says, without a window (gui/gallery_lines.py): the tiny
presets first, and a preset's facts."""
from tfstudio.gui.gallery_lines import gallery_order, preset_facts
from tfstudio.gui.graph_report import report_on_graph
from tfstudio.presets import load_preset, preset_names


def test_the_tiny_presets_come_first_each_part_by_name():
    names = gallery_order(preset_names())
    tiny = [n for n in names if n.startswith("tiny")]
    assert names[:len(tiny)] == sorted(tiny) and len(tiny) >= 5
    assert names[len(tiny):] == sorted(set(names) - set(tiny))
    assert sorted(names) == sorted(preset_names())           # every preset, once


def test_a_presets_facts_give_its_count_family_and_context():
    bert = load_preset("tiny-bert")
    facts = preset_facts(bert, report_on_graph(bert).cost)
    assert facts[0].startswith("Parameters: ") and "Family: encoder" in facts
    assert f"Context length: {bert.meta['context_length']}" in facts
    assert preset_facts(bert, None) == facts[1:]               # no cost report: no count
    del bert.meta["family"]
    assert "Family: ?" in preset_facts(bert, None)
