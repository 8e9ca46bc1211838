"""The Experts view on an encoder-decoder whose decoder routes through experts: the probe text
it colours is the decoder's (target) stream, the tokens the router saw, not the source; and a
MoE layer the run's telemetry has no load for still shows its routing, with no other layer's
load curves left on its plot."""
from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.experts_view import ExpertsView
from tfstudio.gui.training.token_text import display_token
from tfstudio.gui.training.series import RunSeries
from tfstudio.presets import load_preset
from tfstudio.probes.snapshot import take_snapshot
from tfstudio.train.events import RouterMetrics
from tfstudio.train.pipeline import fit_graph_to_tokenizer

TEXT = "abcdefgh>hgfe"   # source "abcdefgh", target "<bos>hgfe": they differ at every position


@pytest.fixture(scope="module")
def routed_t5_look():
    """A look inside tiny-t5 whose decoder feed-forwards are 4-expert MoE blocks (seed 0)."""
    graph = load_preset("tiny-t5")
    decoder = next(node for node in graph if node.id == "decoder")
    ffn = next(node for node in decoder.subgraph if node.id == "ffn")
    ffn.type, ffn.params = "moe", {"experts": 4, "top_k": 2, "d_ff": 64}
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(graph, tokenizer)).eval()
    return take_snapshot(model, tokenizer, TEXT, walk=False)


def coloured(view: ExpertsView) -> list[tuple[str, int]]:
    """(token, expert) of each coloured span of the probe text, as the view shows them."""
    spans = re.findall(r"<span title='expert (\d+)'[^>]*>(.*?)</span>", view.tokens.text())
    return [(html.unescape(token), int(expert)) for expert, token in spans]


def shown_view(qtbot, look, series=None) -> ExpertsView:
    view = ExpertsView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_series(series)
    view.show_snapshot(look)
    return view


def test_an_encoder_decoder_colours_the_decoder_stream_its_router_saw(qtbot, routed_t5_look):
    look = routed_t5_look
    view = shown_view(qtbot, look)
    layers = [view.layer.itemText(i) for i in range(view.layer.count())]
    assert layers == ["decoder.0.ffn", "decoder.1.ffn"]
    target, source = look["tokens"]["target"], look["tokens"]["source"]
    assert [display_token(t) for t in target[:5]] != [display_token(t) for t in source[:5]]
    for layer in layers:
        view.layer.setCurrentText(layer)
        first = look["experts"][layer]["assignments"][:, 0].tolist()
        assert coloured(view) == [(display_token(t), e) for t, e in zip(target, first)]
        counts = np.bincount(first, minlength=4)
        assert view.caption.text().startswith("First choices on this text: " + ", ".join(
            f"expert {e}: {c}" for e, c in enumerate(counts)))


def test_a_layer_without_telemetry_shows_its_routing_and_no_other_layers_load(
        qtbot, routed_t5_look):
    look = routed_t5_look
    # the run's telemetry has loads for the first MoE layer only (three router readings)
    loads = [[0.5, 0.5, 0.5, 0.5], [0.9, 0.3, 0.4, 0.4], [1.0, 0.2, 0.2, 0.6]]
    series = RunSeries.from_events("tiny-t5 · moe", [
        RouterMetrics(step=s, expert_load={"decoder.0.ffn": load}, aux_loss=0.0)
        for s, load in zip((10, 20, 30), loads)])
    view = shown_view(qtbot, look, series)
    view.layer.setCurrentText("decoder.0.ffn")
    curves = {item.name(): item for item in view.load_plot.listDataItems()}
    assert sorted(curves) == ["balanced", "expert 0", "expert 1", "expert 2", "expert 3"]
    np.testing.assert_allclose(curves["expert 0"].getData()[1], [0.5, 0.9, 1.0])

    view.layer.setCurrentText("decoder.1.ffn")   # no load recorded for this layer
    assert view.load_plot.listDataItems() == []  # the first layer's curves are not its own
    first = look["experts"]["decoder.1.ffn"]["assignments"][:, 0].tolist()
    assert coloured(view) == [(display_token(t), e)
                              for t, e in zip(look["tokens"]["target"], first)]
    assert view.caption.text().startswith("First choices on this text: ")
