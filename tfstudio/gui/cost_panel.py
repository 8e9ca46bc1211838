"""The cost panel: parameters (total and per block), FLOPs and KV cache per token, and the
memory one training step needs for a chosen batch, length and dtype, against this machine."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHeaderView, QLabel,
                               QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..graph.cost import training_memory
from .graph_report import GraphReport, context_length
from .device_memory import DeviceMemory, training_device
from .session import EditorSession
from .text import bytes_label, count_label, flops_label

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
        self.memory_rows = {k: _value() for k in ("weights", "gradients", "optimizer",
                                                  "activations", "total")}
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
        cost = report.cost
        self.unavailable = ""
        if report.errors:
            self.unavailable = (f"Unavailable: the graph has {report.errors} error"
                                f"{'s' * (report.errors != 1)} (see Problems); these numbers "
                                "would describe a model that cannot be built.")
            cost = None
        if cost is None:
            for label in (self.total, self.non_embedding, self.flops, self.kv):
                label.setText("unavailable" if self.unavailable else "—")
            self.table.setRowCount(0)
            self.update_memory()
            return
        self.total.setText(f"{count_label(cost.total_params)}  ({cost.total_params:,})")
        self.non_embedding.setText(count_label(cost.non_embedding_params))
        self.flops.setText(f"{flops_label(cost.flops_per_token)} at {cost.context_length} "
                           "tokens")
        self.kv.setText(f"{bytes_label(cost.kv_cache_bytes_per_token)}  "
                        f"(full context: {bytes_label(cost.kv_cache_bytes_per_token * cost.context_length)})")
        if not self._seq_len_touched:
            ctx = context_length(self.session.root)
            if ctx:
                self.seq_len.blockSignals(True)
                self.seq_len.setValue(ctx)
                self.seq_len.blockSignals(False)
        self._fill_table(cost)
        self.update_memory()

    def _fill_table(self, cost) -> None:
        rows = sorted(((path, nid, n) for (path, nid), n in cost.node_params.items() if n),
                      key=lambda r: -r[2])
        total = max(1, sum(n for path, nid, n in rows if not path))
        self.table.setRowCount(len(rows))
        for i, (path, nid, n) in enumerate(rows):
            where = QTableWidgetItem("/".join((*path, nid)))
            where.setData(Qt.UserRole, (path, nid))
            count = QTableWidgetItem(count_label(n))
            count.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            count.setToolTip(f"{n:,}")
            share = QTableWidgetItem(f"{100 * n / total:.1f}%" if not path else "one copy")
            share.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            for col, item in enumerate((where, count, share)):
                self.table.setItem(i, col, item)
        self.table.resizeColumnToContents(1)

    def update_memory(self) -> None:
        if self.unavailable:  # no confident numbers, no "fits", for a graph that cannot build
            for label in self.memory_rows.values():
                label.setText("—")
            self.fits.setText(self.unavailable)
            self.fits.setProperty("role", "error")
            self._restyle(self.fits)
            self.estimate = None
            return
        try:
            est = training_memory(self.session.root, batch=self.batch.value(),
                                  seq_len=self.seq_len.value(), dtype=self.dtype.currentText())
        except Exception as exc:  # an invalid graph has no estimate; say why instead
            for label in self.memory_rows.values():
                label.setText("—")
            self.fits.setText(f"No estimate: {exc}")
            self.fits.setProperty("role", "muted")
            self._restyle(self.fits)
            self.estimate = None
            return
        self.estimate = est
        for name, label in self.memory_rows.items():
            label.setText(bytes_label(getattr(est, name)))
        if self.device is None:
            self.fits.setText("This machine's memory is unknown.")
            self.fits.setProperty("role", "muted")
        elif est.total <= self.device.total:
            self.fits.setText(f"✔ Fits on this machine: {self.device.name}, "
                              f"{bytes_label(self.device.total)} "
                              f"({100 * est.total / self.device.total:.0f}% used).")
            self.fits.setProperty("role", "ok")
        else:
            self.fits.setText(f"✘ Does not fit: {self.device.name} has "
                              f"{bytes_label(self.device.total)}, this needs "
                              f"{est.total / self.device.total:.1f}×. Lower the batch or the "
                              "length, or use bfloat16.")
            self.fits.setProperty("role", "error")
        self._restyle(self.fits)

    @property
    def fits_on_device(self) -> bool | None:
        est = self.estimate
        if est is None or self.device is None:
            return None
        return est.total <= self.device.total

    @staticmethod
    def _restyle(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    def _row_clicked(self, row: int, column: int) -> None:
        data = self.table.item(row, 0).data(Qt.UserRole)
        if data:
            self.node_activated.emit(tuple(data[0]), data[1])
