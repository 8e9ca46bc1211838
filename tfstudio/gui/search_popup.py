"""Search-to-add: a small popup at the cursor (double-click or Tab on the canvas); type a few
letters, Enter adds the best match where the popup was opened."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

from ..graph import BlockSpec, all_specs
from .fuzzy import rank_blocks
from .icons import family_icon


class SearchPopup(QFrame):
    chosen = Signal(str)  # block type

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
        self.update_results("")

    def popup(self, global_pos: QPoint, fits: Callable[[BlockSpec], bool] | None = None,
              prompt: str = "Add a block: type to search") -> None:
        """Show at ``global_pos``; ``fits`` keeps only the blocks it accepts (those whose
        ports fit a wire let go in empty space)."""
        self._specs = [s for s in self._all_specs if fits is None or fits(s)]
        self.edit.setPlaceholderText(prompt)
        self.edit.clear()
        self.update_results("")
        self.move(global_pos)
        self.show()
        self.edit.setFocus()

    def update_results(self, text: str) -> None:
        self.list.clear()
        for spec in rank_blocks(text, self._specs):
            item = QListWidgetItem(family_icon(spec.family), spec.title)
            item.setData(Qt.UserRole, spec.type)
            item.setData(Qt.UserRole + 1, spec.description)
            item.setToolTip(spec.description)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        else:
            self.hint.setText("No block matches; try a word like attention, norm or ffn.")

    def result_types(self) -> list[str]:
        return [self.list.item(i).data(Qt.UserRole) for i in range(self.list.count())]

    def _show_description(self, current, previous) -> None:
        if current is not None:
            self.hint.setText(current.data(Qt.UserRole + 1))

    def accept_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.hide()
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
