"""The editor never dies from a bug in a slot: uncaught exceptions are logged and shown.

PySide reports an exception raised in a slot through ``sys.excepthook`` and carries on; the
hook installed here writes the traceback to the log (and the app data dir's ``errors.log``)
and shows the message in the window's status bar and a non-blocking dialog. What is logged and
said needs no Qt; the dialog's widgets are imported only when there is a window to show it on.
"""
from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

log = logging.getLogger("tfstudio.gui")


def install_excepthook(window_getter: Callable[[], QWidget | None],
                       log_file: Path | None = None) -> Callable:
    """Route uncaught exceptions to ``report_exception``; returns the previous hook."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            previous(exc_type, exc, tb)
            return
        report_exception(window_getter(), exc_type, exc, tb, log_file)

    sys.excepthook = hook
    return previous


def report_exception(window: QWidget | None, exc_type, exc, tb, log_file: Path | None = None):
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    log.error("uncaught exception in the editor:\n%s", text)
    if log_file is not None:
        try:
            with open(log_file, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError:
            pass
    summary = f"{exc_type.__name__}: {exc}"
    if window is None:
        print(text, file=sys.stderr)
        return
    from PySide6.QtWidgets import QMessageBox

    status = getattr(window, "statusBar", None)
    if callable(status):
        status().showMessage(f"Internal error (the editor carries on): {summary}", 15000)
    box = QMessageBox(QMessageBox.Warning, "Something went wrong",
                      "The editor hit an internal error and carried on. The details are below "
                      "(and in errors.log); check the last edit, and save if in doubt.",
                      QMessageBox.Ok, window)
    box.setInformativeText(summary)
    box.setDetailedText(text)
    box.setModal(False)
    box.open()
    window._last_error_box = box  # keep it alive while it is shown
