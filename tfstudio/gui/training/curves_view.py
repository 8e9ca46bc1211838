"""Training curves: loss (train and validation, log scale on request), task accuracy, learning
rate, gradient norm (total, and per layer for one chosen run, so pre- and post-norm can be
compared), tokens per second. Several runs overlaid, the legend naming their architectures.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .common import ExportButton, series_colour
from .plots import layout_widget, legend, pen, styled_plot
from .series import RunSeries, write_csv


class _Entry:
    def __init__(self, series: RunSeries, colour_index: int):
        self.series = series
        self.colour = series_colour(colour_index)
        self.visible = True
        self.curves: dict[str, pg.PlotDataItem] = {}


class CurvesView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries: list[_Entry] = []
        self._colours = 0
        self.plots = layout_widget()
        ci = self.plots.ci
        self.loss_plot = styled_plot(ci.addPlot(row=0, col=0),
                                     "Loss (dashed: validation)", "cross-entropy")
        self.acc_plot = styled_plot(ci.addPlot(row=0, col=1), "Task accuracy (validation)",
                                    "answer tokens right")
        self.lr_plot = styled_plot(ci.addPlot(row=0, col=2), "Learning rate")
        self.grad_plot = styled_plot(ci.addPlot(row=1, col=0), "Gradient norm (total)",
                                     "before clipping")
        self.layer_plot = styled_plot(ci.addPlot(row=1, col=1), "Gradient norm per layer")
        self.speed_plot = styled_plot(ci.addPlot(row=1, col=2), "Throughput", "tokens / s")
        self.acc_plot.setYRange(0, 1)
        self.legend = legend(self.loss_plot)
        self.layer_legend = legend(self.layer_plot, columns=2)
        for plot in (self.acc_plot, self.lr_plot, self.grad_plot, self.layer_plot,
                     self.speed_plot):
            plot.setXLink(self.loss_plot)
        self._layer_curves: dict[str, pg.PlotDataItem] = {}

        self.log_scale = QCheckBox("Log scale")
        self.log_scale.setToolTip("Loss on a logarithmic axis")
        self.log_scale.toggled.connect(self._set_log)
        self.layers_of = QComboBox()
        self.layers_of.setMinimumContentsLength(20)
        self.layers_of.setToolTip("Whose per-layer gradient norms to draw")
        self.layers_of.currentIndexChanged.connect(lambda _: self.refresh())
        self.export = ExportButton(lambda: self.plots, "training curves", csv=self.export_csv)
        self.summary = QLabel()
        self.summary.setProperty("role", "muted")

        bar = QHBoxLayout()
        bar.addWidget(self.log_scale)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Per layer:"))
        bar.addWidget(self.layers_of)
        bar.addStretch(1)
        bar.addWidget(self.summary)
        bar.addWidget(self.export)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addLayout(bar)
        column.addWidget(self.plots, 1)

    # ------------------------------------------------------------------ runs
    def add_series(self, series: RunSeries) -> None:
        if any(e.series is series for e in self.entries):
            return
        entry = _Entry(series, self._colours)
        self._colours += 1
        c = entry.colour
        entry.curves = {
            "loss": self.loss_plot.plot(pen=pen(c, 1.6), name=series.name),
            "val": self.loss_plot.plot(pen=pen(c, 2, dashed=True), symbol="o", symbolSize=6,
                                       symbolBrush=c, symbolPen=None),
            "acc": self.acc_plot.plot(pen=pen(c, 2), symbol="o", symbolSize=5, symbolBrush=c,
                                      symbolPen=None),
            "lr": self.lr_plot.plot(pen=pen(c, 2)),
            "grad": self.grad_plot.plot(pen=pen(c, 1.4)),
            "speed": self.speed_plot.plot(pen=pen(c, 1.4)),
        }
        self.entries.append(entry)
        self.layers_of.addItem(series.name)
        self.layers_of.setCurrentIndex(self.layers_of.count() - 1)
        self.refresh()

    def remove_series(self, series: RunSeries) -> None:
        for i, entry in enumerate(self.entries):
            if entry.series is series:
                for name, curve in entry.curves.items():
                    self._plot_of(name).removeItem(curve)
                self.legend.removeItem(entry.curves["loss"])
                self.entries.pop(i)
                self.layers_of.removeItem(i)
                self.refresh()
                return

    def _plot_of(self, curve: str) -> pg.PlotItem:
        return {"loss": self.loss_plot, "val": self.loss_plot, "acc": self.acc_plot,
                "lr": self.lr_plot, "grad": self.grad_plot, "speed": self.speed_plot}[curve]

    def show_layers_of(self, series: RunSeries) -> None:
        """Draw the per-layer gradient norms of ``series`` (one of the added runs)."""
        for i, entry in enumerate(self.entries):
            if entry.series is series:
                self.layers_of.setCurrentIndex(i)

    def set_visible(self, series: RunSeries, visible: bool) -> None:
        for entry in self.entries:
            if entry.series is series:
                entry.visible = visible
                for curve in entry.curves.values():
                    curve.setVisible(visible)
        self.refresh()

    def visible_series(self) -> list[RunSeries]:
        return [e.series for e in self.entries if e.visible]

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        """Redraw from the series (called once per drain of the training queue)."""
        for entry in self.entries:
            s, c = entry.series, entry.curves
            if not entry.visible:
                continue
            steps = np.asarray(s.steps, dtype=float)
            c["loss"].setData(steps, np.asarray(s.loss, dtype=float))
            c["val"].setData(np.asarray(s.val_steps, dtype=float),
                             np.asarray(s.val_loss, dtype=float))
            acc = [(st, a) for st, a in zip(s.val_steps, s.accuracy) if a is not None]
            c["acc"].setData(np.asarray([a[0] for a in acc], dtype=float),
                             np.asarray([a[1] for a in acc], dtype=float))
            c["lr"].setData(steps, np.asarray(s.lr, dtype=float))
            c["grad"].setData(steps, np.asarray(s.grad_norm, dtype=float))
            c["speed"].setData(steps, np.asarray(s.tokens_per_s, dtype=float))
        self._refresh_layers()
        self._refresh_summary()

    def _refresh_layers(self) -> None:
        index = self.layers_of.currentIndex()
        series = self.entries[index].series if 0 <= index < len(self.entries) else None
        layers = dict(series.layer_grad_norms) if series is not None else {}
        for name in list(self._layer_curves):
            if name not in layers:
                curve = self._layer_curves.pop(name)
                self.layer_plot.removeItem(curve)
                self.layer_legend.removeItem(curve)
        for i, (name, values) in enumerate(layers.items()):  # model order, as the trainer lists
            curve = self._layer_curves.get(name)
            if curve is None:
                curve = self._layer_curves[name] = self.layer_plot.plot(name=name)
            curve.setPen(pen(series_colour(i), 1.4))  # by position: distinct within each run
            n = min(len(values), len(series.steps))
            curve.setData(np.asarray(series.steps[:n], dtype=float),
                          np.asarray(values[:n], dtype=float))

    def _refresh_summary(self) -> None:
        runs = [e.series for e in self.entries if e.visible and e.series.loss]
        if not runs:
            self.summary.setText("")
            return
        last = runs[-1]
        text = f"{last.name}: loss {last.loss[-1]:.4f}"
        if last.val_loss:
            text += f", validation {last.val_loss[-1]:.4f}"
        if last.accuracy and last.accuracy[-1] is not None:
            text += f", accuracy {last.accuracy[-1]:.1%}"
        self.summary.setText(text)

    def _set_log(self, on: bool) -> None:
        self.loss_plot.setLogMode(y=on)

    # ------------------------------------------------------------------ export
    def export_csv(self, path: str) -> None:
        series = self.visible_series()
        if not series:
            raise ValueError("no curves to export yet; train or open a run first")
        write_csv(series, path)

