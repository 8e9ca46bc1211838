"""Training curves: loss (train and validation, log scale on request), task accuracy, learning
rate, gradient norm (total, and per layer for one chosen run, so pre- and post-norm can be
compared), tokens per second. Several runs overlaid, the legend naming their architectures.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGraphicsItem, QHBoxLayout, QLabel,
                               QScrollArea, QVBoxLayout, QWidget)

from .colours import series_colour
from .curve_hints import EMPTY_HINT, plot_hint
from .curve_math import (SPEED_WINDOW, STEP, WALL, X_LABELS, EmaArray, GrowingArray,
                         accuracy_points, layer_line, legend_columns, loss_axis, moving_average,
                         step_axis_final, x_of)
from .curve_reading import CurveReader
from .picture_export import ExportButton
from .. import theme
from .plots import (STEP_LINE, layer_style, layout_widget, legend_above, live_plot, pen,
                    set_columns, step_curve, styled_plot)
from .series import RunSeries, still_logging, write_csv


MIN_DATA_HEIGHT = 200  # px of every plot's data area (a shorter screen scrolls)
RAW_ALPHA = 60  # the raw curve behind a smoothed one: faint, as in TensorBoard
RUN_COLUMNS, LAYER_COLUMNS = 2, 6  # the most columns of the runs' and the layers' legends


class _Entry:
    def __init__(self, series: RunSeries, colour_index: int):
        self.series = series
        self.colour = series_colour(colour_index)
        self.visible = True
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.arrays = {name: GrowingArray() for name in ("steps", "loss", "lr", "grad_norm",
                                                         "tokens_per_s", "elapsed_s")}
        self.smoothed = {name: EmaArray() for name in ("loss", "grad_norm")}
        self.drawn: tuple | None = None  # what the curves were last set from (see refresh)
        self.drawn_val: tuple | None = None  # and the validation points
        self.cached = False  # its curves kept as pixmaps (see hold_still)

    def array(self, name: str) -> np.ndarray:
        return self.arrays[name].sync(getattr(self.series, name))

    def x(self, axis: str) -> np.ndarray:
        """Each logged step's x: the step, or its wall time."""
        steps = self.array("steps")
        if axis != WALL:
            return steps
        elapsed = self.array("elapsed_s")
        return elapsed if len(elapsed) == len(steps) else x_of(self.series, steps, WALL)

    def smooth(self, name: str, weight: float) -> np.ndarray:
        return self.smoothed[name].sync(self.array(name), weight)

    def hold_still(self, still: bool) -> None:
        """Keep this run's curves as pixmaps while they do not change (a finished or reopened
        run): every paint of the plots then copies them instead of stroking each again (a
        20,000-step run beside a live one made every repaint 2.5x as dear). A change of range
        or size redraws the pixmaps once."""
        if still == self.cached:
            return
        self.cached = still
        mode = QGraphicsItem.DeviceCoordinateCache if still else QGraphicsItem.NoCache
        for curve in self.curves.values():
            curve.curve.setCacheMode(mode)
            curve.scatter.setCacheMode(mode)


