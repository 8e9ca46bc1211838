"""The cost panel: parameters (total and per block), FLOPs and KV cache per token, and the
memory one training step needs for a chosen batch, length and dtype, against this machine."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHeaderView, QLabel,
                               QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from .cost_lines import (MEMORY_ROWS, BlockRow, block_rows, fits, memory_view, model_lines,
                         share_texts, unavailable_reason)
from .graph_report import GraphReport, context_length
from .device_memory import DeviceMemory, training_device
from .session import EditorSession
from .text import count_label

DTYPES = ("float32", "bfloat16", "float16")


def _value(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    return label


class CostPanel(QWidget):
    node_activated = Signal(tuple, str)  # (path, node_id) of a row in the per-block table

    def __init__(self, session: EditorSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.device: DeviceMemory | None = training_device()
        self.total = _value()
        self.non_embedding = _value()
        self.flops = _value()
        self.kv = _value()
        self.batch = QSpinBox(minimum=1, maximum=65536, value=8, keyboardTracking=False)
        self.seq_len = QSpinBox(minimum=1, maximum=1 << 20, value=256, keyboardTracking=False)
        self.dtype = QComboBox()
        self.memory_rows = {k: _value() for k in MEMORY_ROWS}
        self.fits = _value()
        self.table = QTableWidget(0, 3)
        self._seq_len_touched = False
        self.unavailable = ""          # why no numbers are shown (an invalid graph), else ""
        self.estimate = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._model_box())
        layout.addWidget(self._memory_box())
        layout.addWidget(QLabel("Parameters per block (a group counts its inside × repeat; "
                                "blocks inside a group, one copy)", wordWrap=True))
        layout.addWidget(self._set_up_table(), 1)
        self.seq_len.valueChanged.connect(self._seq_len_edited)
        self.batch.valueChanged.connect(lambda _: self.update_memory())
        self.dtype.currentTextChanged.connect(lambda _: self.update_memory())
        session.report_ready.connect(self.show_report)
        self.show_report(session.report)

    def _model_box(self) -> QGroupBox:
        self.total.setProperty("role", "big")
        box = QGroupBox("Model")
        form = QFormLayout(box)
        form.addRow("Parameters", self.total)
        form.addRow("Without embeddings", self.non_embedding)
        form.addRow("Forward FLOPs / token", self.flops)
        form.addRow("KV cache / token", self.kv)
        for row, tip in enumerate((
                "Trainable values, each counted once (a tied head shares the embedding).",
                "Kaplan et al.'s N: everything except lookup tables.",
                "Matrix multiplies of one forward pass per token at the context length "
                "(2 FLOPs per multiply-add).",
                "What generation caches per token: 2 (K, V) × layers × kv heads × head size "
                "× bytes (bfloat16). MQA and GQA exist to shrink it.")):
            form.itemAt(row, QFormLayout.LabelRole).widget().setToolTip(tip)
        return box

    def _memory_box(self) -> QGroupBox:
        self.dtype.addItems(DTYPES)
        self.fits.setWordWrap(True)
        box = QGroupBox("Training memory (AdamW, one step)")
        form = QFormLayout(box)
        form.addRow("Batch", self.batch)
        form.addRow("Sequence length", self.seq_len)
        form.addRow("Weights dtype", self.dtype)
        for name, label in self.memory_rows.items():
            form.addRow(name.capitalize(), label)
        form.addRow(self.fits)
        self.memory_rows["total"].setProperty("role", "heading")
        return box

    def _set_up_table(self) -> QTableWidget:
        self.table.setHorizontalHeaderLabels(["Block", "Parameters", "Share"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.cellClicked.connect(self._row_clicked)
        return self.table

    def _seq_len_edited(self, _value) -> None:
        self._seq_len_touched = True
        self.update_memory()

    def show_report(self, report: GraphReport) -> None:
        self.unavailable = unavailable_reason(report)
        for name, text in model_lines(report).items():
            getattr(self, name).setText(text)
        counted = not self.unavailable and report.cost is not None
        if counted and not self._seq_len_touched:
            ctx = context_length(self.session.root)
            if ctx:
                self.seq_len.blockSignals(True)
                self.seq_len.setValue(ctx)
                self.seq_len.blockSignals(False)
        self._fill_table(block_rows(report))
        if counted:
            self.table.resizeColumnToContents(1)
        self.update_memory()

    def _fill_table(self, rows: list[BlockRow]) -> None:
        self.table.setRowCount(len(rows))
        for i, (row, share_text) in enumerate(zip(rows, share_texts(rows))):
            where = QTableWidgetItem(row.where)
            where.setData(Qt.UserRole, (row.path, row.node_id))
            count = QTableWidgetItem(count_label(row.params))
            count.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            count.setToolTip(f"{row.params:,}")
            share = QTableWidgetItem(share_text)
            share.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            for col, item in enumerate((where, count, share)):
                self.table.setItem(i, col, item)

    def update_memory(self) -> None:
        shown = memory_view(self.session.root, batch=self.batch.value(),
                            seq_len=self.seq_len.value(), dtype=self.dtype.currentText(),
                            device=self.device, unavailable=self.unavailable)
        self.estimate = shown.estimate
        for name, label in self.memory_rows.items():
            label.setText(shown.rows[name])
        self.fits.setText(shown.verdict)
        self.fits.setProperty("role", shown.role)
        self._restyle(self.fits)

    @property
    def fits_on_device(self) -> bool | None:
        return fits(self.estimate, self.device)

    @staticmethod
    def _restyle(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    def _row_clicked(self, row: int, column: int) -> None:
        data = self.table.item(row, 0).data(Qt.UserRole)
        if data:
            self.node_activated.emit(tuple(data[0]), data[1])
