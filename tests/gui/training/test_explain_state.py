"""Explain's state is always the state the user is in: any text walks with its own token
picked, and a run change leaves nothing of the last run in any view. Each rule is checked on
the Qt-free model (gui/training/explain_state.py) with the walks the view computes; the view's
tests below check that it draws what the model holds."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tfstudio import probes
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.gui.training.explain_lines import source_caption
from tfstudio.gui.training.explain_read import compute_explanation
from tfstudio.gui.training.explain_state import NO_MODEL, NO_TEXT, ExplainState
from tfstudio.gui.training.explain_view import ExplainView
from tfstudio.gui.training.token_text import display_token
from tfstudio.presets import load_preset
from tfstudio.probes.snapshot import WALK_KEPT_EVERY
from tfstudio.train.pipeline import fit_graph_to_tokenizer

torch.set_num_threads(1)
LONG = "abcdefghijklmnop>"    # 17 tokens


def model_for(preset: str, tokenizer, seed: int = 0):
    torch.manual_seed(seed)
    return compile_graph(fit_graph_to_tokenizer(load_preset(preset), tokenizer)).eval()


def view_of(qtbot, model, tokenizer) -> ExplainView:
    view = ExplainView()
    qtbot.addWidget(view)
    view.resize(1366, 768)
    view.show()
    view.set_model(model, tokenizer)
    return view


def type_text(view, text: str) -> None:
    view.text.setText(text)
    view.text.returnPressed.emit()


def test_a_shorter_text_walks_with_its_last_token_picked(qtbot):
    tokenizer = build_tokenizer("byte")
    view = view_of(qtbot, model_for("tiny-gpt", tokenizer), tokenizer)
    type_text(view, LONG)
    assert view.result["walk"].position == 16 and view.token.currentIndex() == 16
    type_text(view, "abc>")       # was refused: "position 16 is outside the text's 4 tokens"
    assert view.error == "" and view.status.isHidden()
    walk = view.result["walk"]
    assert walk.position == 3 and walk.tokens["tokens"] == list("abc>")
    assert view.token.count() == 4 and view.token.currentIndex() == 3
    assert view.lens.columnCount() == 4
    # a token picked in this text stays picked while the text stays
    view.token.setCurrentIndex(1)
    view.token.activated.emit(1)
    assert view.result["walk"].position == 1
    view.head.setValue(1)
    assert view.result["walk"].position == 1
    type_text(view, LONG)          # a new text: its own last token again
    assert view.result["walk"].position == 16


def test_a_failed_text_leaves_no_cards_of_the_last_one(qtbot):
    tokenizer = build_tokenizer("byte")
    view = view_of(qtbot, model_for("tiny-gpt", tokenizer), tokenizer)
    type_text(view, LONG)
    assert view.steps_column.count() > 1
    view.head.setRange(0, 9)
    view.head.setValue(9)          # tiny-gpt has 4 heads
    assert "head 9 does not exist" in view.error and not view.status.isHidden()
    assert view.steps_column.count() == 1 and view.lens.rowCount() == 0
    assert view.result is None


def test_a_run_change_clears_then_recomputes_every_view(qtbot):
    """Stories weights on a stories text, then a task run with its own 15-odd characters."""
    byte = build_tokenizer("byte")
    view = view_of(qtbot, model_for("tiny-gpt", byte), byte)
    type_text(view, "Once upon a time there was a cat")
    assert view.embedding_points is not None
    task_tokens = build_tokenizer("char", corpus=load_corpus("task:reverse"))
    task_model = model_for("tiny-gpt", task_tokens, seed=1)
    view.set_model(task_model, task_tokens)
    # nothing of the last run is left, in any view
    assert view.text.text() == "" and view.result is None
    assert view.steps_column.count() == 1 and view.lens.rowCount() == 0
    assert view.token.count() == 0 and view.embedding_points is None
    view.start_on("abc>cba")       # what the panel does once the new weights are in
    walk = view.result["walk"]
    assert walk.tokens["tokens"] == list("abc>cba") and walk.position == 6
    assert max(walk.ids["tokens"]) < task_tokens.vocab_size
    expected = probes.embedding_map(task_model, list(range(task_model.vocab_size)),
                                    task_tokens)
    x, y = view.embedding_points.getData()
    np.testing.assert_allclose(np.c_[x, y], expected["coords"], atol=1e-5)
    assert view.lens.columnCount() == 7


def test_an_answer_for_a_run_left_behind_is_dropped(qtbot):
    tokenizer = build_tokenizer("byte")
    first, second = model_for("tiny-gpt", tokenizer), model_for("tiny-llama", tokenizer)
    view = view_of(qtbot, first, tokenizer)
    jobs = []

    class Deferred:     # a worker that answers when told to
        def submit(self, fn, done, key="", error=None):
            jobs.append((fn, done))

    view.background = Deferred()
    type_text(view, LONG)
    view.set_model(second, tokenizer)
    fn, done = jobs.pop()
    done(fn())                     # the first run's walk arrives after the change
    assert view.result is None and view.steps_column.count() == 1


def test_during_training_the_latest_look_shows_with_its_step(qtbot):
    from tfstudio.probes import take_snapshot

    tokenizer = build_tokenizer("byte")
    model = model_for("tiny-gpt", tokenizer)
    view = ExplainView()
    qtbot.addWidget(view)
    view.set_model(None, None)             # what the panel does when a run starts
    assert view.caption.isHidden()         # nothing shown: nothing to name
    snapshot = take_snapshot(model, tokenizer, "abc>cba", step=120)
    view.show_snapshot(snapshot, "tiny-gpt · 10:00:00")
    assert view.caption.text() == view.state.caption() != "" and not view.caption.isHidden()
    pictures = [view.steps_column.itemAt(i).widget() for i in range(view.steps_column.count() - 1)]
    walk = probes.forward_walk(model, probes.probe_inputs(model, tokenizer, "abc>cba"))
    assert [p.name for p in pictures] == [s.name for s in walk.steps]
    assert view.snapshot_step == 120 and "step 120" in view.status.text()
    last = pictures[-1].pictures[-1]      # the probabilities: the likeliest, then the rest
    p = walk.steps[-1].value
    top = np.argsort(-p, kind="stable")[:15]
    names = tokenizer.token_strings([int(i) for i in top])
    assert last.labels == [display_token(t) for t in names] + ["others"]
    np.testing.assert_allclose(last.values[:-1], p[top], atol=1e-6)
    np.testing.assert_allclose(last.values[-1], 1 - p[top].sum(), atol=1e-6)
    later = take_snapshot(model, tokenizer, "abc>cba", step=130)
    view.show_snapshot(later)
    assert "step 130" in view.status.text()
    view.set_model(model, tokenizer)       # the weights are in: the look is gone
    assert view.snapshot_step is None and view.steps_column.count() == 1
    view.show_snapshot(later)              # and a late look does not replace the walk
    assert view.steps_column.count() == 1


def test_a_step_summary_is_the_picked_row_and_a_number_per_position():
    tokenizer = build_tokenizer("byte")
    model = model_for("tiny-gpt", tokenizer)
    walk = probes.forward_walk(model, probes.probe_inputs(model, tokenizer, LONG), position=5)
    by_name = {s.name: s for s in walk.steps}
    summary = by_name["layers.0.ffn: activation"].summary(5, 17)
    value = by_name["layers.0.ffn: activation"].value
    np.testing.assert_array_equal(summary["picked"], value[5])
    np.testing.assert_allclose(summary["per_position"], np.linalg.norm(value, axis=1),
                               rtol=1e-6)
    weights = by_name["layers.0.attn: head 0: softmax"].value
    summary = by_name["layers.0.attn: head 0: softmax"].summary(5, 17)
    np.testing.assert_array_equal(summary["picked"], weights[5])
    assert summary["picked"][6:].sum() == 0   # a causal row: nothing after the token
    probs = walk.steps[-1].summary(5, 17)
    assert "picked" not in probs and len(probs["top_ids"]) == 15
    assert abs(probs["others"] + probs["top_values"].sum() - 1) < 1e-9


def test_the_lens_is_shaded_by_probability_and_marks_the_answer(qtbot):
    from tfstudio.gui.training.explain_view import lens_shade

    tokenizer = build_tokenizer("byte")
    view = view_of(qtbot, model_for("tiny-gpt", tokenizer), tokenizer)
    type_text(view, LONG)
    lens = view.result["lens"]
    assert view.lens.columnCount() == 17 and view.lens.rowCount() == len(lens.layers)
    for r in range(len(lens.layers)):
        for c in range(17):
            item = view.lens.item(r, c)
            p = float(lens.top_probs[r, c, 0])
            assert item.background().color() == lens_shade(p)
            assert item.text().endswith(f"{p:.2f}")
            answer = lens.top_ids[r, c, 0] == lens.top_ids[-1, c, 0]
            assert item.font().bold() == bool(answer)
    assert all(view.lens.item(len(lens.layers) - 1, c).font().bold() for c in range(17))
    # shading: surer is darker
    assert lens_shade(0.9).lightness() < lens_shade(0.2).lightness() < lens_shade(0).lightness()
    # at 1366 x 768, 17 tokens fit without a scroll bar
    view.tabs.setCurrentIndex(1)
    qtbot.wait(50)
    assert not view.lens.horizontalScrollBar().isVisible()


def _checkpoint_steps(run_dir) -> list[int]:
    """The steps of a run folder's checkpoints, read from their own state.json files."""
    import json
    return sorted(json.loads((p / "state.json").read_text())["step"]
                  for p in (run_dir / "checkpoints").iterdir() if p.is_dir())


