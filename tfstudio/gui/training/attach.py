"""Dock the training panel into the editor's main window.

``attach(window)`` adds a "Training" dock (bottom, beside the problems list), a Train menu
(Train, Pause/Resume, Stop, show the panel) and a Train button on the main toolbar; it feeds the
panel the editor's graph, colours the canvas's blocks with the telemetry the panel picks, and
refuses graph edits while a run trains (moving blocks stays allowed). Closing the app stops a
run between two steps, so its weights are saved.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QToolBar

from .panel import TrainingPanel


def attach(window) -> TrainingPanel:
    panel = TrainingPanel(lambda: window.session.root, window.data_dir, window,
                          scene_source=lambda: window.scene,
                          report_error=window.show_error, report_message=window.show_message)
    dock = QDockWidget("Training", window)
    dock.setObjectName("training")
    dock.setWidget(panel)
    dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                     | QDockWidget.DockWidgetClosable)
    window.addDockWidget(Qt.BottomDockWidgetArea, dock)
    problems = getattr(window, "problems_dock", None)
    if problems is not None:
        window.tabifyDockWidget(problems, dock)
    window.resizeDocks([dock], [max(380, window.height() * 45 // 100)], Qt.Vertical)
    dock.raise_()

    def show_panel():
        dock.show()
        dock.raise_()

    def train():
        show_panel()
        panel.train()

    def action(text: str, slot, shortcut: str | None = None, tip: str = "") -> QAction:
        a = QAction(text, window)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        a.setStatusTip(tip)
        a.triggered.connect(lambda _=False: slot())
        window.addAction(a)
        return a

    train_action = action("&Train", train, "Ctrl+Return",
                          "train the graph on the canvas with the run setup's settings")
    pause_action = action("&Pause / Resume", panel.toggle_pause, "Ctrl+Shift+P",
                          "pause between two steps, or continue")
    stop_action = action("&Stop", panel.stop, None, "end the run; its weights are saved")
    show_action = action("Show the training &panel", show_panel, None,
                         "setup, curves, attention, positions, next token, experts, runs")
    menu = window.menuBar().addMenu("&Train")
    for a in (train_action, pause_action, stop_action, None, show_action):
        menu.addSeparator() if a is None else menu.addAction(a)
    toolbar = window.findChild(QToolBar, "main_toolbar")
    if toolbar is not None:
        toolbar.addSeparator()
        toolbar.addAction(train_action)

    def update_actions(*_):
        state = panel.run.state if panel.run is not None else "idle"
        train_action.setEnabled(state not in ("running", "paused", "stopping"))
        pause_action.setEnabled(state in ("running", "paused"))
        pause_action.setText("&Resume" if state == "paused" else "&Pause")
        stop_action.setEnabled(state in ("running", "paused"))

    panel.run_started.connect(lambda run: run.state_changed.connect(update_actions))
    panel.run_started.connect(update_actions)
    panel.run_ended.connect(update_actions)
    update_actions()

    session = window.session
    if hasattr(session, "set_edit_guard"):
        session.set_edit_guard(panel.edit_refusal)
    if hasattr(session, "analysis_ready"):
        session.analysis_ready.connect(lambda _analysis: panel.refresh_graph())
    scene = window.scene
    if hasattr(scene, "path_changed"):
        scene.path_changed.connect(lambda _path: panel.refresh_telemetry())
    QApplication.instance().aboutToQuit.connect(panel.shutdown)

    window.training_panel = panel
    window.training_dock = dock
    window.train_actions = (train_action, pause_action, stop_action, show_action)
    return panel
