"""The block palette: every block of the catalogue by family, filtered as you type, dragged
onto the canvas (or double-clicked to drop at the centre of the view). The field finds the
switch settings a query names too ("rope": Set the model's positions to RoPE), listed on top;
Enter applies a setting the query names exactly, else adds the best block."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ..graph import families
from . import layer_switches
from .fuzzy import palette_matches
from .icons import family_icon
from .palette_rows import block_tooltip, family_order, family_title, shown_rows
from .search_results import palette_enter
from .view import BLOCK_MIME

TYPE_ROLE = Qt.UserRole + 1
SPEC_ROLE = Qt.UserRole + 2
SETTING_ROLE = Qt.UserRole + 3  # (switch key, value) on a setting's row
FAMILY_ROLE = Qt.UserRole + 4  # a family's header row: its family


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
    setting_chosen = Signal(str, str)  # switch key, value: a setting's row activated

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
        # the layer group a layer setting would change (its name), None when there is none
        self.layer_name: Callable[[], str | None] = lambda: None
        self._settings: list = []
        self._populate()
        self.search.textChanged.connect(self.filter)
        self.search.returnPressed.connect(self._activate_first)
        self.tree.itemActivated.connect(self._activated)

    def _populate(self) -> None:
        self.settings_top = QTreeWidgetItem(["Settings"])
        self.settings_top.setFlags(Qt.ItemIsEnabled)
        font = self.settings_top.font(0)
        font.setBold(True)
        self.settings_top.setFont(0, font)
        self.tree.addTopLevelItem(self.settings_top)
        self.settings_top.setHidden(True)
        by_family = families()
        self._by_family = {family: [spec.type for spec in specs]
                           for family, specs in by_family.items()}
        for family in family_order(by_family):
            top = QTreeWidgetItem([family_title(family)])
            top.setData(0, FAMILY_ROLE, family)
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
                item.setToolTip(0, block_tooltip(spec.title, spec.description))
                item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsDragEnabled)
                item.setData(0, SPEC_ROLE, spec)
                top.addChild(item)
        self.tree.expandAll()

    def block_items(self) -> list[QTreeWidgetItem]:
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is self.settings_top:
                continue
            out.extend(top.child(j) for j in range(top.childCount()))
        return out

    def visible_types(self) -> list[str]:
        return [i.data(0, TYPE_ROLE) for i in self.block_items() if not i.isHidden()]

    def visible_settings(self) -> list[str]:
        """The settings' rows shown, in order (their texts)."""
        top = self.settings_top
        return [top.child(j).text(0) for j in range(top.childCount())]

    def _show_settings(self, text: str) -> None:
        self._settings = layer_switches.matching_settings(text, self.layer_name())
        top = self.settings_top
        top.takeChildren()
        for hit in self._settings:
            item = QTreeWidgetItem(["⚙ " + hit.text])
            item.setData(0, SETTING_ROLE, (hit.key, hit.value))
            item.setToolTip(0, "Changes this setting (one undo step); double-click applies it.")
            item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            top.addChild(item)
        top.setHidden(not self._settings)
        top.setExpanded(True)

    def filter(self, text: str) -> None:
        """Show the settings the query names, and the blocks matching ``text``
        (fuzzy.palette_matches)."""
        self._show_settings(text)
        scores = palette_matches(text, (c.data(0, SPEC_ROLE) for c in self.block_items()))
        self._scores = scores
        rows = shown_rows(scores, self._by_family)
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is self.settings_top:
                continue
            shown = rows.get(top.data(0, FAMILY_ROLE), ())
            for j in range(top.childCount()):
                child = top.child(j)
                child.setHidden(child.data(0, TYPE_ROLE) not in shown)
            top.setHidden(not shown)

    def _activate_first(self) -> None:
        """Enter in the search field applies a setting the query names exactly ("rope"),
        else adds the best block."""
        chosen = palette_enter(self._settings, self.visible_types(), getattr(self, "_scores", {}))
        if isinstance(chosen, layer_switches.SettingHit):
            self.setting_chosen.emit(chosen.key, chosen.value)
        elif chosen is not None:
            self.block_activated.emit(chosen)

    def _activated(self, item: QTreeWidgetItem, column: int) -> None:
        setting = item.data(0, SETTING_ROLE)
        if setting:
            self.setting_chosen.emit(*setting)
            return
        block_type = item.data(0, TYPE_ROLE)
        if block_type:
            self.block_activated.emit(block_type)
