"""The main window: canvas in the middle, palette left, inspector and costs right, problems
below; menus, toolbar, status bar, and the wiring between them. The File and Edit commands
live in their own modules (file_menu, edit_menu) as mixins of this window."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QApplication, QDockWidget, QLabel, QMainWindow, QMessageBox,
                               QScrollArea, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from ..graph import GraphError
from ..graph.edit_rules import fix_edit
from ..graph.insert import fits_port
from . import theme
from .actions import create_actions
from .autosave import Autosave
from .breadcrumb import Breadcrumb
from .canvas_gestures import chosen_goes
from .cost_panel import CostPanel
from .dialogs import CodeDialog
from .edit_menu import EditMenu
from .editor_state import (ENTER_REFUSAL, Target, commands, counts_text, default_size,
                           group_to_enter, layer_target, window_title)
from .file_menu import FileMenu
from .help_menu import HelpMenu
from .inspector import Inspector
from .lessons_panel import LessonsPanel
from .palette import Palette
from .problem_lines import PROBLEMS_OPEN_H, no_fix_line, open_height, stays_brief
from .problems import ProblemsPanel
from .scene import GraphScene
from .search_popup import SearchPopup
from .session import EditorSession
from .view import GraphView
from .wire_rules import loose_wire_prompt


def default_data_dir() -> Path:
    """Where autosaves, settings and the error log live (TFSTUDIO_DATA_DIR overrides)."""
    override = os.environ.get("TFSTUDIO_DATA_DIR")
    if override:
        return Path(override)
    location = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation)
    return Path(location or Path.home() / ".tfstudio")


def _default_size() -> tuple[int, int]:
    """editor_state.default_size for the primary screen."""
    screen = QGuiApplication.primaryScreen()
    room = screen.availableGeometry() if screen is not None else None
    return default_size((room.width(), room.height()) if room is not None else None)


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    return area


class MainWindow(FileMenu, EditMenu, HelpMenu, QMainWindow):
    def __init__(self, session: EditorSession | None = None, data_dir: Path | None = None,
                 autosave_interval_ms: int = 30_000):
        super().__init__()
        self.session = session or EditorSession()
        if self.session.parent() is None:
            # deleted with the window: parentless, the session's signals would keep the lambdas
            # they call (which refer to the window's views) and so the whole window alive
            self.session.setParent(self)
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.settings = QSettings(str(self.data_dir / "settings.ini"), QSettings.IniFormat)
        self.last_error = ""
        self.code_dialog: CodeDialog | None = None

        self.scene = GraphScene(self.session, self)
        self.view = GraphView(self.scene)
        self.breadcrumb = Breadcrumb()
        self.palette = Palette()
        self.inspector = Inspector(self.session, self.scene)
        self.problems = ProblemsPanel()
        self.costs = CostPanel(self.session)
        self.search = SearchPopup(self)
        self._search_at = None
        self._loose_wire = None  # the wire a search was opened from (search_for_wire)
        self.autosave = Autosave(self.session, self.data_dir, autosave_interval_ms, self)

        self._build_layout()
        self.actions = create_actions(self)
        self._build_menus()
        self._connect()
        for action, on in ((self.actions.snap, self.scene.snap_to_grid),
                           (self.actions.dark, theme.current().name == "dark")):
            action.blockSignals(True)  # showing the state is not a choice to remember
            action.setChecked(on)
            action.blockSignals(False)
        self._refresh_title()
        self._refresh_breadcrumb()
        self._update_actions()
        self.problems.show_report(self.session.report)
        self._fit_problems_dock()
        self._show_counts(self.session.report)
        self.resize(*_default_size())
        self.autosave.start()

    # ------------------------------------------------------------------ layout
    def _build_layout(self) -> None:
        centre = QWidget()
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.breadcrumb)
        column.addWidget(self.view, 1)
        self.setCentralWidget(centre)

        def dock(title: str, widget: QWidget, area, name: str) -> QDockWidget:
            d = QDockWidget(title, self)
            d.setObjectName(name)
            d.setWidget(widget)
            d.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                          | QDockWidget.DockWidgetClosable)
            self.addDockWidget(area, d)
            return d

        self.palette_dock = dock("Blocks", self.palette, Qt.LeftDockWidgetArea, "palette")
        self.lessons = LessonsPanel()
        self.lessons_dock = dock("Lessons", self.lessons, Qt.LeftDockWidgetArea, "lessons")
        self.tabifyDockWidget(self.palette_dock, self.lessons_dock)
        self.lessons_dock.hide()  # until asked for (Help > The course, View > Lessons)
        right = QTabWidget()
        right.addTab(self.inspector, "Inspector")
        right.addTab(_scrolling(self.costs), "Costs")  # its table never sets the window height
        self.right_tabs = right
        self.inspector_dock = dock("Details", right, Qt.RightDockWidgetArea, "details")
        self.problems_dock = dock("Problems", self.problems, Qt.BottomDockWidgetArea, "problems")
        self.resizeDocks([self.palette_dock, self.inspector_dock], [230, 370], Qt.Horizontal)
        self.resizeDocks([self.problems_dock], [PROBLEMS_OPEN_H], Qt.Vertical)
        self.zoom_label = QLabel()
        self.counts_label = QLabel()
        self.counts_label.setToolTip(
            "Parameters of the graph as drawn. A run resizes the vocabulary (embedding and head "
            "rows) to its tokenizer's, so a run's count can differ; its first message says by "
            "how much.")
        self.statusBar().addPermanentWidget(self.counts_label)
        self.statusBar().addPermanentWidget(self.zoom_label)

    def _build_menus(self) -> None:
        a = self.actions
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for item in (a.new, a.new_preset, a.open):
            file_menu.addAction(item)
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.addSeparator()
        for item in (a.save, a.save_as, None, a.export_png, a.export_svg, None, a.quit):
            file_menu.addSeparator() if item is None else file_menu.addAction(item)
        edit = bar.addMenu("&Edit")
        for item in (a.undo, a.redo, None, a.cut, a.copy, a.paste, a.duplicate, a.delete,
                     a.select_all, None, a.add_block, a.group, a.ungroup, a.enter_group, a.tidy):
            edit.addSeparator() if item is None else edit.addAction(item)
        view = bar.addMenu("&View")
        for item in (a.fit, a.zoom_in, a.zoom_out, a.zoom_reset, None, a.up, None, a.snap,
                     a.dark, None, a.code):
            view.addSeparator() if item is None else view.addAction(item)
        view.addSeparator()
        for d in (self.palette_dock, self.lessons_dock, self.inspector_dock, self.problems_dock):
            view.addAction(d.toggleViewAction())
        self._build_help_menu(bar)

        tools = QToolBar("Main")
        tools.setObjectName("main_toolbar")
        tools.setMovable(False)
        for item in (a.new_preset, a.open, a.save, None, a.undo, a.redo, None, a.add_block,
                     a.group, a.ungroup, a.up, None, a.fit, None, a.code):
            tools.addSeparator() if item is None else tools.addAction(item)
        self.addToolBar(tools)
        self.view.context_actions = [a.add_block, None, a.cut, a.copy, a.paste, a.duplicate,
                                     a.delete, None, a.enter_group, a.group, a.ungroup, None,
                                     a.tidy, a.fit]
        self._rebuild_recent_menu()

    def _connect(self) -> None:
        s = self.session
        self.lessons.opened.connect(self.open_lesson)
        self.lessons.train_requested.connect(self.train_lesson)
        s.message.connect(self.show_message)
        s.state_changed.connect(self._refresh_title)
        s.history_changed.connect(self._refresh_title)  # a reopened run's graph is named
        s.history_changed.connect(self._update_actions)
        s.report_ready.connect(self.problems.show_report)
        s.report_ready.connect(self._fit_problems_dock)
        s.report_ready.connect(self._show_counts)
        s.document.subscribe(self._on_document_event)
        self.scene.message.connect(self.show_message)
        self.scene.selectionChanged.connect(self._update_actions)
        self.scene.path_changed.connect(lambda _: self._refresh_breadcrumb())
        self.scene.path_changed.connect(self._update_actions)
        self.scene.path_changed.connect(lambda _: QTimer.singleShot(0, self.view.fit_to_view))
        self.breadcrumb.navigate.connect(self.scene.set_path)
        self.palette.block_activated.connect(self.add_block_at_centre)
        self.palette.setting_chosen.connect(self.apply_setting)
        self.palette.layer_name = self._layer_target_name
        self.search.chosen.connect(self._search_chosen)
        self.search.setting_chosen.connect(self.apply_setting)
        self.search.layer_name = self._layer_target_name
        self.view.search_requested.connect(self.open_search)
        self.scene.wire_released.connect(self.search_for_wire)
        self.view.zoom_changed.connect(
            lambda z: self.zoom_label.setText(f"zoom {z * 100:.0f}%"))
        self.inspector.enter_group.connect(self.scene.enter_group)
        self.inspector.group_requested.connect(self.group_selection)
        self.problems.activated.connect(self.go_to_node)
        self.problems.fix_requested.connect(self.apply_fix)
        self.problems.list_requested.connect(self._list_problems)
        self.view.refit_allowed = self._builds  # the Train workspace's strip fits itself
        self.costs.node_activated.connect(self.go_to_node)
        QGuiApplication.clipboard().dataChanged.connect(self._update_actions)

    # ------------------------------------------------------------------ feedback
    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 10000)

    def show_error(self, text: str, title: str = "tfstudio") -> None:
        """A non-blocking error dialog (so a script or test is never stuck on it)."""
        self.last_error = text
        self.show_message(text)
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        box.setModal(False)
        box.open()
        self._error_box = box

    def _fit_problems_dock(self, _report=None) -> None:
        """The Problems dock as one line while there is nothing to list; opened to its list
        (PROBLEMS_OPEN_H, or as far as the fitted picture allows) when the first problem
        appears, or kept to one line naming it where the canvas has no height to spare (an
        encoder-decoder on a 1366x768 laptop) until the user asks for the list."""
        panel = self.problems
        was = getattr(self, "_problems_collapsed", None)
        panel.set_brief(stays_brief(panel.has_problems, was, panel.brief,
                                    self._problems_open_height))
        self._problems_collapsed = collapsed = panel.collapsed
        if collapsed:
            line = panel.summary.sizeHint().height() + 12
            panel.setMaximumHeight(line)
        else:
            panel.setMaximumHeight(16777215)  # QWIDGETSIZE_MAX: the user may resize
            if was is not False:
                self.resizeDocks([self.problems_dock], [self._problems_open_height()],
                                 Qt.Vertical)

    def _list_problems(self) -> None:
        """The brief line's "List all": the list at its usual height (the canvas refits)."""
        self.problems.set_brief(False)
        self._problems_collapsed = False
        self.problems.setMaximumHeight(16777215)
        self.resizeDocks([self.problems_dock], [PROBLEMS_OPEN_H], Qt.Vertical)

    def _problems_open_height(self) -> int:
        """problem_lines.open_height for this canvas and dock."""
        fitted = self.view.keeps_fit
        return open_height(fitted, self.problems_dock.height(),
                           self.view.spare_height() if fitted else 0)

    def _show_counts(self, report) -> None:
        self.counts_label.setText(counts_text(report))

    def _refresh_title(self) -> None:
        self.setWindowTitle(window_title(self.session.display_name,
                                         self.session.document.last_edit))
        self.setWindowModified(self.session.dirty)

    def _refresh_breadcrumb(self) -> None:
        self.breadcrumb.show_path(self.session.root, self.scene.path)

    def _on_document_event(self, event) -> None:
        self._update_actions()
        self.view.keep_whole()  # once the edit is drawn: refit if it now runs out of view
        if self.scene.path:  # a renamed group or a new repeat count shows in the breadcrumb
            self._refresh_breadcrumb()

    def _update_actions(self, *_) -> None:
        a = self.actions
        now = commands(self.session.document, self.scene.graph, self.scene.path,
                       self.scene.selected_node_ids(), bool(self.scene.selectedItems()),
                       QGuiApplication.clipboard().text())
        a.undo.setText(now.undo_text)
        a.redo.setText(now.redo_text)
        a.undo.setIconText("Undo")  # the toolbar keeps a steady width; the menu says what
        a.redo.setIconText("Redo")
        for action, on in ((a.undo, now.undo), (a.redo, now.redo), (a.cut, now.on_blocks),
                           (a.copy, now.on_blocks), (a.duplicate, now.on_blocks),
                           (a.group, now.on_blocks), (a.delete, now.delete),
                           (a.ungroup, now.ungroup), (a.paste, now.paste), (a.up, now.up),
                           (a.enter_group, now.enter_group)):
            action.setEnabled(on)

    # ------------------------------------------------------------------ navigation
    def go_up(self) -> None:
        if self.scene.path:
            self.scene.set_path(self.scene.path[:-1])

    def go_to_node(self, path: tuple, node_id) -> None:
        """Open the group holding ``node_id`` and select it (a click in the problems panel)."""
        try:
            if tuple(path) != self.scene.path:
                self.scene.set_path(tuple(path))
        except GraphError as exc:
            self.show_message(str(exc))
            return
        if node_id and node_id in self.scene.node_items:
            self.scene.select_nodes([node_id])
            self.view.center_on_node(node_id)
            self.right_tabs.setCurrentWidget(self.inspector)

    # ------------------------------------------------------------------ adding blocks
    def add_block_at_centre(self, block_type: str) -> str | None:
        centre = self.view.mapToScene(self.view.viewport().rect().center())
        return self.scene.add_block(block_type, centre)

    def open_search(self, scene_pos) -> None:
        self._search_at = scene_pos
        self._loose_wire = None
        global_pos = self.view.viewport().mapToGlobal(self.view.mapFromScene(scene_pos))
        self.search.popup(global_pos)

    def search_for_wire(self, loose) -> None:
        """A wire let go in empty space: search the blocks whose ports fit it; the chosen
        one is added there, wired to it."""
        self._search_at = loose.scene_pos
        self._loose_wire = loose
        global_pos = self.view.viewport().mapToGlobal(self.view.mapFromScene(loose.scene_pos))
        self.search.popup(global_pos, lambda spec: fits_port(spec, loose.kind, loose.from_output),
                          prompt=loose_wire_prompt(loose.kind, loose.from_output))

    def search_at_cursor(self) -> None:
        self.open_search(self.view.cursor_scene_pos())

    def _search_chosen(self, block_type: str) -> None:
        loose, self._loose_wire = self._loose_wire, None
        how, where = chosen_goes(loose, self._search_at, self.view.cursor_scene_pos())
        if how == "wire":
            self.scene.add_connected(block_type, where)
        else:
            self.scene.add_block(block_type, where)
        self.view.setFocus()

    def layer_target(self) -> Target | None:
        """The layer group a layer switch from the search changes (gui.editor_state)."""
        return layer_target(self.session.root, self.scene.graph, self.scene.path,
                            self.scene.selected_node_ids())

    def _layer_target_name(self) -> str | None:
        target = self.layer_target()
        return self.session.document.graph(target[0]).node(target[1]).label if target else None

    def _builds(self) -> bool:
        """Whether the canvas is the Build workspace's (not the Train workspace's strip)."""
        workspace = getattr(getattr(self, "training", None), "workspace", None)
        return getattr(workspace, "mode", "build") == "build"

    def apply_fix(self, diagnostic) -> bool:
        """A problem's Fix button: its one obvious fix as one undoable edit."""
        ruled = fix_edit(self.session.root, diagnostic)
        if ruled is None:
            self.show_message(no_fix_line(diagnostic))
            return False
        done = self.session.execute(ruled.edit)
        if done and ruled.message:
            self.show_message(ruled.message)
        return done

    def apply_setting(self, key: str, value: str) -> bool:
        """Set switch ``key`` to ``value`` (a setting chosen in the search): on the layer
        group of :meth:`layer_target` (none: refused, saying so), or the whole model."""
        return self.inspector.apply_setting(key, value, self.layer_target())

    # ------------------------------------------------------------------ view settings
    def set_snap(self, on: bool) -> None:
        self.scene.snap_to_grid = bool(on)

    def set_dark(self, on: bool) -> None:
        name = "dark" if on else "light"
        theme.apply_theme(QApplication.instance(), name)
        self.settings.setValue("theme", name)
        self.view.viewport().update()
        for item in self.scene.items():  # a block cached as a pixmap is painted again
            item.update()

    # ------------------------------------------------------------------ other
    def show_code(self) -> CodeDialog:
        self.code_dialog = CodeDialog(self.session.root, self)
        self.code_dialog.show()
        return self.code_dialog

    def enter_selected_group(self) -> None:
        group = group_to_enter(self.scene.graph, self.scene.selected_node_ids())
        if group is not None:
            self.scene.enter_group(group)
        else:
            self.show_message(ENTER_REFUSAL)

    def closeEvent(self, event) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self.autosave.mark_clean_exit()
        self.settings.setValue("geometry", self.saveGeometry())
        state = self.saveState()
        training = getattr(self, "training", None)  # the Train workspace, when attached
        if training is not None:
            training.workspace.remember()
            state = training.workspace.state_of("build") or state  # the editor opens in Build
        self.settings.setValue("state", state)
        self.settings.sync()
        if self.code_dialog is not None:
            self.code_dialog.job.wait()
        event.accept()

    def restore_layout(self) -> None:
        geometry = self.settings.value("geometry")
        state = self.settings.value("state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
