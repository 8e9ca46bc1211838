"""Attention heatmaps on an editable probe text: per layer and head, all heads of a layer as a
grid, or their average; query tokens label the rows and key tokens the columns; masked cells are
hatched. The step shown is the workspace's (its step bar, :mod:`.step_bar`); head scores appear
only on the look whose weights they were measured on."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from .attention_lines import (GRID, colour_range, empty_text, head_entries, head_groups,
                              head_matrix, head_title, info_line, kv_group, map_title, map_tokens,
                              roles_for, shared_kv)
from .kept_choice import kept_choice
from .labels import muted, placeholder
from .picture_export import ExportButton
from .heatmap import Heatmap, HeatmapGrid



class AttentionView(QWidget):
    probe_text_edited = Signal(str)
    refresh_every_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.snapshot: dict | None = None
        self.groups: dict[str, tuple[int, int]] = {}  # (heads, kv_heads) per attention block
        # per block, each head's previous-token and induction score (probes.head_scores) for
        # the weights last loaded, and their step; shown on the grid's titles only while the
        # look on screen was made by those weights
        self.roles: dict[str, dict[str, list[float]]] = {}
        self.roles_step: int | None = None
        self.text = QLineEdit()
        self.look = QPushButton("Look")
        self.layer = QComboBox()
        self.head = QComboBox()
        self.every = QSpinBox()
        # weights are probabilities: one 0-1 scale for every map unless asked otherwise
        self.contrast = QCheckBox("Contrast per map")
        self.heatmap = Heatmap(self, scrollable=True)  # long texts scroll, labels stay legible
        self.grid = HeatmapGrid(self)
        self.empty = placeholder("Press Train: the attention of every layer and head on the "
                                 "probe text appears here and sharpens as the model learns.")
        self.stack = QStackedWidget()
        self.export = ExportButton(lambda: self.stack.currentWidget(), "attention heatmap")
        self.info = muted()
        self._set_up_inputs()
        self._set_up_replay()
        for page in (self.empty, self.heatmap, self.grid):
            self.stack.addWidget(page)
        self.grid.picked.connect(self._pick_head)
        self._lay_out()

    def _set_up_inputs(self) -> None:
        self.text.setPlaceholderText("Probe text: what the model reads while you watch")
        self.text.setToolTip("The text every view looks at. During training the next probe "
                             "uses it; after training it is read at once.")
        self.text.returnPressed.connect(self._text_entered)
        self.look.setToolTip("Read the probe text now (Enter does the same)")
        self.look.clicked.connect(self._text_entered)
        self.layer.setMinimumContentsLength(12)
        self.layer.currentIndexChanged.connect(self._layer_changed)
        self.head.setMinimumContentsLength(11)
        self.head.currentIndexChanged.connect(lambda _: self.redraw())

    def _set_up_replay(self) -> None:
        self.every.setRange(1, 100_000)
        self.every.setValue(10)
        self.every.setSuffix(" steps")
        self.every.setToolTip("How often training stops for a look inside (each look is also "
                              "kept for the step slider)")
        self.every.valueChanged.connect(self.refresh_every_changed)
        self.contrast.setToolTip("Stretch each map's colours from 0 to its own largest weight "
                                 "(its colour bar says how far). Off: every map on the same "
                                 "0 to 1 scale, so a flat head looks pale")
        self.contrast.toggled.connect(lambda _: self.redraw())

    def _lay_out(self) -> None:
        """Two thin rows of controls around the heatmap, which gets the rest of the height."""
        top = QHBoxLayout()
        for widget, stretch in ((QLabel("Probe text"), 0), (self.text, 1), (self.look, 0),
                                (QLabel("Layer"), 0), (self.layer, 0), (QLabel("Heads"), 0),
                                (self.head, 0)):
            top.addWidget(widget, stretch)
        bottom = QHBoxLayout()
        for widget, stretch in ((self.info, 1), (self.contrast, 0), (QLabel("Look every"), 0),
                                (self.every, 0), (self.export, 0)):
            bottom.addWidget(widget, stretch)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.setSpacing(4)
        column.addLayout(top)
        column.addWidget(self.stack, 1)
        column.addLayout(bottom)

    # ------------------------------------------------------------------ input
    def set_graph(self, graph) -> None:
        """Which query heads share a K/V head (GQA, MQA), to mark them."""
        self.groups = head_groups(graph)

    def sharing(self) -> tuple[int, int] | None:
        """(heads, kv_heads) of the shown layer when its heads share K/V, else None."""
        entry = self._entry()
        if entry is None:
            return None
        return shared_kv(kv_group(self.layer.currentText(), self.groups), bool(entry.get("cross")))

    def set_head_roles(self, roles: dict | None, step: int | None = None) -> None:
        """Each head's previous-token and induction score, per block, measured on the weights
        of ``step`` ({} clears them)."""
        self.roles = {block: {k: [float(v) for v in values] for k, values in s.items()}
                      for block, s in (roles or {}).items()}
        self.roles_step = step if self.roles else None
        if self.snapshot is not None:
            self._fill_heads()
            self.redraw()

    def shown_roles(self) -> dict[str, list[float]] | None:
        """The shown layer's head scores, if they belong to the look on screen (scores of the
        final weights say nothing about a replayed early step)."""
        look_step = int(self.snapshot.get("step", -1)) if self.snapshot is not None else None
        return roles_for(self.roles, self.roles_step, look_step, self.layer.currentText())

    def head_title(self, h: int, scores: bool = True) -> str:
        """"head 2 · K/V 1 · prev 0.93 · ind 0.02" (the scores only on the look they describe;
        ``scores=False``: the short name the Heads box fits)."""
        return head_title(h, self.sharing(), self.shown_roles() if scores else None)

    def _text_entered(self) -> None:
        self.probe_text_edited.emit(self.text.text())

    def _layer_changed(self, _index: int) -> None:
        self._fill_heads()
        self.redraw()

    def _pick_head(self, head: int) -> None:
        self.head.setCurrentIndex(self.head.findData(head))

    # ------------------------------------------------------------------ data
    def show_snapshot(self, snapshot: dict | None) -> None:
        self.snapshot = snapshot
        attention = (snapshot or {}).get("attention") or {}
        current = self.layer.currentText()
        self.layer.blockSignals(True)
        self.layer.clear()
        for key in attention:
            self.layer.addItem(key)
        if attention:
            self.layer.setCurrentText(kept_choice(current, list(attention)))
        self.layer.blockSignals(False)
        self._fill_heads()  # (its probe-text box follows the look shown: ProbeText.show_look)
        self.redraw()

    def show_empty(self, reason: str) -> None:
        """No look for the run shown: the empty page says why (``reason``), and nothing of
        an earlier look stays (its map, its layers, its heads)."""
        self.show_snapshot(None)
        self.empty.setText(reason)

    def _fill_heads(self) -> None:
        entry = self._entry()
        heads = entry["weights"].shape[0] if entry is not None else 0
        current = self.head.currentData()
        self.head.blockSignals(True)
        self.head.clear()
        entries = head_entries(heads, lambda h, scores: self.head_title(h, scores=scores))
        for label, choice, tip in entries:
            self.head.addItem(label, choice)
            if tip is not None:
                self.head.setItemData(self.head.count() - 1, tip, Qt.ToolTipRole)
        if entries:
            choices = [choice for _, choice, _ in entries]
            self.head.setCurrentIndex(self.head.findData(kept_choice(current, choices)))
        self.head.blockSignals(False)

    def _entry(self) -> dict | None:
        attention = (self.snapshot or {}).get("attention") or {}
        return attention.get(self.layer.currentText())

    def labels(self) -> tuple[list[str], list[str]]:
        return map_tokens(self.snapshot, self._entry())

    def shown_matrix(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The matrix in the single heatmap (a head or the average) and its allowed mask."""
        entry = self._entry()
        matrix = head_matrix(entry["weights"], self.head.currentData()) if entry else None
        if matrix is None:
            return None
        return matrix, np.asarray(entry["allowed"], dtype=bool)

    def colour_range(self) -> tuple[float, float] | None:
        """(0, 1), the range of a probability; None: each map from 0 to its own maximum."""
        return colour_range(self.contrast.isChecked())

    def redraw(self) -> None:
        entry = self._entry()
        if entry is None:
            self.stack.setCurrentWidget(self.empty)
            text = empty_text(self.snapshot is not None)
            if text is not None:
                self.empty.setText(text)
            self.info.setText("")
            return
        rows, cols = self.labels()
        weights = np.asarray(entry["weights"])
        allowed = np.asarray(entry["allowed"], dtype=bool)
        layer = self.layer.currentText()
        choice = self.head.currentData()
        if choice == GRID:
            titles = [self.head_title(h) for h in range(weights.shape[0])]
            self.grid.set_data(list(weights), titles, allowed, rows, cols,
                               value_range=self.colour_range())
            for i, heatmap in enumerate(self.grid.maps):
                heatmap.selected = False
            self.stack.setCurrentWidget(self.grid)
        else:
            matrix, _ = self.shown_matrix()
            title = map_title(layer, choice, weights.shape[0], self.contrast.isChecked())
            self.heatmap.set_data(matrix, rows, cols, allowed, title,
                                  value_range=self.colour_range())
            self.stack.setCurrentWidget(self.heatmap)
        text = info_line(cross=bool(entry.get("cross")), masked=not allowed.all(),
                         shared=self.sharing(), grid=choice == GRID,
                         roles_shown=bool(self.shown_roles()),
                         roles_step=self.roles_step if self.roles else None)
        self.info.setText(text)
        self.info.setToolTip(text)

