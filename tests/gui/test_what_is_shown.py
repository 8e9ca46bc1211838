"""The Train workspace says one truth at a time (issue 27): every label names the run, the step
and the text it describes, and each case the issue found (a reopened run under the previous
run's header, Positions following a hidden slider, head scores of the final weights on step 0,
"your text" beside a slider at another step, two losses at once) is replayed here with the
labels checked against the data."""
from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch
from gui_runs import WAIT_MS, short_run
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionComboBox

from tfstudio.probes import SnapshotStore
from tfstudio.runs.folder import RunFolder

torch.set_num_threads(1)
pytestmark = pytest.mark.slow  # each trains a real run in the app (1-5 s each on 2 cores)


def record_of(panel, run):
    return next(r for r in panel.history.records() if r.path == str(run.run_dir))


def loss_in(text: str) -> str:
    """The "loss 2.1800" figure a label shows."""
    match = re.search(r"loss[\s\u00a0](\d+\.\d{4})", text)
    assert match, text
    return match.group(1)


def step_in(text: str) -> int:
    """The step a label names ("step 1,234 of 5,000")."""
    return int(re.search(r"step[\s\u00a0]([\d,]+)", text).group(1).replace(",", ""))


def previewed(panel) -> str:
    """What Run setup's token preview shows: each token's label, joined."""
    cells = re.findall(r">([^<]*)</span><sub", panel.setup.preview.text())
    return html.unescape("".join(cells))


def previewed_by(tokenizer):
    """``text`` -> what a preview of it cut by ``tokenizer`` shows (``previewed``)."""
    from tfstudio.gui.training.token_text import display_token

    return lambda text: "".join(display_token(t)
                                for t in tokenizer.token_strings(tokenizer.encode(text)))


def test_opening_a_past_run_replaces_the_header_setup_preview_and_probe_text(make_panel, qtbot):
    panel = make_panel()
    stories = short_run(panel, qtbot, steps=4, every=2, corpus="sample:small",
                        probe_text="Once upon a time")
    task = short_run(panel, qtbot, steps=6, every=3, corpus="task:reverse")
    assert "acc " in panel.curves.summary.text()  # the task run: the last one added

    record = record_of(panel, stories)
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    header = panel.curves.summary.text()
    assert header.startswith(record.label)
    assert loss_in(header) == f"{stories.series.loss[-1]:.4f}"
    assert "step 4 of 4" in header and "acc" not in header  # a text corpus has no accuracy
    assert panel.setup.corpus_spec() == "sample:small"
    assert panel.setup.steps.value() == 4
    assert panel.setup.probe_text.text() == "Once upon a time"
    own = RunFolder(stories.run_dir).tokenizer()
    info = panel.setup.preview_info.text()
    assert info.startswith(f"{own.name}: {own.vocab_size:,} ids")  # its own tokenizer, not
    assert panel.step_bar.steps == SnapshotStore(stories.run_dir).steps()  # the task run's
    # Next token answers from the opened run's weights, named; the task run's late answer
    # (its weights loaded when it ended) is dropped, not decoded with this run's tokenizer
    qtbot.waitUntil(lambda: panel.host.ready and panel.host.run_dir == stories.run_dir,
                    timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not panel.background.busy, timeout=WAIT_MS)
    assert panel.next_token.source.text().startswith(f"{record.label} · the weights of step 4")

    task_record = record_of(panel, task)
    panel.open_run(task_record)  # and back: the task's numbers, accuracy included
    panel.background.wait()  # its curves are read off the GUI thread
    header = panel.curves.summary.text()
    assert header.startswith(task_record.label) and "acc " in header
    assert loss_in(header) == f"{task.series.loss[-1]:.4f}"
    assert panel.setup.corpus_spec() == "task:reverse" and panel.setup.steps.value() == 6


