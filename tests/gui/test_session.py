"""gui.session.EditorSession, the Qt adapter of gui.session_model.Session: the model's events
come out as its Qt signals in the model's order, and the zero-interval timers run the deferred
work once the event loop turns (the rules themselves: test_session_model)."""
from __future__ import annotations

from tfstudio.graph import SetParam
from tfstudio.gui.session import EditorSession
from tfstudio.presets import load_preset

HEADS = ("layers",), "attn", "heads"


def test_the_signals_follow_the_model_and_the_timers_coalesce_the_report(qtbot):
    s = EditorSession(load_preset("tiny-gpt"))
    events: list[tuple] = []
    s.report_ready.connect(lambda report: events.append(("report", report.errors)))
    s.message.connect(lambda text: events.append(("message", text)))
    s.state_changed.connect(lambda: events.append(("state",)))
    s.history_changed.connect(lambda: events.append(("history",)))
    for value in (8, 2):
        assert s.execute(SetParam(*HEADS, value))
    assert events == [("history",), ("state",), ("message", "Change parameter"),
                      ("history",), ("message", "Change parameter")]
    events.clear()
    qtbot.waitUntil(lambda: bool(events))
    qtbot.wait(10)                                            # and nothing more comes
    assert events == [("report", 1)] and s.report is s.model.report
    events.clear()
    s.document.execute(SetParam(*HEADS, 4))                  # on the document itself
    assert events == []
    qtbot.waitUntil(lambda: len(events) >= 2)
    assert events == [("report", 0), ("history",)]           # still dirty: no state news
    assert s.dirty and s.display_name == "tiny-gpt"
