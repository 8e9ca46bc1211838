"""The Edit menu's commands: undo and redo, the clipboard, delete, group and ungroup, tidy.

A mixin of :class:`~tfstudio.gui.main_window.MainWindow`: it works through the window's
session (every edit a command) and scene (the selection), and reports in its status bar.
"""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication

from ..graph import Graph, GraphError, group_edit, tidy_edit, ungroup_edit
from . import clipboard
from .editor_state import GROUPED_LINE, UNGROUP_REFUSAL, copied_line, group_to_ungroup
from .canvas_units import SPREAD, to_graph


class EditMenu:
    def undo(self) -> None:
        self.session.undo()

    def redo(self) -> None:
        self.session.redo()

    def delete(self) -> None:
        self.scene.delete_selected()

    def select_all(self) -> None:
        for item in self.scene.node_items.values():
            item.setSelected(True)

    def copy(self) -> bool:
        ids = self.scene.selected_node_ids()
        try:
            text = clipboard.to_text(self.scene.graph, ids)
        except GraphError as exc:
            self.show_message(str(exc))
            return False
        # plain text (the graph JSON): PySide6 6.12 crashes at exit after setMimeData
        QGuiApplication.clipboard().setText(text)
        self.show_message(copied_line(len(ids)))
        return True

    def cut(self) -> None:
        if self.copy():
            self.scene.delete_selected()

    def paste(self) -> list[str]:
        piece, refusal = clipboard.pasted_piece(QGuiApplication.clipboard().text())
        if piece is None:
            self.show_message(refusal)
            return []
        at = to_graph(self.view.cursor_scene_pos())
        return self._paste_piece(piece, clipboard.offset_to(piece, at))

    def duplicate(self) -> list[str]:
        ids = self.scene.selected_node_ids()
        try:
            piece = clipboard.fragment(self.scene.graph, ids)
        except GraphError as exc:
            self.show_message(str(exc))
            return []
        return self._paste_piece(piece, (40.0 / SPREAD, 40.0 / SPREAD))

    def _paste_piece(self, piece: Graph, offset) -> list[str]:
        command, new_ids = clipboard.paste_command(self.scene.graph, piece, self.scene.path,
                                                   offset)
        if not self.scene.run(command):
            return []
        self.scene.select_nodes(new_ids)
        return new_ids

    def group_selection(self) -> str | None:
        ids = self.scene.selected_node_ids()
        before = set(self.scene.graph.nodes)
        try:
            command = group_edit(self.session.document, self.scene.path, ids)
        except GraphError as exc:
            self.show_message(str(exc))
            return None
        if not self.scene.run(command):
            return None
        new = [n for n in self.scene.graph.nodes if n not in before]
        self.scene.select_nodes(new)
        self.show_message(GROUPED_LINE)
        return new[0] if new else None

    def ungroup_selection(self) -> bool:
        group = group_to_ungroup(self.scene.graph, self.scene.selected_node_ids())
        if group is None:
            self.show_message(UNGROUP_REFUSAL)
            return False
        try:
            command = ungroup_edit(self.session.document, self.scene.path, group)
        except GraphError as exc:
            self.show_message(str(exc))
            return False
        return self.scene.run(command)

    def tidy(self) -> bool:
        """Lay this level out in layers, the residual stream on one straight row (one undo)."""
        if not self.scene.graph.nodes:
            return False
        if not self.scene.run(tidy_edit(self.session.document, self.scene.path)):
            return False
        self.view.fit_to_view()
        return True