def test_every_view_of_the_insides_names_the_step_of_the_one_slider(make_panel, qtbot):
    """Positions and Next token show the step bar the slider is on, and name its step; the
    bar says when training goes on past it."""
    panel = make_panel()
    run = short_run(panel, qtbot, steps=6, every=2)
    record = record_of(panel, run)
    told = []  # views outside the package (Explain) follow the state through this signal
    panel.shown_changed.connect(lambda: told.append(panel.view_caption("attention")))
    panel.open_run(record)
    panel.background.wait()  # its curves are read off the GUI thread
    steps = SnapshotStore(run.run_dir).steps()
    assert panel.step_bar.steps == steps and len(steps) >= 3
    panel.step_bar.slider.setValue(1)
    step = steps[1]
    assert panel.snapshot["step"] == step
    assert told[-1] == f"{record.label} · step {step} of 6"
    for view in (panel.attention, panel.positions, panel.experts):
        panel.tabs.setCurrentWidget(view)
        assert panel.step_bar.isVisible(), view
        assert panel.step_bar.caption.text() == f"{record.label} · step {step} of 6"
    assert panel.positions.source.text().endswith(f"at step {step}")
    panel.tabs.setCurrentWidget(panel.curves)
    assert not panel.step_bar.isVisible()  # the curves have no step: no bar pretends so
    # nothing trains: its newest look is only its last, with nothing to follow
    panel.step_bar.slider.setValue(len(steps) - 1)
    assert panel.snapshot["step"] == steps[-1]
    assert not panel.step_bar.follow.isChecked() and not panel.step_bar.follow.isEnabled()


def test_the_next_token_chart_names_the_unknown_token_as_it_names_the_other_specials(
        make_panel, qtbot):
    """A character tokenizer's unknown token decodes to U+FFFD, a glyph that names no token;
    the chart labels it ⟨unk⟩, beside ⟨end⟩, ⟨pad⟩, ⟨mask⟩ and ⟨bos⟩."""
    from tfstudio.gui.training.next_token_view import tick_label

    panel = make_panel()
    short_run(panel, qtbot, steps=4, every=2)  # task:reverse in characters: 15 tokens
    qtbot.waitUntil(lambda: panel.host.ready, timeout=WAIT_MS)
    panel.tabs.setCurrentWidget(panel.next_token)
    qtbot.keyClicks(panel.next_token.prompt, "abc>")
    qtbot.waitUntil(lambda: panel.next_token.state is not None
                    and "after your prompt" in panel.next_token.source.text(), timeout=WAIT_MS)
    labels = {tick_label(c.text) for c in panel.next_token.state.candidates}
    assert {"⟨unk⟩", "⟨end⟩", "⟨pad⟩", "⟨mask⟩", "⟨bos⟩"} <= labels
    assert "\ufffd" not in labels


def start_long_task_run(panel, probe_every: int, eval_every: int | None = None):
    """A 5,000-step task:reverse run (char tokens, 4 x 32), long enough to act on mid-run."""
    s = panel.setup
    s.select_corpus("task:reverse")
    s.tokenizer.setCurrentText("char")
    s.steps.setValue(5000)
    s.batch.setValue(4)
    s.seq_len.setValue(32)
    if eval_every is not None:
        s.eval_every.setValue(eval_every)
    s.probe_every.setValue(probe_every)
    return panel.train()


def test_a_slider_moved_back_during_training_stays_there_and_says_so(make_panel, qtbot):
    panel = make_panel()
    run = start_long_task_run(panel, eval_every=50, probe_every=2)
    panel.tabs.setCurrentWidget(panel.positions)
    qtbot.waitUntil(lambda: len(panel.viewed.looks) >= 3 and panel.snapshot is not None
                    and panel.snapshot["step"] > panel.viewed.looks[0], timeout=WAIT_MS)
    assert "following training" in panel.step_bar.caption.text()
    assert panel.step_bar.shown_step() == panel.snapshot["step"]  # the handle is on the look
    panel.step_bar.slider.setValue(0)
    assert not panel.step_bar.follow.isChecked()
    first = panel.viewed.looks[0]
    seen = len(panel.viewed.looks)
    qtbot.waitUntil(lambda: len(panel.viewed.looks) >= seen + 2, timeout=WAIT_MS)
    QApplication.processEvents()
    # training went on; the views stay on the step the user chose, and say so
    assert panel.snapshot["step"] == first and panel.step_bar.shown_step() == first
    caption = panel.step_bar.caption.text()
    assert f"step {first} of 5,000" in caption and "replay" in caption
    assert panel.positions.source.text().endswith(f"at step {first}")
    assert panel.step_bar.follow.isEnabled()  # a live run: there is something to follow
    panel.step_bar.slider.setValue(len(panel.viewed.looks) - 1)  # the newest look: follows
    assert panel.step_bar.follow.isChecked()
    panel.step_bar.follow.setChecked(True)  # back to the newest look
    assert panel.snapshot["step"] == run.latest_probe["step"] > first
    assert panel.step_bar.shown_step() == panel.snapshot["step"]
    assert "following training" in panel.step_bar.caption.text()
    panel.stop()
    qtbot.waitUntil(lambda: not run.active, timeout=WAIT_MS)


