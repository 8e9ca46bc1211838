"""Two arrangements of one window, as IDEs switch perspectives: **Build** (palette, canvas,
inspector, problems) and **Train** (the training views get the space; the canvas stays
visible as a compact strip above them, so the telemetry colouring can be seen).

Each mode remembers its own arrangement (``QMainWindow.saveState``), in memory while the app
runs and in the window's settings across sessions, so a dock the user moved in Train mode is
where they left it the next time they switch back.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QDockWidget, QMainWindow, QToolBar, QWidget

from .strip import StripFitter
from .strip_layout import views_height

BUILD, TRAIN = "build", "train"
MODES = (BUILD, TRAIN)
SETTINGS_KEY = "workspace/{mode}"


class Workspace(QObject):
    """The Build | Train switch of one main window. ``editor_docks`` are the docks of the
    Build mode (hidden in Train); ``training_dock`` holds the training panel."""

    mode_changed = Signal(str)

    def __init__(self, window: QMainWindow, training_dock: QDockWidget,
                 editor_docks: list[QDockWidget]):
        super().__init__(window)
        self.window = window
        self.training_dock = training_dock
        self.editor_docks = [d for d in editor_docks if d is not None]
        self.mode = BUILD
        self.persistent = True               # arrangements go to the window's settings
        self._states: dict[str, object] = {m: self._saved(m) for m in MODES}
        self._title_bar = QWidget()          # an empty title bar: no 22 px lost in Train mode
        self.group = QActionGroup(window)
        self.group.setExclusive(True)
        self.actions = {BUILD: self._mode_action("Build", BUILD, "Ctrl+1",
                                                 "arrange the window for building the graph"),
                        TRAIN: self._mode_action("Train", TRAIN, "Ctrl+2",
                                                 "arrange the window for training: the views "
                                                 "get the space, the graph a strip above")}
        self.actions[BUILD].setChecked(True)
        view = getattr(window, "view", None)
        # in Train mode the strip refits its blocks whenever it is resized
        self._fitter = (StripFitter(view, lambda: self.mode == TRAIN)
                        if view is not None and hasattr(view, "set_zoom") else None)

    def _mode_action(self, text: str, mode: str, shortcut: str, tip: str) -> QAction:
        action = QAction(text, self.window, checkable=True)
        action.setShortcut(shortcut)
        action.setStatusTip(tip)
        action.setToolTip(f"{text} workspace ({shortcut}) — {tip}")
        action.setObjectName(f"workspace_{mode}")
        action.triggered.connect(lambda _=False: self.set_mode(mode))
        self.group.addAction(action)
        self.window.addAction(action)
        return action

    # ------------------------------------------------------------------ switching
    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown workspace '{mode}'; choose one of {', '.join(MODES)}")
        self.actions[mode].setChecked(True)
        if mode == self.mode:
            return
        self._states[self.mode] = self.window.saveState()
        self.mode = mode
        self._arrange(mode)
        self.remember()
        self.mode_changed.emit(mode)

    def _arrange(self, mode: str) -> None:
        breadcrumb = getattr(self.window, "breadcrumb", None)
        if breadcrumb is not None:  # the strip shows the top level; its height goes to the views
            breadcrumb.setVisible(mode == BUILD)
        # in Train mode a dock on the left (the course) takes the window's whole height
        # beside the training views: next to the canvas strip alone, its minimum height grew
        # a 1366x768 window to 774 and cut the lesson's claim off
        self.window.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea if mode == TRAIN
                              else Qt.BottomDockWidgetArea)
        state = self._states.get(mode)
        restored = state is not None and self.window.restoreState(state)
        if mode == TRAIN:
            self.training_dock.setTitleBarWidget(self._title_bar)
            if not restored:
                self._default_train()
            elif self._fitter is not None:  # a restored arrangement: its strip fits too
                QTimer.singleShot(0, self._fitter.fit)
        else:
            self.training_dock.setTitleBarWidget(None)
            if not restored:
                self._default_build()

    def _default_train(self) -> None:
        w = self.window
        for dock in self.editor_docks:
            dock.hide()
        dock = self.training_dock
        dock.setFloating(False)
        w.addDockWidget(Qt.BottomDockWidgetArea, dock)
        dock.show()
        dock.raise_()
        self.fit_strip()

    def fit_strip(self) -> None:
        """Give the training views all the height but the canvas strip."""
        w = self.window
        chrome = sum(bar.sizeHint().height() for bar in (w.menuBar(), w.statusBar()))
        chrome += sum(t.sizeHint().height() for t in w.findChildren(QToolBar)
                      if t.isVisible() and w.toolBarArea(t) == Qt.TopToolBarArea)
        w.resizeDocks([self.training_dock], [views_height(w.height(), chrome)], Qt.Vertical)
        if self._fitter is not None:
            QTimer.singleShot(0, self._fitter.fit)  # once the docks have their new sizes

    def _default_build(self) -> None:
        for dock in self.editor_docks:
            dock.show()
        self.training_dock.hide()

    # ------------------------------------------------------------------ memory
    def _saved(self, mode: str):
        settings = getattr(self.window, "settings", None)
        return settings.value(SETTINGS_KEY.format(mode=mode)) if settings is not None else None

    def remember(self) -> None:
        """Write both arrangements to the settings (the current one as it is now)."""
        self._states[self.mode] = self.window.saveState()
        settings = getattr(self.window, "settings", None)
        if settings is None or not self.persistent:
            return
        for mode, state in self._states.items():
            if state is not None:
                settings.setValue(SETTINGS_KEY.format(mode=mode), state)
        settings.sync()

    def transient(self) -> None:
        """Default arrangements, neither read from nor written to the settings: a screenshot
        must not depend on, or change, what this machine's user arranged."""
        self.persistent = False
        self._states = {m: None for m in MODES}

    def forget(self) -> None:
        """Back to the default arrangements (View > Reset workspace)."""
        self._states = {m: None for m in MODES}
        settings = getattr(self.window, "settings", None)
        if settings is not None:
            for mode in MODES:
                settings.remove(SETTINGS_KEY.format(mode=mode))
        self._arrange(self.mode)

    def state_of(self, mode: str):
        """The saved arrangement of ``mode`` (the live one for the current mode)."""
        return self.window.saveState() if mode == self.mode else self._states.get(mode)