@pytest.mark.slow   # ~12 s on the shared 2 cores: it trains a 2-step run (finished_run) and
# loads two runs' weights in the app; the caption's wording is covered fast below
def test_after_opening_a_run_the_caption_names_that_run_and_its_step_and_flips_with_the_next(
        window, qtbot, finished_run, tmp_path):
    import os
    import shutil

    from gui_runs import WAIT_MS
    # a second run: the same one without its newest checkpoint, its folder an hour older (Runs
    # names a run by its graph and the time its config was written)
    older = tmp_path / "older"
    shutil.copytree(finished_run, older)
    *_, newest = sorted(p for p in (older / "checkpoints").iterdir() if p.is_dir())
    shutil.rmtree(newest)
    (older / "checkpoints" / "LATEST").write_text(
        max(p.name for p in (older / "checkpoints").iterdir() if p.is_dir()))
    written = (finished_run / "config.json").stat().st_mtime - 3600
    os.utime(older / "config.json", (written, written))
    steps = {finished_run: _checkpoint_steps(finished_run)[-1], older: _checkpoint_steps(older)[-1]}
    assert steps[finished_run] != steps[older]

    panel = window.training.panel
    explain = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                   if panel.tabs.tabText(i) == "Explain")
    panel.tabs.setCurrentWidget(explain)
    labels = {}
    for run in (finished_run, older):
        labels[run] = panel.add_run_folder(str(run)).label
        qtbot.waitUntil(lambda: explain.model is not None and explain.result is not None
                        and explain.run_dir == run, timeout=WAIT_MS)
        caption = explain.caption.text()
        # the Train workspace writes it: run, step of how many (the step bar's own words)
        assert caption.startswith(f"{labels[run]} · the weights of step {steps[run]:,} of "), \
            caption
        assert not explain.caption.isHidden() and explain.status.isHidden()  # beside the walk
    assert labels[finished_run] != labels[older]
    assert labels[finished_run] not in explain.caption.text()


