"""Autosave: while the document has unsaved changes, a timer writes it to ``autosave.json`` in
the app data directory; a clean exit deletes that file and stamps ``clean-exit``. What the files
hold and when the work is offered back is gui/recovery.py's rule.
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from .recovery import AUTOSAVE_NAME, CLEAN_EXIT_NAME, autosave_text, clean_exit_text
from .session import EditorSession

DEFAULT_INTERVAL_MS = 30_000


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
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(autosave_text(self.session.root, self.session.file_path, time.time()),
                       encoding="utf-8")
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
        (self.directory / CLEAN_EXIT_NAME).write_text(clean_exit_text(time.time()), encoding="utf-8")
