"""The Explain walk's flow as plain data, without Qt (gui/training/flow_layout.py): stretches of
the residual stream in the order computed, a box per block, a square per stage, where each is
drawn, and one stage in every layer. The flow painted and clicked: test_explain_flow.py."""
from __future__ import annotations

import pytest
import torch

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.explain_read import compute_explanation
from tfstudio.gui.training.flow_layout import (CELL, COLUMN, GAP, PER_LINE, SPINE_Y, TITLE,
                                               FlowBlock, FlowColumn, across_layers,
                                               flow_columns, flow_geometry, same_copy,
                                               section_of)
from tfstudio.presets import load_preset
from tfstudio.train.pipeline import fit_graph_to_tokenizer

TEXT = "abcdefgh>hgfedcba"


@pytest.fixture(scope="module")
def walk():
    """The walk the Explain view computes for TEXT with tiny-gpt's weights (its last token,
    head 0, every layer)."""
    torch.set_num_threads(1)
    tokenizer = build_tokenizer("byte")
    graph = fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)
    model = compile_graph(graph).eval()
    return compute_explanation(model, tokenizer, TEXT, -1, 0, None, (1.0, 0, 1.0), [])["walk"]


def test_a_step_belongs_to_its_stretch_of_the_stream():
    assert section_of("layers.1.attn") == ("layers.1", "attn")
    assert section_of("layers.1") == ("layers.1", "stream")
    assert section_of("embed") == ("embed", "embed")
    assert section_of("") == ("", "sampling")


def test_the_flow_follows_the_forward_pass_in_order(walk):
    columns = flow_columns(walk.summaries())
    assert [c.title for c in columns] == ["embed · pos", "layer 0", "layer 1",
                                          "final_norm · head", "sampling"]
    assert [b.name for b in columns[1].blocks] == ["norm_attn", "attn", "norm_ffn", "ffn",
                                                   "stream"]
    order = [i for c in columns for b in c.blocks for i in b.stages]
    assert order == list(range(len(walk.steps)))   # each stage once, in order


def test_one_stage_is_found_in_every_copy_of_its_layer_and_none_outside_a_layer(walk):
    names = [s.name for s in walk.steps]
    softmax = names.index("layers.1.attn: head 0: softmax")
    assert [names[i] for i in across_layers(names, softmax)] == \
        ["layers.0.attn: head 0: softmax", "layers.1.attn: head 0: softmax"]
    assert across_layers(names, names.index("embed: embedding")) == []
    assert same_copy("layers.1.attn", "layers.1.ffn") and not same_copy("layers.0.attn",
                                                                           "layers.1.attn")
    assert not same_copy("embed", "embed")                       # outside any group
    assert across_layers(["layers.1.attn: x", "layers.10.attn: x", "layers.1x.attn: x"], 0) \
        == [0, 1]


def test_each_block_is_a_box_along_the_spine_and_each_stage_a_square_in_lines_of_four():
    columns = [FlowColumn("embed", "top:embed", [FlowBlock("embed", "layer", [0])]),
               FlowColumn("layer 0", "layers.0", [FlowBlock("attn", "attention",
                                                            list(range(1, 7))),
                                                  FlowBlock("ffn", "feed_forward", [7])])]
    geometry = flow_geometry(columns)
    (embed, _), (attn, _), (ffn, _) = geometry.boxes
    assert embed == (8.0, SPINE_Y + 10, COLUMN, TITLE + (CELL + GAP) + 4)
    assert attn == (8.0 + COLUMN + 6 + 12, SPINE_Y + 10, COLUMN, TITLE + 2 * (CELL + GAP) + 4)
    assert ffn[0] == attn[0] + COLUMN + 6                      # boxes of a stretch side by side
    squares = dict((i, rect) for rect, i in geometry.squares)
    assert sorted(squares) == list(range(8))
    assert squares[1][:2] == (attn[0] + 7, attn[1] + TITLE)
    assert squares[1 + PER_LINE][:2] == (attn[0] + 7, attn[1] + TITLE + CELL + GAP)  # line 2
    assert geometry.spans == [(8.0, 8.0 + COLUMN, "embed"),
                              (attn[0], ffn[0] + COLUMN, "layer 0")]
    assert geometry.size == (int(ffn[0] + COLUMN + 6 + 12 + 12),
                             int(attn[1] + attn[3] + 6))
    assert flow_geometry([]).size == (20, SPINE_Y + 12)