def test_the_progress_line_and_the_curves_header_show_one_loss(make_panel, qtbot):
    panel = make_panel()
    run = start_long_task_run(panel, probe_every=0)
    checks = 0
    while checks < 3:  # at three moments during training, not only at the end
        qtbot.waitUntil(lambda: panel.progress_line.isVisible(), timeout=WAIT_MS)
        step = len(run.series.steps)
        # a progress update (twice a second) after more steps than that
        qtbot.waitUntil(lambda: step_in(panel.progress_line.text()) > step + 2, timeout=WAIT_MS)
        line, header = panel.progress_line.text(), panel.curves.summary.text()
        assert loss_in(line) == loss_in(header), (line, header)
        assert f"step {step_in(line):,} of 5,000" in header
        checks += 1
    panel.stop()
    qtbot.waitUntil(lambda: not run.active, timeout=WAIT_MS)
    line, header = panel.progress_line.text(), panel.curves.summary.text()
    assert loss_in(line) == loss_in(header) == f"{run.series.loss[-1]:.4f}"


def test_a_run_opened_while_another_trains_keeps_its_bar_and_the_line_names_the_live_run(
        make_panel, qtbot):
    """The bar under Train is the opened run's; the line below it follows the run training,
    by name, to its end; and opening the live run again gives the bar back to it."""
    messages = []
    panel = make_panel(report_message=messages.append)
    past = short_run(panel, qtbot, steps=4, every=2)
    live = start_long_task_run(panel, probe_every=0)
    live_label = live.series.name  # its label in Runs (listed once its folder is written)
    qtbot.waitUntil(lambda: len(live.series.steps) > 6, timeout=WAIT_MS)
    panel.open_run(record_of(panel, past))
    panel.background.wait()  # its curves are read off the GUI thread
    step = len(live.series.steps)
    qtbot.waitUntil(lambda: step_in(panel.progress_line.text()) > step, timeout=WAIT_MS)
    line = panel.progress_line.text().replace("\u00a0", " ")
    assert line.startswith(f"{live_label} (training): step ")
    assert (panel.progress.value(), panel.progress.maximum()) == (4, 4)  # the opened run's
    assert loss_in(panel.curves.summary.text()) == f"{past.series.loss[-1]:.4f}"
    panel.stop()
    qtbot.waitUntil(lambda: not live.active, timeout=WAIT_MS)
    line = panel.progress_line.text().replace("\u00a0", " ")
    stopped_at = live.series.steps[-1]
    assert line.startswith(f"{live_label} (stopped): step {stopped_at:,} of 5,000")
    assert "ETA" not in line and (panel.progress.value(), panel.progress.maximum()) == (4, 4)
    assert any(m.startswith(f"{live_label}: stopped at step {stopped_at:,}") for m in messages)

    panel.open_run(record_of(panel, live))
    panel.background.wait()
    assert (panel.progress.value(), panel.progress.maximum()) == (stopped_at, 5000)
    assert panel.progress_line.isHidden()  # the run shown has ended: its bar says it all


def test_the_progress_line_is_as_tall_as_its_text_in_a_laptop_column(window, qtbot):
    """A task run's line (step, loss, validation, accuracy, speed, ETA) takes three lines in
    the 1366x768 window's controls column; a fixed two-line height cut its first and last."""
    window.training.show_panel()  # the Train workspace, as the user sees it
    panel = window.training.panel
    run = start_long_task_run(panel, eval_every=2, probe_every=0)
    line = panel.progress_line
    spacing = line.fontMetrics().lineSpacing()
    # an update whose text takes three lines at the column's width: the case that was clipped
    qtbot.waitUntil(lambda: "acc" in line.text() and "ETA" in line.text()
                    and line.heightForWidth(line.width()) > 2 * spacing, timeout=WAIT_MS)
    assert line.height() >= line.heightForWidth(line.width())
    panel.stop()
    qtbot.waitUntil(lambda: not run.active, timeout=WAIT_MS)


