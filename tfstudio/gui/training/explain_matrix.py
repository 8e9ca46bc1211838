"""The whole tensor of one walk step as a heatmap, opened on demand under the step's picture: a row
per position, the vocabulary's tokens naming the columns of the logits and probabilities, the
picked token's numbers in a line above it."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from .explain_lines import picked_line
from .heatmap import Heatmap
from .labels import muted

MAX_ROWS_SHOWN = 64   # a step's heatmap shows at most this many rows (positions)
MAX_COLS_SHOWN = 256  # ... and columns (features, vocabulary entries)


class StepCard(QFrame):
    """One step: its name and shape, its formula, the picked token's numbers in a line, and
    the tensor as a heatmap (a row per position; the vocabulary's tokens name the columns of
    the logits and probabilities)."""

    def __init__(self, step, row_labels: list[str], parent: QWidget | None = None, *,
                 vocab_labels: list[str] | None = None, position: int | None = None,
                 token_names: Callable[[list[int]], list[str]] | None = None):
        super().__init__(parent)
        self.name = step.name
        self.setFrameShape(QFrame.StyledPanel)
        value = np.asarray(step.value)
        shape = " x ".join(map(str, value.shape)) or "scalar"
        title = QLabel(f"<b>{step.name}</b>  [{shape}]")
        title.setTextFormat(Qt.RichText)
        formula = muted(step.formula)
        formula.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.picked = QLabel(picked_line(value, step.kind, row_labels, position, token_names))
        self.picked.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.picked.setWordWrap(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.addWidget(title)
        column.addWidget(formula)
        if self.picked.text():
            column.addWidget(self.picked)
        matrix = value.reshape(1, -1) if value.ndim <= 1 else value.reshape(value.shape[0], -1)
        matrix = matrix[:MAX_ROWS_SHOWN, :MAX_COLS_SHOWN].astype(np.float64)
        allowed = np.isfinite(matrix)
        kind = "sequential" if step.kind == "sampling" or "softmax" in step.name or \
            value.dtype == bool or np.issubdtype(value.dtype, np.integer) else "diverging"
        rows, cols = card_labels(step, matrix.shape, row_labels, vocab_labels)
        square = rows is not None and cols is not None and cols == rows  # an attention map
        self.heatmap = Heatmap(self, kind=kind, labels=cols is not None, min_size=60,
                               square=square)
        self.heatmap.set_data(np.where(allowed, matrix, 0.0), rows, cols, allowed)
        # a card as tall as its rows need, not as the view: the walk is a column to scroll
        self.heatmap.setFixedHeight(min(220, 60 + 8 * matrix.shape[0]))
        column.addWidget(self.heatmap)


def card_labels(step, shape: tuple[int, int], row_labels: list[str],
                vocab_labels: list[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """(rows, columns) naming a step's heatmap: positions down, and across the keys of an
    attention map, the vocabulary of logits and probabilities, else feature numbers."""
    n_rows, n_cols = shape
    rows = row_labels[:n_rows] if len(row_labels) >= n_rows else None
    if n_rows == 1 and len(row_labels) == n_cols:
        return ["id" if step.name.endswith("token ids") else "value"], row_labels
    over_vocab = step.kind == "sampling" or step.name.endswith(": logits")
    if vocab_labels is not None and over_vocab and len(vocab_labels) >= n_cols:
        return (rows if n_rows > 1 else ["p"]), vocab_labels[:n_cols]
    if rows is None:
        return None, None
    if step.name.endswith((": scores", ": mask", ": softmax")) and n_cols == len(rows):
        return rows, rows
    return rows, [str(j) for j in range(n_cols)]


