"""How the Train workspace names and lists runs, without Qt (gui/training/history.py): a run's
label from its folder's own time stamp, and one name per corpus. (Adding a run folder from disk:
test_shown_state.py.)"""
from __future__ import annotations

from tfstudio.gui.training.history import RunRecord, corpus_name, folder_started


def test_a_runs_label_is_its_graph_and_the_time_its_folder_was_stamped_with():
    assert folder_started("/runs/20261206-043347-tiny-gpt") == "2026-12-06 04:33:47"
    assert folder_started("/runs/20261206-043347") == "2026-12-06 04:33:47"
    assert folder_started("/runs/my-run") == ""                  # named by hand: no time
    assert folder_started("/runs/20261206-0433-tiny-gpt") == ""  # not a whole stamp
    assert folder_started("/runs/20261206-0433470") == ""       # a longer number: not a stamp
    stamped = RunRecord("/runs/20261206-043347-tiny-gpt", "tiny-gpt",
                        started=folder_started("/runs/20261206-043347-tiny-gpt"))
    assert stamped.label == "tiny-gpt · 04:33:47"
    assert RunRecord("/runs/R", "tiny-gpt").label == "tiny-gpt · R"  # its folder's name
    long = RunRecord("/runs/R", "a" * 60, started="2026-12-06 04:33:47").label
    assert long == "a" * 32 + "…" + "a" * 15 + " · 04:33:47"      # elided in its middle


def test_one_corpus_has_one_name_whichever_way_it_was_asked_for():
    assert corpus_name("sample") == corpus_name(" sample ") == "sample:medium"
    assert corpus_name("sample:small") == "sample:small"
    assert corpus_name("task:reverse") == "task:reverse"
