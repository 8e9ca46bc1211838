"""Dialogs: the presets gallery ("New from preset") and the generated PyTorch code.

The code view compiles in a background thread and only when opened, so torch is imported
the first time someone asks to see code, never at start-up.
"""
from __future__ import annotations

from PySide6.QtCore import QThread, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QListWidget,
                               QListWidgetItem, QPlainTextEdit, QVBoxLayout)

from ..graph import Graph
from ..presets import DEFAULT_PRESET, load_preset, preset_names
from .graph_report import report_on_graph
from .code_lines import COMPILING, code_status
from .gallery_lines import gallery_order, preset_facts


class PresetGallery(QDialog):
    """Pick a built-in architecture; each shows its description and size before you commit."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("New from preset")
        self.resize(760, 460)
        self.list = QListWidget()
        self.list.setMinimumWidth(220)
        self.title = QLabel()
        self.title.setProperty("role", "heading")
        self.description = QLabel(wordWrap=True)
        self.description.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.facts = QLabel(wordWrap=True)
        self.facts.setProperty("role", "muted")
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Create")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        right = QVBoxLayout()
        right.addWidget(self.title)
        right.addWidget(self.description)
        right.addWidget(self.facts)
        right.addStretch(1)
        right.addWidget(buttons)
        layout = QHBoxLayout(self)
        layout.addWidget(self.list)
        layout.addLayout(right, 1)
        self._graphs: dict[str, Graph] = {}
        names = gallery_order(preset_names())
        for name in names:
            self.list.addItem(QListWidgetItem(name))
        self.list.currentTextChanged.connect(self._show)
        self.list.itemDoubleClicked.connect(lambda _: self.accept())
        self.select(DEFAULT_PRESET if DEFAULT_PRESET in names else names[0])

    def select(self, name: str) -> None:
        items = self.list.findItems(name, Qt.MatchExactly)
        if items:
            self.list.setCurrentItem(items[0])

    @property
    def chosen(self) -> str | None:
        item = self.list.currentItem()
        return item.text() if item is not None else None

    def graph(self) -> Graph | None:
        return self._graph(self.chosen) if self.chosen else None

    def _graph(self, name: str) -> Graph:
        if name not in self._graphs:
            self._graphs[name] = load_preset(name)
        return self._graphs[name]

    def _show(self, name: str) -> None:
        if not name:
            return
        graph = self._graph(name)
        self.title.setText(name)
        self.description.setText(str(graph.meta.get("description", "")))
        self.facts.setText("<br>".join(preset_facts(graph, report_on_graph(graph))))


class _CompileJob(QThread):
    done = Signal(str, str)  # source, error

    def __init__(self, graph: Graph, parent=None):
        super().__init__(parent)
        self.graph = graph

    def run(self) -> None:
        try:
            from .. import compile_graph  # imports torch: only here, off the GUI thread
            with _meta_device():
                model = compile_graph(self.graph)
            self.done.emit(model.source, "")
        except Exception as exc:  # a graph with errors cannot compile: show why
            self.done.emit("", f"{type(exc).__name__}: {exc}")


def _meta_device():
    """Build on torch's meta device: the code is what we want, not gigabytes of weights."""
    import torch
    return torch.device("meta")


class CodeDialog(QDialog):
    """The PyTorch module the compiler generates for this graph (read-only)."""

    def __init__(self, graph: Graph, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Generated PyTorch code")
        self.resize(860, 640)
        self.status = QLabel(COMPILING)
        self.status.setProperty("role", "muted")
        self.text = QPlainTextEdit(readOnly=True)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.text.setFont(font)
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.source = ""
        self.error = ""
        self.job = _CompileJob(graph.clone(), self)
        self.job.done.connect(self._done)
        self.job.start()

    def _done(self, source: str, error: str) -> None:
        self.source, self.error = source, error
        line, role = code_status(source, error)
        self.status.setText(line)
        if role == "error":
            self.status.setProperty("role", role)
        self.text.setPlainText(error or source)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    def done(self, result: int) -> None:  # closing waits for the worker so no thread outlives us
        self.job.wait()
        super().done(result)