class CurvesView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries: list[_Entry] = []
        self._colours = 0
        self.plots = layout_widget()
        self.scroll = QScrollArea()  # a short screen scrolls rather than squash the plots
        self.scroll.setWidget(self.plots)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        # (sideways only when the plots, their legends stacked, are still wider than the view)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self._fitted_width: tuple | None = None  # (view width, legend entries) fitted last
        self._make_plots(self.plots.ci)
        self._layer_curves: dict[str, pg.PlotDataItem] = {}
        self._layers_series: RunSeries | None = None
        self._layers_drawn: tuple | None = None  # what the layer curves were last set from
        self._layer_cache: dict[str, GrowingArray] = {}
        self.hints: dict[str, pg.TextItem] = {}
        for name, plot in self.plot_items().items():
            hint = self.hints[name] = pg.TextItem(EMPTY_HINT, color=theme.current().muted_text,
                                                  anchor=(0.5, 0.5))
            hint.setParentItem(plot.getViewBox())  # in the box's pixels: stays centred
            hint.textItem.document().setDefaultTextOption(QTextOption(Qt.AlignCenter))
            plot.getViewBox().sigResized.connect(lambda box, h=hint: place_hint(h, box))
        self.log_scale = QCheckBox("Log scale")
        self.layers_of = QComboBox()
        self.export = ExportButton(lambda: self.plots, "training curves", csv=self.export_csv)
        # a QLabel above the plots: text changing inside the plot layout would re-lay out
        # (and redraw the axes of) all six plots at every refresh
        self.summary = QLabel()
        self.summary.setProperty("role", "muted")
        self.summary.setWordWrap(True)  # the run's name and figures never widen the window
        # two lines' room from the start: a summary that wrapped to a second line as its
        # figures grew laid the plots out again, and redrew all their axes
        self.summary.setMinimumHeight(2 * self.summary.fontMetrics().lineSpacing())
        self.reader = CurveReader(self.plots, list(self.plot_items().values()),
                                  self.visible_series, self._smoothed_losses, self)
        self.reader.changed.connect(self._reading_changed)
        self._set_up_controls()
        self._lay_out()
        self._refresh_hints()
        self._fit_height()

    def _make_plots(self, ci: pg.GraphicsLayout) -> None:
        """Two rows of three plots; the two legends in one row above the first."""
        ci.setSpacing(4)
        self.loss_plot = styled_plot(live_plot(ci, 1, 0),
                                     "Loss (dashed: validation)", "cross-entropy")
        self.grad_plot = styled_plot(live_plot(ci, 1, 1), "Gradient norm (total)",
                                     "before clipping")
        self.layer_plot = styled_plot(live_plot(ci, 1, 2), "Gradient norm per layer")
        self.acc_plot = styled_plot(live_plot(ci, 2, 0), "Task accuracy (validation)",
                                    "answer tokens right")
        self.lr_plot = styled_plot(live_plot(ci, 2, 1), "Learning rate")
        self.speed_plot = styled_plot(live_plot(ci, 2, 2),
                                      "Throughput", f"tokens / s (mean of {SPEED_WINDOW} steps)")
        self.acc_plot.setYRange(0, 1)
        self.legend = legend_above(ci, self.loss_plot, 0, 0, columns=RUN_COLUMNS)
        self.layer_legend = legend_above(ci, self.layer_plot, 0, 1, columns=LAYER_COLUMNS,
                                         colspan=2)
        ci.layout.setRowStretchFactor(2, 1)
        for plot in (self.loss_plot, self.grad_plot, self.layer_plot):
            # the row below numbers and names the shared step axis (as matplotlib's sharex)
            plot.setLabel("bottom", "")
            plot.getAxis("bottom").setStyle(showValues=False)
        for plot in self.plot_items().values():
            plot.getViewBox().setMinimumHeight(MIN_DATA_HEIGHT)
        for plot in (self.acc_plot, self.lr_plot, self.grad_plot, self.layer_plot,
                     self.speed_plot):
            plot.setXLink(self.loss_plot)
            # these follow the loss plot's steps: fitting their own (validation points end at
            # other steps) moved the shared range back and forth at every refresh
            plot.enableAutoRange(x=False)

    def plot_items(self) -> dict[str, pg.PlotItem]:
        return {"loss": self.loss_plot, "acc": self.acc_plot, "lr": self.lr_plot,
                "grad": self.grad_plot, "layers": self.layer_plot, "speed": self.speed_plot}

    def _set_up_controls(self) -> None:
        self.log_scale.setToolTip("Loss on a logarithmic axis")
        self.log_scale.toggled.connect(self._set_log)
        self.layers_of.setMinimumContentsLength(16)
        self.layers_of.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.layers_of.setToolTip("Whose per-layer gradient norms to draw")
        self.layers_of.currentIndexChanged.connect(lambda _: self.refresh())

    def _lay_out(self) -> None:
        """One row of controls above the plots (beside the tab bar they pushed the last tab
        titles out of a 1366 px screen), the plots below, scrolling when the screen is short."""
        bar = QHBoxLayout()
        bar.setContentsMargins(2, 0, 6, 0)
        bar.addWidget(self.summary, 1)
        bar.addSpacing(8)
        bar.addWidget(self.reader.smoothing_label)
        bar.addWidget(self.reader.smoothing)
        bar.addSpacing(8)
        bar.addWidget(QLabel("x"))
        bar.addWidget(self.reader.x_axis)
        bar.addSpacing(8)
        bar.addWidget(self.log_scale)
        bar.addSpacing(8)
        bar.addWidget(QLabel("Layers of"))
        bar.addWidget(self.layers_of)
        bar.addWidget(self.export)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 2, 4, 2)
        column.setSpacing(2)
        column.addLayout(bar)
        column.addWidget(self.scroll, 1)
        self.reader.text.setParent(self.scroll)   # a box beside the pointer, over the plots
        self.reader.text.hide()
        self.plots.scene().sigMouseMoved.connect(self._pointer_moved)
        self.plots.installEventFilter(self)

    def _pointer_moved(self, scene_pos) -> None:
        at = self.plots.mapTo(self.scroll, self.plots.mapFromScene(scene_pos))
        self.reader.text.follow(at)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.plots and event.type() == QEvent.Leave:
            self.reader.text.hide()   # the box goes with the pointer
        return super().eventFilter(watched, event)

    # ------------------------------------------------------------------ runs
    def add_series(self, series: RunSeries) -> None:
        if any(e.series is series for e in self.entries):
            return
        entry = _Entry(series, self._colours)
        self._colours += 1
        c = entry.colour
        entry.curves = {
            "loss_raw": faint_curve(self.loss_plot, c),  # behind the smoothed curve
            "grad_raw": faint_curve(self.grad_plot, c),
            "loss": step_curve(self.loss_plot, c, series.name),
            "val": self.loss_plot.plot(pen=pen(c, 2, dashed=True), symbol="o", symbolSize=6,
                                       symbolBrush=c, symbolPen=None),
            "acc": self.acc_plot.plot(pen=pen(c, 2), symbol="o", symbolSize=5, symbolBrush=c,
                                      symbolPen=None),
            "lr": step_curve(self.lr_plot, c),
            "grad": step_curve(self.grad_plot, c),
            "speed": step_curve(self.speed_plot, c),
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
                "lr": self.lr_plot, "grad": self.grad_plot, "speed": self.speed_plot,
                "loss_raw": self.loss_plot, "grad_raw": self.grad_plot}[curve]

    def show_layers_of(self, series: RunSeries) -> None:
        """Draw the per-layer gradient norms of ``series`` (one of the added runs)."""
        for i, entry in enumerate(self.entries):
            if entry.series is series:
                self.layers_of.setCurrentIndex(i)

    def set_visible(self, series: RunSeries, visible: bool) -> None:
        for entry in self.entries:
            if entry.series is series:
                entry.visible = visible
                entry.drawn = entry.drawn_val = None
                for curve in entry.curves.values():
                    curve.setVisible(visible)
        self.refresh()

    def visible_series(self) -> list[RunSeries]:
        return [e.series for e in self.entries if e.visible]

    # ------------------------------------------------------------------ drawing
    def refresh(self) -> None:
        """Redraw from the series: only points added since the last redraw are converted, and
        pyqtgraph draws at most a few points per pixel of what is in view."""
        axis, weight = self.reader.axis, self.reader.weight
        for entry in self.entries:
            s, c = entry.series, entry.curves
            # a run that logged nothing new (a finished or reopened one) keeps its curves: a
            # 20,000-step run beside a live one would be converted and downsampled again
            drawn = (len(s.steps), axis, weight)
            drawn_val = (len(s.val_steps), axis)
            if not entry.visible:
                continue
            entry.hold_still(entry.drawn == drawn and entry.drawn_val == drawn_val)
            if entry.drawn_val != drawn_val:  # validations come every Evaluate-every steps
                entry.drawn_val = drawn_val
                c["val"].setData(x_of(s, s.val_steps, axis),
                                 np.asarray(s.val_loss, dtype=float))
                acc_steps, acc = accuracy_points(s.val_steps, s.accuracy)
                c["acc"].setData(x_of(s, acc_steps, axis), np.asarray(acc, dtype=float))
            if entry.drawn == drawn:
                continue
            entry.drawn = drawn
            x = entry.x(axis)
            for name, key in (("loss", "loss"), ("grad", "grad_norm")):
                raw = entry.array(key)
                if weight > 0:  # the smoothed curve in the run's colour, the raw one faint
                    c[name].setData(x, entry.smooth(key, weight))
                    c[name + "_raw"].setData(x, raw)
                else:
                    c[name].setData(x, raw)
                c[name + "_raw"].setVisible(weight > 0)
            c["lr"].setData(x, entry.array("lr"))
            c["speed"].setData(x, moving_average(entry.array("tokens_per_s")))
        self._refresh_layers()
        # while a run logs points the ranges hold still; once none does, each plot's is the one
        # its data decides
        growing = still_logging(self.visible_series())
        for plot in self.plot_items().values():
            plot.getViewBox().set_growing(growing)
        # a step axis runs from 0 to the run's last step; wall time has no known end
        self.loss_plot.getViewBox().final_step = step_axis_final(
            [s.total_steps for s in self.visible_series()], axis)
        self._refresh_hints()
        self._fit_height()

    def _fit_height(self) -> None:
        """As tall as the plots need (a legend row grows with the layers): a short screen
        scrolls instead of squashing or clipping them."""
        need = int(self.plots.ci.effectiveSizeHint(Qt.MinimumSize).height()) + 6
        if need != self.plots.minimumHeight():  # only when a legend grew: a relayout costs
            self.plots.setMinimumHeight(need)
        self._fit_width()
        # a legend that grew (a run's longer name) widens its column now, before the plots
        # fit their ranges to their widths and draw: laid out after, it redrew them all again
        self.plots.ci.layout.activate()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_width()

    def _fit_width(self) -> None:
        """The legends stack their entries onto more rows until the three columns of plots fit
        the view's width (the course dock open at 1366x768 leaves the plots 784 px: two runs'
        names side by side and six layers' pushed the third column out of view); plots still
        wider than the view scroll sideways rather than being cut."""
        width = self.scroll.viewport().width()
        fitted = (width, len(self.legend.items), len(self.layer_legend.items))
        if fitted == self._fitted_width:  # (a refresh that added no entry: nothing to do)
            return
        self._fitted_width = fitted

        def need(runs: int, layers: int) -> int:
            set_columns(self.legend, runs)
            set_columns(self.layer_legend, layers)
            return int(self.plots.ci.effectiveSizeHint(Qt.MinimumSize).width()) + 1

        columns = (self.legend.columnCount, self.layer_legend.columnCount)
        *_, least = legend_columns(need, width, (RUN_COLUMNS, LAYER_COLUMNS))
        self.plots.setMinimumWidth(least)
        if columns != (self.legend.columnCount, self.layer_legend.columnCount):
            # the plots laid out again at the view's size: a layout wider than the view keeps
            # its width until the view itself is resized (pyqtgraph sets it only then)
            self.plots.resizeEvent(None)

    def _refresh_hints(self) -> None:
        """Say why a plot is empty instead of showing bare axes."""
        shown = self.visible_series()
        for name, hint in self.hints.items():
            text = plot_hint(name, shown, bool(self._layer_curves))
            if hint.toPlainText() != text:  # a TextItem re-renders on every setText
                hint.setText(text)
                place_hint(hint, self.plot_items()[name].getViewBox())
            hint.setVisible(bool(text))

    def _refresh_layers(self) -> None:
        index = self.layers_of.currentIndex()
        series = self.entries[index].series if 0 <= index < len(self.entries) else None
        layers = dict(series.layer_grad_norms) if series is not None else {}
        colour = self.entries[index].colour if series is not None else series_colour(0)
        style = (id(series), colour.name(), len(layers))
        drawn = (style, len(series.steps) if series else 0, self.reader.axis)
        still = drawn == self._layers_drawn
        for curve in self._layer_curves.values():  # as a still run's curves (hold_still)
            curve.curve.setCacheMode(QGraphicsItem.DeviceCoordinateCache if still
                                     else QGraphicsItem.NoCache)
        if still:
            return
        restyle = self._layers_drawn is None or self._layers_drawn[0] != style
        self._layers_drawn = drawn
        for name in list(self._layer_curves):
            if name not in layers:
                curve = self._layer_curves.pop(name)
                self.layer_plot.removeItem(curve)
                self.layer_legend.removeItem(curve)
        for i, (name, values) in enumerate(layers.items()):  # model order, as the trainer lists
            curve = self._layer_curves.get(name)
            if curve is None:
                curve = self._layer_curves[name] = step_curve(self.layer_plot, colour, name)
                restyle = True
            if restyle:
                # the run's colour (as in every other plot), one line style per layer; past
                # five layers the styles repeat, thinner
                curve.setPen(pen(colour, layer_line(i, STEP_LINE)[1], style=layer_style(i)))
            steps, values = self._layer_arrays(series, name, values)
            n = min(len(values), len(steps))
            x = steps if self.reader.axis == STEP else x_of(series, steps[:n], WALL)
            curve.setData(x[:n], values[:n])

    def _layer_arrays(self, series: RunSeries, name: str, values: list
                      ) -> tuple[np.ndarray, np.ndarray]:
        """Incremental arrays of one layer's norms (reset when another run is chosen)."""
        if self._layers_series is not series:
            self._layers_series = series
            self._layer_cache = {}
        steps = self._layer_cache.setdefault("", GrowingArray()).sync(series.steps)
        return steps, self._layer_cache.setdefault(name, GrowingArray()).sync(values)

    def _smoothed_losses(self) -> dict[str, np.ndarray]:
        """Each shown run's smoothed loss as drawn, by run name (for the readout)."""
        weight = self.reader.weight
        return {e.series.name: e.smooth("loss", weight) for e in self.entries if e.visible}

    def _reading_changed(self) -> None:
        """The smoothing or the x-axis moved: relabel the x-axis and redraw everything."""
        label = X_LABELS[self.reader.axis]
        for plot in (self.acc_plot, self.lr_plot, self.speed_plot):
            plot.setLabel("bottom", label, color=theme.current().muted_text)
            # centred again for its new text (pyqtgraph centres a label only on a resize: the
            # wall-time title stood where "step" was centred, past the third column's edge)
            plot.getAxis("bottom").resizeEvent()
        self.refresh()
        if self.entries:
            self.loss_plot.enableAutoRange(x=True)  # the old axis's range means nothing now

    def set_summary(self, text: str, tooltip: str = "") -> None:
        """The header above the plots: the viewed run's name and newest figures (the panel
        writes it with the progress line, from one string, so the two never disagree)."""
        if self.summary.text() != text:
            self.summary.setText(text)
        self.summary.setToolTip(tooltip)

    def _set_log(self, on: bool) -> None:
        self.loss_plot.setLogMode(y=on)
        title, levels = loss_axis(on)
        self.loss_plot.getAxis("left").setStyle(maxTextLevel=levels)
        self.loss_plot.setLabel("left", title)

    # ------------------------------------------------------------------ export
    def export_csv(self, path: str) -> None:
        series = self.visible_series()
        if not series:
            raise ValueError("no curves to export yet; train or open a run first")
        write_csv(series, path)



def faint_curve(plot: pg.PlotItem, colour) -> pg.PlotDataItem:
    """A step curve in ``colour`` drawn faint: the raw values behind their smoothed curve."""
    return plot.plot(pen=pen(colour, STEP_LINE, alpha=RAW_ALPHA), autoDownsampleFactor=1.5)


def place_hint(hint: pg.TextItem, box: pg.ViewBox) -> None:
    """Centre ``hint`` in ``box``, its lines wrapped to the box's width (a plot is ~320 px
    wide in the Train workspace at 1366x768)."""
    hint.setTextWidth(max(60.0, box.width() - 24))
    hint.setPos(box.width() / 2, box.height() / 2)
