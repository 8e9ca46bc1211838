"""Crash recovery's rule, without a window (gui/recovery.py): an autosave newer than the last
clean exit is offered back, with the file the work belonged to; anything else is not."""
from pathlib import Path

from tfstudio.graph import graph_to_dict
from tfstudio.gui.recovery import (AUTOSAVE_NAME, CLEAN_EXIT_NAME, autosave_text,
                                   clean_exit_text, pending_recovery)
from tfstudio.presets import load_preset


def _autosave(folder: Path, graph, file, at: float) -> None:
    (folder / AUTOSAVE_NAME).write_text(autosave_text(graph, file, at), encoding="utf-8")


def test_an_autosave_newer_than_the_last_clean_exit_is_offered_back_with_its_file(tmp_path):
    graph = load_preset("tiny-gpt")
    graph.node("layers").subgraph.node("attn").params["heads"] = 2
    _autosave(tmp_path, graph, tmp_path / "mine.json", at=200.0)
    (tmp_path / CLEAN_EXIT_NAME).write_text(clean_exit_text(100.0), encoding="utf-8")
    offered = pending_recovery(tmp_path)
    assert offered is not None and offered.saved_at == 200.0
    assert offered.file == tmp_path / "mine.json"
    assert graph_to_dict(offered.graph) == graph_to_dict(graph)      # the work, as it was
    (tmp_path / CLEAN_EXIT_NAME).write_text(clean_exit_text(300.0), encoding="utf-8")
    assert pending_recovery(tmp_path) is None                        # exited cleanly since


def test_an_autosave_of_work_never_saved_is_offered_without_a_file(tmp_path):
    _autosave(tmp_path, load_preset("tiny-gpt"), None, at=5.0)
    offered = pending_recovery(tmp_path)                             # no clean exit ever
    assert offered is not None and offered.file is None


def test_an_autosave_from_the_same_moment_as_the_clean_exit_is_not_offered(tmp_path):
    _autosave(tmp_path, load_preset("tiny-gpt"), None, at=100.0)
    (tmp_path / CLEAN_EXIT_NAME).write_text(clean_exit_text(100.0), encoding="utf-8")
    assert pending_recovery(tmp_path) is None
    (tmp_path / CLEAN_EXIT_NAME).write_text("not a time", encoding="utf-8")
    assert pending_recovery(tmp_path) is not None                    # an unreadable stamp: none


def test_no_autosave_or_an_unreadable_one_offers_nothing(tmp_path):
    assert pending_recovery(tmp_path) is None
    (tmp_path / AUTOSAVE_NAME).write_text("{ half a file", encoding="utf-8")
    assert pending_recovery(tmp_path) is None
    (tmp_path / AUTOSAVE_NAME).write_text('{"saved_at": 1, "graph": {"nodes": 3}}',
                                          encoding="utf-8")
    assert pending_recovery(tmp_path) is None
