"""Typed editors for block parameters, built from their ParamSpec.

int -> spin box with the schema's range; float -> a text field that takes 1e-5 as well as
0.00001; bool -> check box; choice -> combo box; str -> text field. An editor reports a value
only when the user commits it (Enter, focus out, an arrow click), never half-typed numbers.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox, QWidget

from ..graph.schema import ParamSpec
from .text import param_value_label

INT_LIMIT = 2**31 - 1


class ParamEditor:
    """A widget plus a way to show a value without it counting as an edit."""

    def __init__(self, widget: QWidget, show: Callable[[Any], None]):
        self.widget = widget
        self._show = show

    def show(self, value: Any) -> None:
        blocker = QSignalBlocker(self.widget)
        self._show(value)
        del blocker


def make_editor(spec: ParamSpec, value: Any, commit: Callable[[Any], None]) -> ParamEditor:
    tip = spec.description
    # a spin box holds 32-bit ints; a larger value (a file's vocab_size, say) gets free text
    if spec.kind == "int" and abs(int(value)) <= INT_LIMIT:
        box = QSpinBox()
        box.setRange(int(spec.minimum) if spec.minimum is not None else -INT_LIMIT,
                     int(spec.maximum) if spec.maximum is not None else INT_LIMIT)
        box.setKeyboardTracking(False)  # typing "128" is one edit, not "1", "12", "128"
        box.setAccelerated(True)
        box.setValue(int(value))
        box.valueChanged.connect(lambda v: commit(int(v)))
        editor = ParamEditor(box, lambda v: box.setValue(int(v)))
    elif spec.kind == "bool":
        box = QCheckBox()
        box.setChecked(bool(value))
        box.toggled.connect(lambda v: commit(bool(v)))
        editor = ParamEditor(box, lambda v: box.setChecked(bool(v)))
    elif spec.kind == "choice":
        box = QComboBox()
        box.addItems(list(spec.choices))
        box.setCurrentText(str(value))
        box.currentTextChanged.connect(lambda v: commit(str(v)))
        editor = ParamEditor(box, lambda v: box.setCurrentText(str(v)))
    else:  # float, str and huge ints: free text, checked by the schema on commit
        box = QLineEdit(param_value_label(value) if spec.kind == "float" else str(value))
        if spec.kind == "float":
            parts = []
            if spec.minimum is not None:
                parts.append(f"at least {spec.minimum:g}")
            if spec.maximum is not None:
                parts.append(f"at most {spec.maximum:g}")
            box.setPlaceholderText("a number" + (f" ({', '.join(parts)})" if parts else ""))

        def finished():
            text = box.text().strip()
            shown = param_value_label(editor.current) if spec.kind == "float" else str(
                editor.current)
            if text != shown:
                commit(text)

        box.editingFinished.connect(finished)

        def show(v):
            editor.current = v
            box.setText(param_value_label(v) if spec.kind == "float" else str(v))

        editor = ParamEditor(box, show)
        editor.current = value
    editor.widget.setToolTip(tip)
    editor.widget.setObjectName(f"param_{spec.name}")
    return editor
