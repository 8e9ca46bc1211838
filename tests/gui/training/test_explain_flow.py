"""The walk drawn as the forward pass: a click on a square explains that stage; one stage shown
in every layer side by side; the Ablation tab scores the loss on the span the user picks and
names it. (Its stretches, boxes and squares as plain data: test_flow_layout.py.)"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.gui.training.explain_lines import chosen_span
from tfstudio.gui.training.explain_view import ExplainView
from tfstudio.presets import load_preset
from tfstudio.probes import ablation_effect, probe_inputs
from tfstudio.probes.ablation import answer_span
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
TEXT = "abcdefgh>hgfedcba"


@pytest.fixture(scope="module")
def tiny():
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    return model, tokenizer


def explained(qtbot, tiny, text=TEXT) -> ExplainView:
    model, tokenizer = tiny
    view = ExplainView()
    qtbot.addWidget(view)
    view.resize(1030, 590)
    view.show()
    view.set_model(model, tokenizer)
    view.set_text(text)
    view.refresh()
    assert view.result is not None, view.error
    return view


def test_clicking_a_square_explains_its_stage(qtbot, tiny):
    view = explained(qtbot, tiny)
    names = [s.name for s in view.result["walk"].steps]
    lit = []
    view.stage_changed.connect(lit.append)
    wanted = names.index("layers.1.ffn: activation")
    square = view.flow.square_of(wanted)
    qtbot.mouseClick(view.flow, Qt.LeftButton, pos=square.center().toPoint())
    assert view.stage == wanted and view.flow.current == wanted
    assert view.stage_label.text().endswith("layers.1.ffn: activation")
    assert lit == ["layers.1.ffn"]
    shown = [p for p in view.pictures() if p.isVisible()]
    assert [p.name for p in shown] == ["layers.1.ffn: activation"]   # its picture alone
    view.next_button.click()   # Next walks on from there (the keys: test_explain_stages.py)
    assert view.stage == wanted + 1 and view.flow.current == wanted + 1


def test_a_stage_of_a_layer_is_shown_in_every_layer_side_by_side(qtbot, tiny):
    view = explained(qtbot, tiny)
    names = [s.name for s in view.result["walk"].steps]
    view.set_stage(names.index("layers.1.attn: head 0: softmax"))
    row = view.walk.layer_pictures()
    assert [p.name for p in row] == ["layers.0.attn: head 0: softmax",
                                     "layers.1.attn: head 0: softmax"]
    assert [p.current for p in row] == [False, True]
    assert "in each of the 2 layers" in view.walk.layers_title.text()
    assert all(p.isVisible() for p in row)
    view.set_stage(names.index("embed: embedding"))   # not in a layer: no row
    assert view.walk.layer_pictures() == [] and view.walk.layers_title.text() == ""


def test_the_answer_span_is_what_follows_the_last_separator():
    tokens = list("ab>cd>efg")
    assert answer_span(tokens) == (6, 9)
    assert answer_span(list("abc")) is None and answer_span(list("abc>")) is None
    span, label, note = chosen_span("range", tokens, 2, 4)
    assert span == (2, 5) and label == "your span (positions 2-4: “>cd”)" and not note
    assert chosen_span("range", tokens, 0, 3)[0] is None        # position 0 has no context
    assert "not a span" in chosen_span("range", tokens, 3, 9)[2]
    assert chosen_span("none", tokens, 1, 1) == (None, "", "")


def test_the_ablation_is_scored_on_the_picked_span_and_names_it(qtbot, tiny):
    model, tokenizer = tiny
    view = explained(qtbot, tiny)
    view.set_ablations(["layers.0.attn"])
    inputs = probe_inputs(model, tokenizer, TEXT)
    answer = ablation_effect(model, inputs, ["layers.0.attn"], span=(9, 17))
    report = view.ablation_report.text()
    assert (f"Loss on the answer tokens (positions 9-16: “hgfedcba”) "
            f"{answer.span_loss_before:.4f} → {answer.span_loss_after:.4f}.") in report
    view.ablation.span_kind.setCurrentIndex(view.ablation.span_kind.findData("range"))
    view.ablation.span_start.setValue(2)
    view.ablation.span_end.setValue(4)
    mine = ablation_effect(model, inputs, ["layers.0.attn"], span=(2, 5))
    report = view.ablation_report.text()
    assert (f"Loss on your span (positions 2-4: “cde”) {mine.span_loss_before:.4f} → "
            f"{mine.span_loss_after:.4f}.") in report
    assert not np.isclose(mine.span_loss_after, answer.span_loss_after)
    view.ablation.span_kind.setCurrentIndex(view.ablation.span_kind.findData("answer"))
    view.set_text("abcdefgh")      # no answer in this text: the note says so, no span line
    view.refresh()
    report = view.ablation_report.text()
    assert "no answer after a “>”" in report and "positions" not in report.split("\n")[1]
