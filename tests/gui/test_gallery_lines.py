"""What the presets gallery lists and says, without a window (gui/gallery_lines.py): the tiny
presets first, and a preset's facts."""
from pathlib import Path

from tfstudio.gui.gallery_lines import gallery_order, preset_facts
from tfstudio.gui.graph_report import GraphReport, report_on_graph
from tfstudio.gui.param_count import model_count
from tfstudio.gui.text import count_label
from tfstudio.presets import load_preset, preset_names


def test_the_tiny_presets_come_first_each_part_by_name():
    names = gallery_order(preset_names())
    tiny = [n for n in names if n.startswith("tiny")]
    assert names[:len(tiny)] == sorted(tiny) and len(tiny) >= 5
    assert names[len(tiny):] == sorted(set(names) - set(tiny))
    assert sorted(names) == sorted(preset_names())           # every preset, once


def test_a_presets_facts_give_its_count_family_and_context():
    bert = load_preset("tiny-bert")
    report = report_on_graph(bert)
    facts = preset_facts(bert, report)
    assert facts[0].startswith("Parameters: ") and "Family: encoder" in facts
    assert f"Context length: {bert.meta['context_length']}" in facts
    assert preset_facts(bert, GraphReport()) == facts[1:]       # no cost report: no count
    del bert.meta["family"]
    assert "Family: ?" in preset_facts(bert, GraphReport())


def test_a_preset_with_errors_has_no_count_and_says_why_as_the_status_bar_does():
    bert = load_preset("tiny-bert")
    report = report_on_graph(bert)
    assert preset_facts(bert, report)[0] == f"Parameters: {count_label(report.cost.total_params)}"
    bert.node("layers").subgraph.node("attn").params["heads"] = 3   # 64 / 3: errors
    broken = report_on_graph(bert)
    assert broken.errors and broken.cost is not None                # a cost, but not the model's
    why = f"the graph has {broken.errors} errors (see Problems)"
    assert preset_facts(bert, broken)[0] == f"Parameters: unavailable: {why}"
    assert model_count(broken) == f"params unavailable: {why}"      # the status bar, same words


def test_presets_gallery_describes_each_preset():
    """Moved from test_interaction (a PresetGallery's list and labels): what it lists and
    says; test_interaction's new-from-preset test sees a gallery show it."""
    names = gallery_order(preset_names())
    assert names[0].startswith("tiny")          # the ones to learn with come first
    # every preset file the project ships, once (the folder read here, not through the app)
    shipped = Path(__file__).resolve().parents[2] / "resources" / "presets"
    assert sorted(names) == sorted(p.stem for p in shipped.glob("*.json"))
    assert len(names) >= 25
    graph = load_preset("tiny-bert")
    assert "masked-LM head" in str(graph.meta.get("description", ""))
    facts = "<br>".join(preset_facts(graph, report_on_graph(graph)))
    assert "Parameters:" in facts and "Family: encoder" in facts
    assert graph.nodes_of_type("mlm_head")
