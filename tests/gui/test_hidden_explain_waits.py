"""A hidden Explain view does not rebuild its stage pictures at every look inside a training run
takes (issue 27, item 6: that work stalled the event loop on every tab); shown, it draws the
newest look."""
from __future__ import annotations

import torch
from PySide6.QtCore import QObject, Signal

from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer
from tfstudio.presets import load_preset
from tfstudio.probes import take_snapshot
from tfstudio.train.pipeline import fit_graph_to_tokenizer


class FakeRun(QObject):
    probed = Signal(object)  # as a TrainingRun's: a look inside, as it arrives
    state_changed = Signal(str)


def test_a_hidden_explain_keeps_the_newest_look_and_draws_it_when_shown(open_training_window):
    w = open_training_window((1366, 768))
    w.training.show_panel()
    panel = w.training.panel
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    explain.set_model(None, None)  # a run has started: no weights in the app yet
    tokenizer = build_tokenizer("byte")
    torch.manual_seed(0)
    model = compile_graph(fit_graph_to_tokenizer(load_preset("tiny-gpt"), tokenizer)).eval()
    run = FakeRun()
    panel.run_started.emit(run)
    panel.tabs.setCurrentWidget(panel.curves)
    for step in (10, 20, 30):
        run.probed.emit(take_snapshot(model, tokenizer, "abc>cba", step=step))
    assert explain.snapshot_step is None  # nothing rebuilt while hidden
    panel.tabs.setCurrentWidget(explain)
    assert explain.snapshot_step == 30    # the newest look, at once
    run.probed.emit(take_snapshot(model, tokenizer, "abc>cba", step=40))
    assert explain.snapshot_step == 40    # shown, it follows every look
