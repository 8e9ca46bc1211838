"""A user's name (a graph's, so its runs') read in the Train workspace as the window title
and breadcrumb already read it: one line, elided in the middle, never widening the window."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from tfstudio.gui.training.history import RunRecord

LONG = "x" * 5_000 + "\n" + "y" * 5_000


def _one_line(label) -> bool:
    return label.height() < 2 * label.fontMetrics().height() and "\n" not in label.shown_text()


def test_a_run_of_a_graph_named_with_ten_thousand_characters_reads_as_one_line(
        open_training_window, tmp_path):
    w = open_training_window((1366, 768))
    w.session.root.meta["name"] = LONG
    w.training.show_panel()
    panel = w.training_panel
    record = RunRecord(str(tmp_path / "run"), LONG, "task:reverse", "char",
                       "2026-12-02 09:00:00", status="completed", steps=6)
    panel.runs.set_records([record], {record.path})
    panel.tabs.setCurrentWidget(panel.runs)
    panel.shown.start_run(Path(record.path), record.label, 6)  # the shown state names the run
    QApplication.processEvents()

    row = panel.runs.tree.topLevelItem(0).text(0)
    assert "\n" not in row and len(row) <= 48 + len(" · 09:00:00")
    assert row.startswith("xxx") and "…" in row and row.endswith("y · 09:00:00")
    panel.tabs.setCurrentWidget(panel.attention)  # the step bar shows under the insides' views
    QApplication.processEvents()
    caption = panel.step_bar.caption
    assert caption.text().startswith(row)        # the run is named as in Runs
    assert _one_line(caption)
    assert w.width() <= 1366 and w.minimumSizeHint().width() <= 1366


def test_a_caption_longer_than_its_room_is_elided_not_wrapped(qtbot):
    from tfstudio.gui.elided_label import ElidedLabel
    label = ElidedLabel("tiny-gpt · 14:02:03\n· step 300 of 400 · " + "following " * 50)
    qtbot.addWidget(label)
    label.resize(300, 40)
    label.show()
    shown = label.shown_text()
    assert "\n" not in shown and shown.endswith("…")
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert label.minimumSizeHint().width() < 100
