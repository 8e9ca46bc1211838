"""The block palette: every block of the catalogue by family, filtered as you type, dragged
onto the canvas (or double-clicked to drop at the centre of the view)."""
from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ..graph import families
from . import theme
from .fuzzy import WHOLE_WORD, block_score
from .icons import family_icon
from .view import BLOCK_MIME

TYPE_ROLE = Qt.UserRole + 1
SPEC_ROLE = Qt.UserRole + 2
CLOSE_MATCH = 40.0  # fuzzy_score's tier for a substring, a word start or initials


class _BlockTree(QTreeWidget):
    def mimeTypes(self):
        return [BLOCK_MIME]

    def mimeData(self, items):
        types = [i.data(0, TYPE_ROLE) for i in items if i.data(0, TYPE_ROLE)]
        return block_mime(types[0]) if types else None


def block_mime(block_type: str) -> QMimeData:
    """What a palette drag carries: the block type (the canvas's drop handler reads it)."""
    mime = QMimeData()
    mime.setData(BLOCK_MIME, block_type.encode("utf-8"))
    mime.setText(block_type)
    return mime


class Palette(QWidget):
    block_activated = Signal(str)  # double-click or Enter: add this block type

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit(placeholderText="Search blocks…", clearButtonEnabled=True)
        self.tree = _BlockTree()
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QTreeWidget.DragOnly)
        self.tree.setIndentation(12)
        self.tree.setUniformRowHeights(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.search)
        layout.addWidget(self.tree)
        self._populate()
        self.search.textChanged.connect(self.filter)
        self.search.returnPressed.connect(self._activate_first)
        self.tree.itemActivated.connect(self._activated)

    def _populate(self) -> None:
        by_family = families()
        order = [f for f in theme.FAMILY_ORDER if f in by_family] + sorted(
            f for f in by_family if f not in theme.FAMILY_ORDER)
        for family in order:
            top = QTreeWidgetItem([theme.FAMILY_TITLES.get(family, family.title())])
            top.setIcon(0, family_icon(family))
            top.setFlags(Qt.ItemIsEnabled)
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            self.tree.addTopLevelItem(top)
            for spec in by_family[family]:
                item = QTreeWidgetItem([spec.title])
                item.setData(0, TYPE_ROLE, spec.type)
                item.setIcon(0, family_icon(family))
                item.setToolTip(0, f"<qt><b>{spec.title}</b><br>{spec.description}"
                                   "<br><i>Drag onto the canvas, or double-click.</i></qt>")
                item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsDragEnabled)
                item.setData(0, SPEC_ROLE, spec)
                top.addChild(item)
        self.tree.expandAll()

    def block_items(self) -> list[QTreeWidgetItem]:
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            out.extend(top.child(j) for j in range(top.childCount()))
        return out

    def visible_types(self) -> list[str]:
        return [i.data(0, TYPE_ROLE) for i in self.block_items() if not i.isHidden()]

    def filter(self, text: str) -> None:
        """Show the blocks matching ``text``: the blocks that have it as a whole word when
        any do, else close matches (a word's start, initials), else every letters-in-order
        match."""
        scores = {}
        for child in self.block_items():
            score = block_score(text, child.data(0, SPEC_ROLE), descriptions=False)
            if score is not None:
                scores[child.data(0, TYPE_ROLE)] = score
        for tier in (WHOLE_WORD, CLOSE_MATCH):
            if any(v >= tier for v in scores.values()):
                scores = {k: v for k, v in scores.items() if v >= tier}
                break
        self._scores = scores
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            shown = 0
            for j in range(top.childCount()):
                child = top.child(j)
                match = child.data(0, TYPE_ROLE) in scores
                child.setHidden(not match)
                shown += match
            top.setHidden(shown == 0)

    def _activate_first(self) -> None:
        """Enter in the search field adds the best match."""
        visible = self.visible_types()
        if visible:
            scores = getattr(self, "_scores", {})
            self.block_activated.emit(max(visible, key=lambda t: scores.get(t, 0.0)))

    def _activated(self, item: QTreeWidgetItem, column: int) -> None:
        block_type = item.data(0, TYPE_ROLE)
        if block_type:
            self.block_activated.emit(block_type)