# ---------------------------------------------------------------------- the model, without Qt
def walked(state: ExplainState, text: str, picked: int | None = None, head: int = 0) -> dict:
    """What the view does on Explain: compute for ``text`` at the position the state gives,
    and show the answer."""
    result = compute_explanation(state.model, state.tokenizer, text,
                                 state.position(text, picked), head, None, (1.0, 0, 1.0), [])
    state.shown(result)
    return result


def test_a_new_text_walks_to_its_own_last_token_and_a_pick_stays_with_its_text():
    tokenizer = build_tokenizer("byte")
    state = ExplainState()
    state.set_model(model_for("tiny-gpt", tokenizer), tokenizer)
    assert walked(state, LONG)["walk"].position == 16
    # the 17-token text's pick was refused in a 4-token one ("position 16 is outside...")
    walk = walked(state, "abc>", picked=16)["walk"]
    assert walk.position == 3 and walk.tokens["tokens"] == list("abc>")
    assert walked(state, "abc>", picked=1)["walk"].position == 1  # the same text: kept
    assert walked(state, LONG, picked=1)["walk"].position == 16   # a new text: its own last


def test_a_failure_leaves_no_answer_of_the_last_text_and_says_why():
    tokenizer = build_tokenizer("byte")
    state = ExplainState()
    state.set_model(model_for("tiny-gpt", tokenizer), tokenizer)
    walked(state, LONG)
    assert state.status() == "" and state.result is not None
    with pytest.raises(ValueError) as raised:   # tiny-gpt has 4 heads
        walked(state, LONG, head=9)
    state.failed(raised.value)
    assert state.result is None and state.walked_text is None
    assert "head 9 does not exist" in state.error
    assert state.status() == f"Cannot explain this: {raised.value}"
    walked(state, LONG)                         # a good text again: no error left
    assert state.error == "" and state.status() == ""


