"""The walk as small pictures of the picked token, one per step (see
:meth:`tfstudio.probes.walk.Step.summary`): a vector as a strip of coloured cells, one number per
position (or per key, for the picked token's row of attention) as labelled bars, a distribution
over the vocabulary as its likeliest tokens with the rest summed (which: :mod:`.explain_pictures`).
Values show on hover."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from .colours import themed_colour
from .explain_colours import strip_rgb, strip_scale
from .explain_lines import picked_text
from .explain_pictures import shape_title, stage_names, stage_pictures
from .labels import muted
from .token_text import display_token

STRIP_HEIGHT = 18
BARS_HEIGHT = 64



class Strip(QWidget):
    """One vector as a row of cells coloured by value (symmetric scale; masked cells grey)."""

    def __init__(self, values: np.ndarray, parent: QWidget | None = None):
        super().__init__(parent)
        self.values = np.asarray(values, dtype=np.float64).reshape(-1)
        self.scale = strip_scale(self.values)
        self.setFixedHeight(STRIP_HEIGHT)
        self.setMouseTracking(True)
        self.setMinimumWidth(60)

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        n = max(len(self.values), 1)
        width = self.width() / n
        for i, v in enumerate(self.values):
            painter.fillRect(QRectF(i * width, 0, width + 0.5, self.height()),
                             QColor(*strip_rgb(v, self.scale)))
        painter.end()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        i = int(event.position().x() / max(self.width(), 1) * len(self.values))
        if 0 <= i < len(self.values):
            self.setToolTip(f"feature {i}: {self.values[i]:.4g}")


class Bars(QWidget):
    """Labelled vertical bars (a token under each); the ``highlight`` bar drawn in the accent
    colour. Negative values hang below the axis; masked (non-finite) bars are left out."""

    def __init__(self, values, labels: list[str], highlight: int | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.values = np.asarray(values, dtype=np.float64).reshape(-1)
        self.labels = [display_token(t) for t in labels]
        self.highlight = highlight
        self.setFixedHeight(BARS_HEIGHT)
        self.setMouseTracking(True)
        self.setMinimumWidth(60)

    def paintEvent(self, _event) -> None:  # noqa: N802
        painter = QPainter(self)
        metrics = painter.fontMetrics()
        label_h = metrics.height()
        n = max(len(self.values), 1)
        width = self.width() / n
        finite = self.values[np.isfinite(self.values)]
        low = min(0.0, float(finite.min())) if finite.size else 0.0
        high = max(0.0, float(finite.max())) if finite.size else 1.0
        span = (high - low) or 1.0
        plot_h = self.height() - label_h - 2
        zero = plot_h * high / span
        ink, accent = QColor(themed_colour("node_text")), QColor(themed_colour("accent"))
        bar = QColor(90, 120, 190)
        for i, v in enumerate(self.values):
            x = i * width
            if np.isfinite(v):
                top, bottom = sorted((zero, zero - v / span * plot_h))
                painter.fillRect(QRectF(x + 1, top, max(width - 2, 1), max(bottom - top, 1)),
                                 accent if i == self.highlight else bar)
            if i < len(self.labels):
                text = metrics.elidedText(self.labels[i], Qt.ElideRight, int(width))
                painter.setPen(accent if i == self.highlight else ink)
                painter.drawText(QRectF(x, plot_h + 2, width, label_h), Qt.AlignHCenter, text)
        painter.end()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        i = int(event.position().x() / max(self.width(), 1) * len(self.values))
        if 0 <= i < len(self.values):
            name = self.labels[i] if i < len(self.labels) else str(i)
            self.setToolTip(f"{name}: {self.values[i]:.4g}")


class StagePicture(QFrame):
    """One step of the walk, drawn from its summary: the name and shape, the formula, then the
    picked token's picture (see the module docstring)."""

    def __init__(self, summary: dict, tokens: list[str], position: int,
                 token_names: Callable[[list[int]], list[str]] | None = None,
                 matrix: Callable[[], QWidget] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.name, self.block = summary["name"], summary["block"]
        self.matrix_card: QWidget | None = None
        self.current = False   # the stage being explained
        self._matrix = matrix
        self.setFrameShape(QFrame.StyledPanel)
        title = QLabel(shape_title(summary["name"], summary["shape"]))
        title.setTextFormat(Qt.RichText)
        title.setWordWrap(True)   # a narrow picture (the row across the layers) keeps it all
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.setSpacing(2)
        column.addWidget(title)
        column.addWidget(muted(summary["formula"]))
        self.pictures: list[QWidget] = []
        names = stage_names(summary, token_names)
        self.picked = QLabel(picked_text(summary, tokens, position, names))
        self.picked.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.picked.setWordWrap(True)
        if self.picked.text():
            column.addWidget(self.picked)
        for picture in stage_pictures(summary, tokens, position, names):
            column.addWidget(muted(picture.caption))
            drawn = Bars(picture.values, picture.labels, picture.highlight) \
                if picture.kind == "bars" else Strip(picture.values)
            column.addWidget(drawn)
            self.pictures.append(drawn)
        if matrix is not None:
            self.matrix_button = QPushButton("Show the whole matrix")
            self.matrix_button.setCheckable(True)
            self.matrix_button.toggled.connect(self.show_matrix)
            column.addWidget(self.matrix_button, 0, Qt.AlignLeft)
        self._column = column

    def show_matrix(self, shown: bool = True) -> None:
        """The step's whole tensor as a heatmap under its picture, made when first asked."""
        if self._matrix is None:
            return
        if shown and self.matrix_card is None:
            self.matrix_card = self._matrix()
            self._column.addWidget(self.matrix_card)
        if self.matrix_card is not None:
            self.matrix_card.setVisible(shown)
        self.matrix_button.blockSignals(True)
        self.matrix_button.setChecked(shown)
        self.matrix_button.blockSignals(False)
        self.matrix_button.setText("Hide the matrix" if shown else "Show the whole matrix")

    def set_current(self, current: bool) -> None:
        """Drawn with a border in the accent colour while it is the stage being explained."""
        if current != self.current:
            self.current = current
            self.update()

    def paintEvent(self, event) -> None:  # noqa: N802
        super().paintEvent(event)
        if self.current:
            painter = QPainter(self)
            pen = painter.pen()
            pen.setColor(QColor(themed_colour("accent")))
            pen.setWidth(3)
            painter.setPen(pen)
            painter.drawRect(self.rect().adjusted(1, 1, -2, -2))
            painter.end()
