"""The curves' reading aids as TensorBoard and W&B users know them: a smoothing slider, an
x-axis of step or wall time, and a readout of every shown run's values at the step under the
pointer, with a vertical line through every plot at that point. The numbers come from
:mod:`.curve_math`; this module holds the widgets and the pointer."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtWidgets import QComboBox, QFrame, QLabel, QSlider

from .. import theme
from .curve_math import (SMOOTHING_STEPS, STEP, X_AXES, readout, readout_at, smoothing_label,
                         smoothing_weight)

READOUT_HINT = "Point at a plot to read every run's values at that step"


class HoverBox(QLabel):
    """The readout as a box beside the pointer, as TensorBoard and W&B show it (a row of its
    own cost the six plots the height a 1366x768 screen has): sized to its text, shown only
    while the pointer reads a plot, kept inside its parent."""

    def setText(self, text: str) -> None:
        super().setText(text)
        self.adjustSize()

    def follow(self, at: QPoint) -> None:
        """Stand beside ``at`` (parent coordinates), on the side where it fits."""
        area = self.parentWidget().rect()
        self.move(*readout_at((at.x(), at.y()), (self.width(), self.height()),
                              (area.right(), area.bottom())))
        self.setVisible(self.text() != READOUT_HINT)
        self.raise_()


class CurveReader(QObject):
    """Owns the smoothing slider, the x-axis picker and the readout line of a curves view.
    ``shown()`` gives the runs drawn, ``smoothed()`` their smoothed loss arrays by name."""

    changed = Signal()  # the smoothing or the x-axis changed: the curves must be redrawn

    def __init__(self, plots: pg.GraphicsLayoutWidget, plot_items: list[pg.PlotItem],
                 shown, smoothed, parent=None):
        super().__init__(parent)
        self._plots, self._items = plots, plot_items
        self._shown, self._smoothed = shown, smoothed
        self.smoothing = QSlider(Qt.Horizontal)
        self.smoothing.setRange(0, SMOOTHING_STEPS - 1)  # weights 0 to 0.99
        self.smoothing.setFixedWidth(64)
        self.smoothing.setToolTip(
            "Smoothing (exponential moving average, as TensorBoard): the loss and gradient "
            "norm curves drawn smoothed, the raw curve faint behind. 0: raw")
        self.smoothing_label = QLabel()
        self.smoothing_label.setProperty("role", "muted")
        self.x_axis = QComboBox()
        for key, title in X_AXES.items():
            self.x_axis.addItem(title, key)
        self.x_axis.setToolTip("The x-axis: the training step, or wall time since the run "
                               "started (from the times in metrics.jsonl)")
        self.text = HoverBox(READOUT_HINT)
        self.text.setProperty("role", "muted")
        self.text.setAutoFillBackground(True)   # readable over the curves it floats on
        self.text.setFrameShape(QFrame.Shape.StyledPanel)
        self.text.setMargin(3)
        self.text.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.lines = []
        colour = theme.current().muted_text
        for item in plot_items:
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(colour, width=1,
                                                                         style=Qt.DotLine))
            line.setVisible(False)
            line.setZValue(50)
            item.addItem(line, ignoreBounds=True)
            self.lines.append(line)
        self._last_x: float | None = None
        self.smoothing.valueChanged.connect(self._smoothing_moved)
        self.x_axis.currentIndexChanged.connect(lambda _: self._axis_changed())
        plots.scene().sigMouseMoved.connect(self._pointer_moved)
        self._smoothing_moved(0)

    @property
    def weight(self) -> float:
        return smoothing_weight(self.smoothing.value())

    @property
    def axis(self) -> str:
        return self.x_axis.currentData() or STEP

    def _smoothing_moved(self, _value: int) -> None:
        self.smoothing_label.setText(smoothing_label(self.weight))
        self.changed.emit()
        self._update_text()

    def _axis_changed(self) -> None:
        self._last_x = None
        for line in self.lines:
            line.setVisible(False)
        self.text.setText(READOUT_HINT)
        self.changed.emit()

    def _pointer_moved(self, scene_pos) -> None:
        for item in self._items:
            box = item.getViewBox()
            if box.sceneBoundingRect().contains(scene_pos):
                self.show_at(box.mapSceneToView(scene_pos).x())
                return

    def show_at(self, x: float) -> None:
        """Put the line through every plot at ``x`` and read every run's values there."""
        self._last_x = x
        for line in self.lines:
            line.setPos(x)
            line.setVisible(True)
        self._update_text()

    def _update_text(self) -> None:
        if self._last_x is None:
            return
        text = readout(self._shown(), self._last_x, self.axis,
                       self._smoothed() if self.weight > 0 else None)
        self.text.setText(text or READOUT_HINT)
