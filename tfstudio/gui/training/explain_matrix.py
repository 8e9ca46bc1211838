"""The whole tensor of one walk step as a heatmap, opened on demand under the step's picture: a row
per position, the vocabulary's tokens naming the columns of the logits and probabilities, the
picked token's numbers in a line above it."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from .explain_lines import picked_line
from .explain_pictures import card_kind, card_labels, card_matrix, shape_title
from .heatmap import Heatmap
from .labels import muted


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
        title = QLabel(shape_title(step.name, value.shape))
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
        matrix = card_matrix(value)
        allowed = np.isfinite(matrix)
        rows, cols = card_labels(step, matrix.shape, row_labels, vocab_labels)
        square = rows is not None and cols is not None and cols == rows  # an attention map
        self.heatmap = Heatmap(self, kind=card_kind(step, value), labels=cols is not None,
                               min_size=60, square=square)
        self.heatmap.set_data(np.where(allowed, matrix, 0.0), rows, cols, allowed)
        # a card as tall as its rows need, not as the view: the walk is a column to scroll
        self.heatmap.setFixedHeight(min(220, 60 + 8 * matrix.shape[0]))
        column.addWidget(self.heatmap)
