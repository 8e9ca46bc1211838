"""One parameter count (issue 27, item 4): the cost model's figure is the trainer's (the model's
trainable parameters, a tied head counted once), and every place in the app that shows a count
shows that one or says what else it counts; with errors it says why there is none."""
from __future__ import annotations

import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.graph import Disconnect, Edge
from tfstudio.graph.cost import estimate_cost
from tfstudio.gui.param_count import RUN_HEADER, block_count, group_count
from tfstudio.gui.text import count_label
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

PRESETS = ["tiny-gpt", "tiny-llama", "tiny-mixtral", "tiny-alibi-gpt", "tiny-transformer",
           "tiny-t5", "tiny-bert"]


@pytest.mark.parametrize("preset", PRESETS)
def test_the_cost_models_count_is_the_trainers(preset):
    graph = load_preset(preset)
    torch.manual_seed(0)
    model = compile_graph(graph)
    trainer_figure = sum(p.numel() for p in model.parameters())  # as Trainer.n_params
    assert estimate_cost(graph).total_params == trainer_figure
    # a run's model has its vocabulary resized to its tokenizer: the same rule counts it
    fitted = fit_graph_to_tokenizer(graph, build_tokenizer("char", load_corpus("task:reverse")))
    assert estimate_cost(fitted).total_params == sum(
        p.numel() for p in compile_graph(fitted).parameters())


def test_a_single_layer_is_counted_once():
    graph = load_preset("tiny-gpt")
    graph.node("layers").params["repeat"] = 1
    assert estimate_cost(graph).total_params == sum(
        p.numel() for p in compile_graph(graph).parameters())


def test_a_groups_count_says_it_covers_every_copy():
    assert group_count(99_968, 2) == "100.0k params (2 copies, 50.0k each)"
    assert group_count(99_968, 2, short=True) == "100.0k params in 2 copies"
    assert group_count(49_984, 1) == "50.0k params"


def test_the_status_bar_model_page_and_layer_agree_on_a_preset(make_window):
    w = make_window(load_preset("tiny-gpt"))
    cost = w.session.report.cost
    total = sum(p.numel() for p in compile_graph(w.session.root).parameters())
    assert f"{count_label(total)} trainable params" in w.counts_label.text()
    w.scene.clearSelection()
    w.inspector.rebuild()
    page = w.inspector.findChildren(type(w.counts_label))
    assert any(f"Parameters now: <b>{total:,} trainable</b>" in label.text() for label in page)
    layers = w.scene.node_items["layers"]
    assert sum(n for (path, _), n in cost.node_params.items() if path == ()) == total
    repeat = w.session.root.nodes["layers"].param("repeat")
    assert block_count(layers.node, layers.params) == group_count(layers.params, repeat)
    assert f"({repeat} copies, {count_label(layers.params / repeat)} each)" in \
        block_count(layers.node, layers.params)
    w.session.execute(Disconnect(("layers",), Edge("norm_attn", "y", "attn", "x")))
    w.session.refresh_report()
    w.inspector.rebuild()
    page = w.inspector.findChildren(type(w.counts_label))
    assert any("Parameters now: <b>unavailable: the graph has" in label.text() for label in page)


def test_the_runs_column_says_it_counts_the_model_as_trained(qtbot):
    from tfstudio.gui.training.runs_view import RunsView
    view = RunsView()
    qtbot.addWidget(view)
    header = view.tree.headerItem()
    column = [header.text(i) for i in range(header.columnCount())].index(RUN_HEADER)
    assert "as trained" in RUN_HEADER and "tokenizer" in header.toolTip(column)
