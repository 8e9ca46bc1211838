"""The open document for the widgets: :class:`session_model.Session`, its rules and state,
with its listeners re-emitted as Qt signals and its deferred work (the coalesced report, so a
paste of twenty nodes re-validates once, right after the paste) run on zero-interval timers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from ..graph import Document, Edit, Graph
from .graph_report import GraphReport
from .session_model import Session


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
    @property
    def document(self) -> Document:
        return self.model.document

    @property
    def root(self) -> Graph:
        return self.model.root

    @property
    def report(self) -> GraphReport:
        return self.model.report

    @property
    def file_path(self) -> Path | None:
        return self.model.file_path

    @property
    def dirty(self) -> bool:
        return self.model.dirty

    @property
    def edited(self) -> bool:
        return self.model.edited

    @property
    def display_name(self) -> str:
        return self.model.display_name

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
