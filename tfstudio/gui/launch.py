"""Open the editor, or render it to a PNG and exit (``tfstudio gui``; options in ``cli/gui.py``).

Only Qt and the graph layer are imported on the way to the first paint; torch waits until a
model is compiled (the generated-code view) or trained.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def run(args) -> int:
    started = time.time()
    if args.screenshot:
        import os
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QObject, QTimer

    from .errors import install_excepthook

    app, data_dir = _application(args)
    window = _window(args, data_dir)
    if window is None:
        return 2
    previous_hook = install_excepthook(lambda: window, data_dir / "errors.log")
    refusal = _open_what_was_asked(args, window)
    if refusal is not None:
        print(f"tfstudio: {refusal}", file=sys.stderr)
        return 2
    if args.screenshot:
        window.resize(*args.size)  # (width, height), parsed by the command
    else:
        window.restore_layout()
    window.show()
    QTimer.singleShot(0, window.view.fit_to_view)

    if args.startup_report:
        _report_first_paint(window, started, QEvent, QObject)
    elif args.screenshot and getattr(args, "train", None):
        QTimer.singleShot(0, lambda: _train_then_screenshot(window, args))
    elif args.screenshot:
        QTimer.singleShot(150, lambda: _screenshot(window, args.screenshot))
    else:
        QTimer.singleShot(0, window.offer_recovery)
    code = app.exec()
    sys.excepthook = previous_hook
    return code


def _application(args):
    """The QApplication, themed as asked (else as last time); and the data folder."""
    from PySide6.QtCore import QCoreApplication, QSettings, Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from . import theme
    from .main_window import default_data_dir

    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    QCoreApplication.setOrganizationName("tfstudio")
    QCoreApplication.setApplicationName("tfstudio")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    data_dir = default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    saved_theme = QSettings(str(data_dir / "settings.ini"), QSettings.IniFormat).value("theme")
    theme.apply_theme(app, args.theme or (saved_theme if saved_theme in theme.THEMES
                                          else "light"))
    return app, data_dir


def _window(args, data_dir):
    """The main window on the chosen preset, with the training workspace attached."""
    from ..graph import GraphFileError
    from ..presets import DEFAULT_PRESET, load_preset
    from .main_window import MainWindow
    from .session import EditorSession
    from .training import attach_training

    preset = args.preset or DEFAULT_PRESET
    try:
        graph = load_preset(preset)
    except GraphFileError as exc:
        print(f"tfstudio: {exc}", file=sys.stderr)
        return None
    window = MainWindow(EditorSession(graph), data_dir=data_dir)
    attach_training(window)
    if args.screenshot:
        window.training.workspace.transient()
    window.session.root.meta.setdefault("name", preset)
    return window


def _open_what_was_asked(args, window) -> str | None:
    """Open the file and the group asked for; the reason when a screenshot cannot be made."""
    from .editor_state import open_group_refusal

    path = args.file or args.file_option
    if path and not window.open_file(path) and args.screenshot:
        return window.last_error  # a picture of an error dialog helps nobody: fail loudly
    if args.open_group:
        refusal = open_group_refusal(window.session.root, args.open_group)
        if refusal is not None:
            return refusal
        window.scene.set_path((args.open_group,))
    return None


def _train_then_screenshot(window, args) -> None:
    """``--train STEPS --tab TAB``: a short real run in the Train workspace, then the picture
    with that tab shown (once the run has ended and its weights are loaded)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    training = window.training
    panel = training.panel
    panel.setup.steps.setValue(args.train)
    panel.setup.probe_every.setValue(max(1, min(panel.setup.probe_every.value(),
                                                args.train // 4 or 1)))
    window.session.document.mark_clean()
    training.train()
    if panel.run is None:
        print(f"tfstudio: --train: {panel.error.text() or 'the run did not start'}",
              file=sys.stderr)
        QApplication.exit(2)
        return
    tab = _tab_named(panel, args.tab or "curves")
    waited = {"ms": 0, "reopen": tab is panel.runs}  # the runs view: as after reopening one

    def check():
        run = panel.run
        ready = not run.active and (panel.host.ready or waited["ms"] > 20_000
                                    or not run.run_dir.joinpath("checkpoints").exists())
        waited["ms"] += 100
        if ready and waited["reopen"]:
            waited["reopen"] = False
            record = next((r for r in panel.history.records() if r.path == str(run.run_dir)),
                          None)
            if record is not None:
                panel.open_run(record)
                ready = False
        if not ready:
            QTimer.singleShot(100, check)
            return
        panel.tabs.setCurrentWidget(tab)
        QTimer.singleShot(400, when_drawn)

    def when_drawn():  # the tab's own work (Explain's walk, a replay) ends before the picture
        waited["ms"] += 100
        if panel.background.busy and waited["ms"] < 60_000:
            QTimer.singleShot(100, when_drawn)
            return
        QTimer.singleShot(200, lambda: _screenshot(window, args.screenshot, fit=False))

    QTimer.singleShot(100, check)


def _tab_named(panel, name: str):
    """The view whose tab reads ``name`` ("next-token" for "Next token")."""
    for index in range(panel.tabs.count()):
        if panel.tabs.tabText(index).lower().replace(" ", "-") == name:
            return panel.tabs.widget(index)
    raise ValueError(f"the Train workspace has no '{name}' view")


def _screenshot(window, path: str, fit: bool = True) -> None:
    from PySide6.QtWidgets import QApplication

    if fit:
        window.view.fit_to_view()
    QApplication.processEvents()
    refusal = _write_picture(window.grab(), Path(path))
    window.session.document.mark_clean()  # nothing to save or recover from a picture
    window.autosave.timer.stop()
    panel = getattr(window, "training_panel", None)
    if panel is not None:
        panel.shutdown()
    if refusal:
        print(f"tfstudio gui: {refusal}", file=sys.stderr)
        QApplication.exit(2)
        return
    print(path)
    QApplication.exit(0)


def _write_picture(pixmap, path: Path) -> str | None:
    """Encode ``pixmap`` in the format ``path``'s suffix names and write it beside ``path``,
    then rename it into place (a full disk leaves the earlier picture whole); the one line
    saying why it could not be written, or None."""
    import os

    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    fmt = path.suffix.lstrip(".").upper() or "PNG"
    if not pixmap.save(buffer, fmt):
        return (f"cannot write a {path.suffix or 'suffix-less'} picture ({path}); name it "
                ".png or .jpg")
    if path.exists() and not path.is_file():  # a device or a folder is never renamed over
        return f"--screenshot {path} is not a file; name a .png or .jpg file to write"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(bytes(data))
        os.replace(tmp, path)
    except OSError as exc:
        from ..runs.disk import disk_line, remove_quietly
        remove_quietly(tmp)
        kept = f"{path.name} is as it was" if path.exists() else "no picture was written"
        return (disk_line(exc, path.absolute().parent, f"while writing {path.name}", kept,
                          "try again")
                or f"cannot write {path} ({exc.strerror or exc}); choose another path")
    return None


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
