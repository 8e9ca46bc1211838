"""The main window's Help menu and the course it opens: keyboard shortcuts made from the
actions, About, and the lessons (show the list, put a lesson's graph on the canvas, train its
variants in Compare). A mixin of :class:`~tfstudio.gui.main_window.MainWindow`, as the File and
Edit menus are."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from .. import __version__


class HelpMenu:
    """Needs ``actions``, ``lessons_dock``, ``scene``, ``maybe_save``, ``load_graph`` and
    ``show_error`` from the window."""

    def _build_help_menu(self, bar) -> None:
        a = self.actions
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(a.shortcuts)
        help_menu.addAction("The &course (lessons)", self.show_lessons)
        help_menu.addAction(a.about)

    def show_lessons(self) -> None:
        self.lessons_dock.show()
        self.lessons_dock.raise_()

    def open_lesson(self, graph, changed: list) -> None:
        """A lesson's base graph on the canvas, the blocks its variants change selected."""
        if self.maybe_save():
            self.load_graph(graph)
            self.scene.select_nodes(changed)

    def train_lesson(self, name: str) -> None:
        """Lesson ``name``'s variants trained side by side in the Train workspace's Compare."""
        training = getattr(self, "training", None)
        if training is None:
            self.show_error(f"This window has no Train workspace; run tfstudio lesson {name}.")
            return
        from .training.workspace import TRAIN
        panel = training.panel
        compare = next(panel.tabs.widget(i) for i in range(panel.tabs.count())
                       if panel.tabs.tabText(i) == "Compare")
        training.workspace.set_mode(TRAIN)
        panel.tabs.setCurrentWidget(compare)
        compare.run_lesson(name)

    def show_shortcuts(self) -> QMessageBox:
        """Help > Keyboard shortcuts: a table made from the actions (never out of date), the
        window's workspaces (Ctrl+1, Ctrl+2) included."""
        from html import escape
        from .actions import shortcut_rows
        rows = "".join(f"<tr><td>{escape(name)}</td><td>&nbsp;&nbsp;<b>{escape(keys)}</b>"
                       "</td></tr>" for name, keys in shortcut_rows(self.actions, self))
        box = QMessageBox(QMessageBox.NoIcon, "Keyboard shortcuts",
                          f"<table>{rows}</table><p>On the canvas: Tab or double-click adds a "
                          "block; Space + drag or the middle button pans; the wheel zooms.</p>",
                          QMessageBox.Ok, self)
        box.setModal(False)
        box.open()
        self._shortcuts_box = box
        return box

    def about(self) -> None:
        QMessageBox.about(
            self, "About tfstudio",
            f"<b>tfstudio {__version__}</b><p>Build transformers on a node graph, compile "
            "them to PyTorch, train them and look inside.</p><p>Tab or double-click: add a "
            "block · drag port to port: wire · double-click a group: enter it · Ctrl+G: "
            "group · F: fit view · middle-drag or Space-drag: pan · wheel: zoom</p>")