@pytest.fixture
def window(open_training_window):
    return open_training_window((1366, 768))


def test_head_scores_and_your_text_belong_to_the_step_shown(window, qtbot):
    panel = window.training.panel
    run = short_run(panel, qtbot, steps=6, every=3)
    qtbot.waitUntil(lambda: panel.host.ready and bool(panel.attention.roles), timeout=WAIT_MS)
    attention = panel.attention
    panel.tabs.setCurrentWidget(attention)
    attention.head.setCurrentIndex(attention.head.findData("grid"))
    assert attention.roles_step == panel.host.step == 6
    layer = attention.layer.currentText()

    panel.step_bar.slider.setValue(panel.step_bar.steps.index(6))
    titles = [m.title for m in attention.grid.maps]
    scores = attention.roles[layer]["previous_token"]
    assert titles[0].endswith(f"prev {scores[0]:.2f} · ind "
                              f"{attention.roles[layer]['induction'][0]:.2f}")
    assert "weights of step 6" in attention.info.text()

    # every choice of the Heads box is whole in its text field at 1366x768 ("Head 2 · prev 0"
    # was cut there)
    option = QStyleOptionComboBox()
    attention.head.initStyleOption(option)
    field = attention.head.style().subControlRect(
        QStyle.CC_ComboBox, option, QStyle.SC_ComboBoxEditField, attention.head)
    metrics = attention.head.fontMetrics()
    for i in range(attention.head.count()):
        assert metrics.horizontalAdvance(attention.head.itemText(i)) <= field.width(), i

    panel.step_bar.slider.setValue(0)  # step 0: the final weights' scores say nothing here
    assert panel.snapshot["step"] == 0
    assert all("prev" not in m.title for m in attention.grid.maps)
    assert "shown at that step only" in attention.info.text()
    assert all("prev" not in attention.head.itemText(i) for i in range(attention.head.count()))

    # the slider is the step of the weights too: at step 0 they are the checkpoint kept
    # nearest to it, and the caption of Next token says which
    qtbot.waitUntil(lambda: panel.host.ready and not panel.background.busy, timeout=WAIT_MS)
    nearest = panel.shown.now.weights_step()
    assert panel.host.step == nearest != 6
    assert panel.view_caption("next_token").endswith("(the nearest kept to step 0)")

    # Look on your own text: read by the weights of the step shown (back at step 6)
    panel.step_bar.slider.setValue(panel.step_bar.steps.index(6))
    qtbot.waitUntil(lambda: panel.host.ready and panel.host.step == 6
                    and not panel.background.busy, timeout=WAIT_MS)
    attention.text.setText("hello>")
    attention.look.click()
    qtbot.waitUntil(lambda: bool(panel.snapshot.get("custom")), timeout=WAIT_MS)
    assert panel.snapshot["step"] == 6 and panel.step_bar.shown_step() == 6
    record = record_of(panel, run)
    assert panel.step_bar.caption.text() == f"{record.label} · step 6 of 6 · your text, read now"
    assert panel.snapshot["text"] == "hello>"
    weights = np.asarray(panel.snapshot["attention"][layer]["weights"])
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    # the weights that read your text are the ones the scores measured: they show again
    assert [m.title for m in attention.grid.maps] == titles
    assert panel.setup.probe_text.text() == attention.text.text() == "hello>"
    cut = previewed_by(RunFolder(run.run_dir).tokenizer())
    qtbot.waitUntil(lambda: previewed(panel) == cut("hello>"), timeout=WAIT_MS)
    panel.step_bar.slider.setValue(0)  # a stored look: both boxes name the text it read
    stored = panel.snapshot["text"]
    assert stored != "hello>"
    assert panel.setup.probe_text.text() == attention.text.text() == stored
    # and Run setup's token preview cuts that text, not the one it showed before
    qtbot.waitUntil(lambda: previewed(panel) == cut(stored), timeout=WAIT_MS)
