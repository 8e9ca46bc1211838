"""The File menu's commands: new, open, save, recent files, export, the unsaved-changes
prompt and crash recovery.

A mixin of :class:`~tfstudio.gui.main_window.MainWindow`. The ``ask_*`` methods are the only
places that open a modal dialog, so tests (and scripts) replace them with plain answers.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..graph import Graph, GraphFileError
from .recovery import Recovery, pending_recovery
from .dialogs import PresetGallery
from .export import export_png, export_svg
from .file_lines import (recent_paths, recovery_question, save_failure, save_start,
                         unsaved_question, with_recent, with_suffix, without_gone)

GRAPH_FILTER = "tfstudio graphs (*.json);;All files (*)"


class FileMenu:
    def ask_unsaved(self) -> str:
        """"save", "discard" or "cancel" (tests replace this with a stub)."""
        answer = QMessageBox.question(
            self, "Unsaved changes",
            unsaved_question(self.session.display_name),
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(answer, "cancel")

    def ask_open_path(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self, "Open graph", self._last_dir(), GRAPH_FILTER)
        return path

    def ask_save_path(self, caption: str = "Save graph as", file_filter: str = GRAPH_FILTER,
                      suffix: str = ".json") -> str:
        start = save_start(self._last_dir(), self.session.display_name, suffix)
        path, _ = QFileDialog.getSaveFileName(self, caption, start, file_filter)
        return with_suffix(path, suffix)

    def ask_recover(self, recovery: Recovery) -> bool:
        answer = QMessageBox.question(
            self, "Recover unsaved work?", recovery_question(recovery.file),
            QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return answer == QMessageBox.Yes

    def _last_dir(self) -> str:
        return str(self.settings.value("last_dir", str(Path.home())))

    def maybe_save(self) -> bool:
        """True when it is fine to throw the current graph away."""
        if not self.session.dirty:
            return True
        answer = self.ask_unsaved()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def new_empty(self) -> None:
        if self.maybe_save():
            self.session.replace(Graph(meta={"name": "untitled"}))
            self.scene.set_path(())

    def new_from_preset(self) -> None:
        if not self.maybe_save():
            return
        gallery = PresetGallery(self)
        if gallery.exec() and gallery.graph() is not None:
            self.load_graph(gallery.graph().clone())

    def load_graph(self, graph: Graph, file_path: Path | None = None) -> None:
        self.session.replace(graph, file_path)
        self.scene.set_path(())
        QTimer.singleShot(0, self.view.fit_to_view)

    def open_dialog(self) -> None:
        if self.maybe_save():
            path = self.ask_open_path()
            if path:
                self.open_file(path)

    def open_file(self, path: str | Path) -> bool:
        """Open a graph file; a malformed one shows the reason and leaves the editor as it was."""
        try:
            self.session.open(path)
        except GraphFileError as exc:
            self.show_error(str(exc), "Cannot open the graph")
            return False
        self.scene.set_path(())
        self._remember(Path(path))
        QTimer.singleShot(0, self.view.fit_to_view)
        self.show_message(f"Opened {path}")
        return True

    def save(self) -> bool:
        if self.session.file_path is None:
            return self.save_as()
        return self._save_to(self.session.file_path)

    def save_as(self) -> bool:
        path = self.ask_save_path()
        return self._save_to(Path(path)) if path else False

    def _save_to(self, path: Path) -> bool:
        try:
            self.session.save(path)
        except OSError as exc:
            self.show_error(save_failure(exc, path), "Save failed")
            return False
        self._remember(path)
        self.show_message(f"Saved {path}")
        return True

    def _remember(self, path: Path) -> None:
        self.settings.setValue("last_dir", str(Path(path).resolve().parent))
        self.settings.setValue("recent", with_recent(self.recent_files(), path))
        self._rebuild_recent_menu()

    def recent_files(self) -> list[str]:
        return recent_paths(self.settings.value("recent", []))

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for path in files:
            action = self.recent_menu.addAction(Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self._open_recent(p))
        self.recent_menu.setEnabled(bool(files))

    def _open_recent(self, path: str) -> None:
        if not Path(path).exists():
            recent, line = without_gone(self.recent_files(), path)
            self.settings.setValue("recent", recent)
            self._rebuild_recent_menu()
            self.show_error(line)
            return
        if self.maybe_save():
            self.open_file(path)

    def export_canvas(self, fmt: str, path: str | None = None) -> Path | None:
        if path is None:
            caption = f"Export canvas as {fmt.upper()}"
            path = self.ask_save_path(caption, f"{fmt.upper()} image (*.{fmt})", f".{fmt}")
            if not path:
                return None
        try:
            out = (export_png if fmt == "png" else export_svg)(self.scene, path)
        except OSError as exc:
            self.show_error(str(exc), "Export failed")
            return None
        self.show_message(f"Exported {out}")
        return out

    def offer_recovery(self) -> bool:
        """Offer the autosave of a session that crashed; True when it was restored."""
        recovery = pending_recovery(self.data_dir)
        if recovery is None:
            return False
        if not self.ask_recover(recovery):
            self.autosave.discard()
            return False
        self.session.replace(recovery.graph, recovery.file, dirty=True)
        self.scene.set_path(())
        QTimer.singleShot(0, self.view.fit_to_view)
        self.show_message("Recovered your unsaved work; save it to keep it")
        return True
