"""Search-to-add: a small popup at the cursor (double-click or Tab on the canvas); type a few
letters, Enter takes the top row. A word that is a switch's setting ("gqa", "rope", "rmsnorm")
puts that setting on top ("Set decoder layer's attention to GQA"), so Enter applies it; a
setting the query only starts comes right after the best block."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

from ..graph import BlockSpec, all_specs
from .icons import family_icon
from .search_results import NO_MATCH, search_results

SETTING_ROLE = Qt.UserRole + 2  # (switch key, value) on a result that sets a switch


class SearchPopup(QFrame):
    chosen = Signal(str)  # block type
    setting_chosen = Signal(str, str)  # switch key, value

    def __init__(self, parent=None):
        super().__init__(parent, Qt.Popup)
        self.setFrameShape(QFrame.StyledPanel)
        self.edit = QLineEdit(placeholderText="Add a block: type to search")
        self.list = QListWidget()
        self.hint = QLabel("", wordWrap=True)
        self.hint.setProperty("role", "muted")
        self.hint.setMinimumHeight(48)
        self.hint.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.edit)
        layout.addWidget(self.list)
        layout.addWidget(self.hint)
        self.resize(340, 380)
        self.edit.textChanged.connect(self.update_results)
        self.edit.returnPressed.connect(self.accept_current)
        self.list.itemActivated.connect(lambda _: self.accept_current())
        self.list.currentItemChanged.connect(self._show_description)
        self.edit.installEventFilter(self)
        self._all_specs = [s for s in all_specs() if not s.internal]
        self._specs = self._all_specs
        self._settings = True
        # the layer group a layer setting would change (its name), None when there is none
        self.layer_name: Callable[[], str | None] = lambda: None
        self.update_results("")

    def popup(self, global_pos: QPoint, fits: Callable[[BlockSpec], bool] | None = None,
              prompt: str = "Add a block: type to search") -> None:
        """Show at ``global_pos``; ``fits`` keeps only the blocks it accepts (those whose
        ports fit a wire let go in empty space)."""
        self._specs = [s for s in self._all_specs if fits is None or fits(s)]
        self._settings = fits is None  # a loose wire wants a block, not a setting
        self.edit.setPlaceholderText(prompt)
        self.edit.clear()
        self.update_results("")
        self.move(global_pos)
        self.show()
        self.edit.setFocus()

    def update_results(self, text: str) -> None:
        """The rows gui.search_results lists for ``text``, the first one current."""
        self.list.clear()
        layer = self.layer_name() if self._settings else None
        for row in search_results(text, self._specs, layer, self._settings):
            item = QListWidgetItem(row.text)
            if row.spec is not None:
                item.setIcon(family_icon(row.spec.family))
                item.setData(Qt.UserRole, row.spec.type)
                item.setToolTip(row.hint)
            item.setData(SETTING_ROLE, row.setting)
            item.setData(Qt.UserRole + 1, row.hint)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        else:
            self.hint.setText(NO_MATCH)

    def result_types(self) -> list[str]:
        """The block types among the results, in order."""
        types = [self.list.item(i).data(Qt.UserRole) for i in range(self.list.count())]
        return [t for t in types if t]

    def result_texts(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _show_description(self, current, previous) -> None:
        if current is not None:
            self.hint.setText(current.data(Qt.UserRole + 1))

    def accept_current(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        self.hide()
        setting = item.data(SETTING_ROLE)
        if setting:
            self.setting_chosen.emit(*setting)
        else:
            self.chosen.emit(item.data(Qt.UserRole))

    def eventFilter(self, obj, event):
        # arrow keys in the search field move through the results
        if obj is self.edit and event.type() == event.Type.KeyPress:
            if event.key() in (Qt.Key_Down, Qt.Key_Up):
                row = self.list.currentRow() + (1 if event.key() == Qt.Key_Down else -1)
                if 0 <= row < self.list.count():
                    self.list.setCurrentRow(row)
                return True
        return super().eventFilter(obj, event)
