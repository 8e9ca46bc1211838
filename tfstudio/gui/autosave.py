"""Autosave and crash recovery.

While the document has unsaved changes, a timer writes it to ``autosave.json`` in the app data
directory. A clean exit deletes that file and stamps ``clean-exit``; so an autosave found at
start that is newer than the last clean exit means the previous session died with unsaved
work, and the editor offers it back.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from ..graph import Graph, GraphFileError, graph_from_dict, graph_to_dict
from .session import EditorSession

AUTOSAVE_NAME = "autosave.json"
CLEAN_EXIT_NAME = "clean-exit"
DEFAULT_INTERVAL_MS = 30_000


@dataclass
class Recovery:
    graph: Graph
    saved_at: float
    file: Path | None    # the file the work belonged to, if it had one


def _stamp(path: Path) -> float:
    try:
        return float(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return 0.0


def pending_recovery(directory: Path) -> Recovery | None:
    """The autosave left by a session that did not exit cleanly, if there is one."""
    path = Path(directory) / AUTOSAVE_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        saved_at = float(data["saved_at"])
        graph = graph_from_dict(data["graph"], str(path))
    except (OSError, ValueError, KeyError, TypeError, GraphFileError):
        return None  # unreadable: nothing we could offer
    if saved_at <= _stamp(Path(directory) / CLEAN_EXIT_NAME):
        return None
    return Recovery(graph, saved_at, Path(data["file"]) if data.get("file") else None)


class Autosave(QObject):
    def __init__(self, session: EditorSession, directory: Path,
                 interval_ms: int = DEFAULT_INTERVAL_MS, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / AUTOSAVE_NAME
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self.save_now)
        session.state_changed.connect(self._state_changed)

    def start(self) -> None:
        self.timer.start()

    def save_now(self) -> bool:
        """Write the document if it has unsaved changes; True when a file was written."""
        if not self.session.dirty:
            return False
        payload = {"saved_at": time.time(),
                   "file": str(self.session.file_path) if self.session.file_path else None,
                   "graph": graph_to_dict(self.session.root)}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        tmp.replace(self.path)
        return True

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)

    def _state_changed(self) -> None:
        if not self.session.dirty:  # saved (or back to the saved state): nothing to recover
            self.discard()

    def mark_clean_exit(self) -> None:
        """Called when the window closes normally: no recovery next time."""
        self.timer.stop()
        self.discard()
        (self.directory / CLEAN_EXIT_NAME).write_text(f"{time.time():.6f}", encoding="utf-8")
