"""The open document's rules without Qt (gui.session_model.Session): edits and their refusals,
the edit guard, undo and redo, dirty and edited, the name shown, new/open/save, and the graph
report coalesced until flushed. gui.session.EditorSession shows them as Qt signals; the windows'
tests (test_files, training/test_window) check that adapter."""
from __future__ import annotations

import json

import pytest

from tfstudio.graph import GraphError, MoveNodes, SetParam, load_graph_file
from tfstudio.gui.session_model import Session
from tfstudio.presets import load_preset

HEADS = ("layers",), "attn", "heads"


def heads(session: Session) -> int:
    return session.root.node("layers").subgraph.node("attn").param("heads")


def heard(session: Session) -> list[tuple]:
    """Every event the session tells, in order, a report by its error count."""
    events: list[tuple] = []
    session.report_ready.connect(lambda report: events.append(("report", report.errors)))
    session.message.connect(lambda text: events.append(("message", text)))
    session.state_changed.connect(lambda: events.append(("state",)))
    session.history_changed.connect(lambda: events.append(("history",)))
    return events


def test_an_edit_says_its_name_and_a_refused_one_says_why_and_changes_nothing():
    s = Session(load_preset("tiny-gpt"))
    events = heard(s)
    assert s.execute(SetParam(*HEADS, 2))
    assert heads(s) == 2
    assert events == [("history",), ("state",), ("message", "Change parameter")]
    events.clear()
    assert not s.execute(SetParam(*HEADS, -1))
    assert heads(s) == 2
    assert events == [("history",), ("message", "'heads' must be at least 1; got -1")]
    assert s.try_execute(SetParam(*HEADS, 0)) == "'heads' must be at least 1; got 0"
    assert s.try_execute(SetParam(*HEADS, 1)) is None and heads(s) == 1


def test_the_guard_refuses_edits_undo_and_redo_with_its_reason():
    s = Session(load_preset("tiny-gpt"))
    assert s.execute(SetParam(*HEADS, 2))
    asked = []

    def guard(command):
        asked.append(command)
        return None if isinstance(command, MoveNodes) else "Stop training to edit the model"

    s.set_edit_guard(guard)
    events = heard(s)
    assert not s.execute(SetParam(*HEADS, 1))
    assert heads(s) == 2
    assert events == [("message", "Stop training to edit the model")]   # no history moved
    assert s.execute(MoveNodes((), {"embed": (300.0, 40.0)}))          # moving is fine
    events.clear()
    assert not s.undo() and not s.redo()
    assert events == [("message", "Stop training to edit the model")] * 2
    assert asked[-2:] == [None, None] and heads(s) == 2
    s.set_edit_guard(None)
    assert s.undo() and s.undo() and heads(s) == 4


def test_undo_and_redo_name_the_step_or_say_there_is_none():
    s = Session(load_preset("tiny-gpt"))
    events = heard(s)
    assert not s.undo()
    assert events == [("history",), ("message", "Nothing to undo")]
    s.execute(SetParam(*HEADS, 2))
    events.clear()
    assert s.undo() and heads(s) == 4
    assert events == [("history",), ("state",), ("message", "Undid: Change parameter")]
    events.clear()
    assert s.redo() and heads(s) == 2
    assert events == [("history",), ("state",), ("message", "Redid: Change parameter")]
    events.clear()
    assert not s.redo()
    assert events == [("history",), ("message", "Nothing to redo")]


def test_dirty_and_edited_follow_the_edits_back_to_the_loaded_graph():
    s = Session(load_preset("tiny-gpt"))
    assert not s.dirty and not s.edited
    s.execute(MoveNodes((), {"embed": (300.0, 40.0)}))
    assert s.dirty and not s.edited                     # layout aside, the same model
    s.execute(SetParam(*HEADS, 2))
    assert s.dirty and s.edited
    s.undo()
    assert s.dirty and not s.edited
    s.undo()
    assert not s.dirty and not s.edited
    events = heard(s)
    s.redo()
    assert s.dirty and events[:2] == [("history",), ("state",)]
    events.clear()
    s.execute(SetParam(*HEADS, 2))                      # still dirty: no state news
    assert events == [("history",), ("message", "Change parameter")]


def test_the_name_shown_is_the_file_else_the_graph_else_untitled(tmp_path):
    assert Session().display_name == "untitled"
    s = Session(load_preset("tiny-gpt"))
    assert s.display_name == "tiny-gpt" and s.file_path is None
    s.save(tmp_path / "my model.json")
    assert s.display_name == "my model.json"


def test_save_needs_a_file_and_marks_the_graph_clean(tmp_path):
    s = Session(load_preset("tiny-gpt"))
    with pytest.raises(GraphError, match="no file yet; use Save As"):
        s.save()
    s.execute(SetParam(*HEADS, 2))
    events = heard(s)
    target = s.save(tmp_path / "mine.json")
    assert target == tmp_path / "mine.json" and s.file_path == target
    assert not s.dirty and events == [("state",)]
    saved = json.loads(target.read_text())
    assert saved["meta"]["name"] == "mine" and saved["meta"]["from"] == "tiny-gpt"
    s.execute(SetParam(*HEADS, 1))
    assert s.save() == target and not s.dirty                # Save: the same file
    assert load_graph_file(target).node("layers").subgraph.node("attn").param("heads") == 1


def test_replace_and_open_start_over_with_no_history(tmp_path):
    s = Session(load_preset("tiny-gpt"))
    s.execute(SetParam(*HEADS, 2))
    events = heard(s)
    s.replace(load_preset("tiny-llama"), dirty=True)          # a recovered autosave
    assert events == [("history",), ("state",), ("report", 0)]
    assert s.dirty and not s.edited and s.file_path is None
    assert not s.undo() and s.display_name == "tiny-llama"
    s.save(tmp_path / "llama.json")
    assert not s.dirty
    other = Session()
    other.open(tmp_path / "llama.json")
    assert other.file_path == tmp_path / "llama.json" and other.display_name == "llama.json"
    assert not other.dirty and not other.edited and other.root.meta["name"] == "tiny-llama"


def test_edits_ask_for_one_report_run_once_on_flush():
    """A paste of twenty nodes re-validates once, right after: edits only mark it pending."""
    s = Session(load_preset("tiny-gpt"))
    before = s.report
    events = heard(s)
    for value in (8, 2, 8):
        s.execute(SetParam(*HEADS, value))
    s.undo()                                                  # back to 2 heads: an error
    assert s.report is before and not any(e[0] == "report" for e in events)
    events.clear()
    s.flush()
    assert events == [("report", 1)] and s.report.errors == 1  # the graph as it is now
    s.flush()                                                 # nothing pending: nothing new
    assert events == [("report", 1)]
    s.execute(SetParam(*HEADS, 2))
    assert s.refresh_report() is s.report                     # asked for now: not again later
    events.clear()
    s.flush()
    assert events == []


def test_an_edit_on_the_document_itself_tells_the_history_after_the_report():
    s = Session(load_preset("tiny-gpt"))
    events = heard(s)
    s.document.execute(SetParam(*HEADS, 2))
    assert events == []
    s.flush()
    assert events == [("report", 1), ("history",), ("state",)]   # 2 heads: an error
