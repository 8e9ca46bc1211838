"""Open the editor, or render it to a PNG and exit (``tfstudio gui``; options in ``cli/gui.py``).

Only Qt and the graph layer are imported on the way to the first paint; torch waits until a
model is compiled (the generated-code view) or trained.
"""
from __future__ import annotations

import json
import sys
import time


def run(args) -> int:
    started = time.time()
    if args.screenshot:
        import os
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from ..graph import GraphError, GraphFileError
    from ..presets import DEFAULT_PRESET, load_preset
    from . import theme
    from .errors import install_excepthook
    from .main_window import MainWindow, default_data_dir
    from .session import EditorSession
    from .training import attach as attach_training

    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    QCoreApplication.setOrganizationName("tfstudio")
    QCoreApplication.setApplicationName("tfstudio")
    app = QApplication.instance() or QApplication(sys.argv[:1])

    data_dir = default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    from PySide6.QtCore import QSettings
    saved_theme = QSettings(str(data_dir / "settings.ini"), QSettings.IniFormat).value("theme")
    theme.apply_theme(app, args.theme or (saved_theme if saved_theme in theme.THEMES
                                          else "light"))

    preset = args.preset or DEFAULT_PRESET
    try:
        graph = load_preset(preset)
    except GraphFileError as exc:
        print(f"tfstudio: {exc}", file=sys.stderr)
        return 2
    window = MainWindow(EditorSession(graph), data_dir=data_dir)
    attach_training(window)
    window.session.root.meta.setdefault("name", preset)
    previous_hook = install_excepthook(lambda: window, data_dir / "errors.log")

    path = args.file or args.file_option
    if path and not window.open_file(path):
        if args.screenshot:  # a picture of an error dialog helps nobody: fail loudly
            print(f"tfstudio: {window.last_error}", file=sys.stderr)
            return 2
    if args.open_group:
        try:
            window.scene.set_path((args.open_group,))
        except GraphError:
            groups = [n.id for n in window.session.root if n.is_group]
            print(f"tfstudio: --open-group: no group '{args.open_group}' at the top level; "
                  f"groups here: {', '.join(groups) or 'none'}", file=sys.stderr)
            return 2

    if args.screenshot:
        window.resize(*args.size)  # (width, height), parsed by the command
    else:
        window.restore_layout()
    window.show()
    QTimer.singleShot(0, window.view.fit_to_view)

    if args.startup_report:
        _report_first_paint(window, started, QEvent, QObject)
    elif args.screenshot:
        QTimer.singleShot(150, lambda: _screenshot(window, args.screenshot))
    else:
        QTimer.singleShot(0, window.offer_recovery)
    code = app.exec()
    sys.excepthook = previous_hook
    return code


def _screenshot(window, path: str) -> None:
    from PySide6.QtWidgets import QApplication

    window.view.fit_to_view()
    QApplication.processEvents()
    ok = window.grab().save(path)
    window.session.document.mark_clean()  # nothing to save or recover from a picture
    window.autosave.timer.stop()
    if not ok:
        print(f"tfstudio: could not write {path}", file=sys.stderr)
        QApplication.exit(1)
        return
    print(path)
    QApplication.exit(0)


def _report_first_paint(window, started: float, QEvent, QObject) -> None:
    """For the start-up benchmark: print when the canvas first painted, then quit."""
    from PySide6.QtWidgets import QApplication

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Paint and not getattr(self, "seen", False):
                self.seen = True
                session = window.session
                report = {"first_paint": time.time(), "run_started": started,
                          "torch_imported": "torch" in sys.modules,
                          "file": str(session.file_path) if session.file_path else None,
                          "nodes": sorted(session.root.nodes)}
                print(json.dumps(report), flush=True)
                QApplication.instance().quit()
            return False

    window._first_paint = FirstPaint(window)
    window.view.viewport().installEventFilter(window._first_paint)
