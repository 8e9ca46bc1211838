"""The open document for the widgets: :class:`session_model.Session`, its rules and state,
with its listeners re-emitted as Qt signals and its deferred work (the coalesced report, so a
paste of twenty nodes re-validates once, right after the paste) run on zero-interval timers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from ..graph import Edit, Graph
from .graph_report import GraphReport
from .session_model import Session


def _of_model(name: str, doc: str) -> property:
    """The model's attribute ``name``, read-only through the adapter."""
    return property(lambda self: getattr(self.model, name), doc=doc)


class EditorSession(QObject):
    report_ready = Signal(object)   # GraphReport
    message = Signal(str)             # feedback for the status bar (a refused edit says why)
    state_changed = Signal()          # file name or unsaved state changed
    history_changed = Signal()        # after an edit, undo or redo has fully happened

    def __init__(self, graph: Graph | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.model = Session(graph, later=self._timer)
        self.model.report_ready.connect(self.report_ready.emit)
        self.model.message.connect(self.message.emit)
        self.model.state_changed.connect(self.state_changed.emit)
        self.model.history_changed.connect(self.history_changed.emit)

    def _timer(self, work: Callable[[], Any]) -> QTimer:
        timer = QTimer(self, singleShot=True, interval=0)
        timer.timeout.connect(work)
        return timer

    # ------------------------------------------------------------------ the model's state
    document = _of_model("document", "the graph and its undo history (Document)")
    root = _of_model("root", "the top-level Graph")
    report = _of_model("report", "the latest GraphReport")
    file_path = _of_model("file_path", "the file the graph was opened from or saved to, if any")
    dirty = _of_model("dirty", "whether there are unsaved changes")
    edited = _of_model("edited", "whether the model differs from the one opened")
    display_name = _of_model("display_name", "the file's name, else the graph's, else untitled")

    # ------------------------------------------------------------------ its rules
    def execute(self, command: Edit) -> bool:
        return self.model.execute(command)

    def try_execute(self, command: Edit) -> str | None:
        return self.model.try_execute(command)

    def set_edit_guard(self, guard: Callable[[Edit | None], str | None] | None) -> None:
        self.model.set_edit_guard(guard)

    def undo(self) -> bool:
        return self.model.undo()

    def redo(self) -> bool:
        return self.model.redo()

    def refresh_report(self) -> GraphReport:
        """Re-validate now (the timer does this; tests may call it directly)."""
        return self.model.refresh_report()

    def replace(self, graph: Graph, file_path: Path | None = None, dirty: bool = False) -> None:
        self.model.replace(graph, file_path, dirty)

    def open(self, path: str | Path) -> None:
        self.model.open(path)

    def save(self, path: str | Path | None = None) -> Path:
        return self.model.save(path)