def test_a_run_change_leaves_nothing_of_the_last_run_and_late_answers_are_dropped():
    tokenizer = build_tokenizer("byte")
    first, second = model_for("tiny-gpt", tokenizer), model_for("tiny-llama", tokenizer)
    state = ExplainState()
    assert state.status() == NO_MODEL and state.caption() == ""
    state.set_model(first, tokenizer, "/runs/a", run="a", step=40)
    walked(state, LONG)
    assert state.accepts(first)
    state.set_model(second, tokenizer)
    assert not state.accepts(first)             # the first run's walk, arriving late: dropped
    assert state.accepts(second)
    assert state.result is None and state.walked_text is None and state.run_dir is None
    assert state.status() == NO_TEXT and state.caption() == source_caption("", None)
    assert state.position(LONG, 5) == -1         # no pick survives the change
    state.set_model(None, None)                  # a run starts: its weights are not in yet
    assert state.status() == NO_MODEL and state.caption() == ""


def test_a_training_look_shows_only_until_weights_load_and_names_its_step_and_token():
    state = ExplainState()
    state.set_model(None, None)
    assert state.takes_look()
    state.show_look(120, " ", "tiny-gpt · 10:00:00")
    assert state.caption() == "tiny-gpt · 10:00:00 · step 120, its latest look while it trains"
    assert state.status().startswith("Training, step 120: ") and "last token ␣." in \
        state.status()
    state.show_look(130, "a", "tiny-gpt · 10:00:00")
    assert state.status().startswith("Training, step 130: ") and "last token a." in \
        state.status()
    # a newer look without a walk: the one shown stays, and the line says so
    assert state.training_status(look_without_walk=140).endswith(
        f"The look at step 140 carries no walk (a run takes the walk every {WALK_KEPT_EVERY}th "
        "look): this is still step 130's.")
    tokenizer = build_tokenizer("byte")
    state.set_model(model_for("tiny-gpt", tokenizer), tokenizer, run="tiny-gpt · 10:00:00",
                    step=150)
    assert not state.takes_look() and state.snapshot_step is None
    assert state.caption() == "tiny-gpt · 10:00:00 · the weights of step 150"


def test_the_caption_says_whose_weights_in_each_state():
    tokenizer = build_tokenizer("byte")
    state = ExplainState()
    assert state.caption() == ""                            # nothing shown: nothing to name
    model = model_for("tiny-gpt", tokenizer)
    state.set_model(model, tokenizer)
    assert state.caption() == "Weights not from a run (fresh, or loaded by hand)"
    state.set_model(model, tokenizer, run="tiny-gpt · 09:41:03", step=300)
    assert state.caption() == "tiny-gpt · 09:41:03 · the weights of step 300"
    # the Train workspace's own words for them win (the nearest checkpoint to a step asked for)
    state.set_model(model, tokenizer, run="tiny-gpt · 09:41:03", step=300,
                    caption="tiny-gpt · 09:41:03 · the weights of step 300 of 400")
    assert state.caption() == "tiny-gpt · 09:41:03 · the weights of step 300 of 400"
    state.set_model(None, None)                              # training starts: weights go
    state.show_look(1200, "a", "tiny-gpt · 10:00:00")
    assert state.caption() == source_caption("tiny-gpt · 10:00:00", 1200, training=True)
    assert state.caption().startswith("tiny-gpt · 10:00:00 · step 1,200")
