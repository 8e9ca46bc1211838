"""What the Compare view shows of a comparison: the loss of every variant and seed as it trains,
then the lesson's verdict and sentences, the report's table and its plots (loss curves with the
n-gram baselines, and one picked among loss against position, parameters, KV-cache bytes and
gradient norms). Every number comes from the experiments package (``compare_job.Shown``), the
same the page ``report.html`` is written from; a plot with nothing to draw says why."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSplitter, QStackedWidget, QTableWidget,
                               QTableWidgetItem, QTabWidget, QTextBrowser, QVBoxLayout, QWidget)

from .. import theme
from ..report_plots import drawn_points, grad_norm_layers
from .colours import series_colour
from .compare_job import Shown
from .compare_lines import (intro_html, legend_name, log_floored, loss_hint, run_name,
                            seed_entries, steps_done, table_cells, two_lines, verdict_html)
from .curves_view import place_hint
from .plots import (layer_style, layout_widget, legend_above, live_plot, menu_later_plot, pen,
                    styled_plot, title_html)

LOSS = "Loss during training"
LOSS_HINT = ("Each variant's loss appears here while it trains, one line per seed: tick the "
             "values to compare (or pick a lesson), then Run.")
# the report's other plots: the x axis of each, and why it is empty when it is
OTHER_PLOTS = {
    "Loss against position": (
        "position", "Loss against position is measured after training when Eval lengths are "
        "given (on text corpora; a task has no token stream). The positions lesson sets them."),
    "Validation loss against parameters": (
        "parameters", "Each variant's final validation loss against its parameter count "
        "appears when its runs finish."),
    "Validation loss against KV-cache bytes": (
        "KV-cache bytes at context", "Drawn when the variants' KV caches differ in size (the "
        "attention lesson: MHA, GQA, MQA), after their runs finish."),
    "Gradient norm per layer": (
        "step", "Each layer's gradient norm over training appears when the runs finish."),
}


class CompareResults(QWidget):
    open_requested = Signal(str, str)   # a variant's run folder and its name in Runs

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.shown: Shown | None = None
        self._curves: dict[tuple[str, int], pg.PlotDataItem] = {}
        self._points: dict[tuple[str, int], list[tuple[int, float]]] = {}
        self._colours: dict[str, int] = {}
        self.tabs = QTabWidget()
        # one plot at a time, the whole width each: the loss (live), or one of OTHER_PLOTS
        self.loss_plots, self.other_plots = layout_widget(), layout_widget()
        self.loss_plot = styled_plot(live_plot(self.loss_plots.ci, 1, 0), "Loss", "loss")
        self.other_plot = styled_plot(menu_later_plot(self.other_plots, row=1, col=0), "", "loss")
        legend_above(self.loss_plots.ci, self.loss_plot, 0, 0, columns=2)
        legend_above(self.other_plots.ci, self.other_plot, 0, 0, columns=2)
        self.other_plot.getViewBox().setDefaultPadding(0.08)  # points off the frame
        self.plots = QStackedWidget()
        self.plots.addWidget(self.loss_plots)
        self.plots.addWidget(self.other_plots)
        self.plot_choice = QComboBox()
        self.plot_choice.addItems([LOSS, *OTHER_PLOTS])
        self.hints = {name: self._hint(plot) for name, plot in
                      (("loss", self.loss_plot), ("other", self.other_plot))}
        self.verdict = QTextBrowser()
        self.verdict.setOpenExternalLinks(False)
        self.table = QTableWidget(0, 0)
        self.seed = QComboBox()
        self.open_button = QPushButton("Open this variant")
        self.open_button.setToolTip("its graph on the canvas and its run in Runs, so Attention, "
                                    "Positions and Explain look inside it")
        self._build()
        self.reset([], 0, "")

    def _build(self) -> None:
        plots_page = QWidget()
        column = QVBoxLayout(plots_page)
        column.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Plot:"))
        row.addWidget(self.plot_choice)
        row.addStretch(1)
        column.addLayout(row)
        column.addWidget(self.plots, 1)
        verdict_page = QWidget()
        column = QVBoxLayout(verdict_page)
        column.setContentsMargins(0, 4, 0, 0)
        split = QSplitter(Qt.Vertical)  # the reader drags the line between the two
        split.addWidget(self.verdict)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        column.addWidget(split, 1)
        row = QHBoxLayout()
        row.addWidget(QLabel("Seed"))
        row.addWidget(self.seed)
        row.addWidget(self.open_button)
        row.addStretch(1)
        column.addLayout(row)
        self.tabs.addTab(plots_page, "Plots")
        self.tabs.addTab(verdict_page, "Verdict and table")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.itemSelectionChanged.connect(self._variant_picked)
        self.plot_choice.currentTextChanged.connect(lambda _: self._draw_choice())
        self.plot_choice.setToolTip("the loss while it trains; afterwards the report's other plots")
        self.open_button.clicked.connect(self._open)

    def _hint(self, plot: pg.PlotItem) -> pg.TextItem:
        hint = pg.TextItem("", color=theme.current().muted_text, anchor=(0.5, 0.5))
        hint.setParentItem(plot.getViewBox())  # in the box's pixels: stays centred
        hint.textItem.document().setDefaultTextOption(QTextOption(Qt.AlignCenter))
        plot.getViewBox().sigResized.connect(lambda box, h=hint: place_hint(h, box))
        return hint

    def _set_hint(self, name: str, text: str) -> None:
        self.hints[name].setPlainText(text)
        self.hints[name].setVisible(bool(text))
        place_hint(self.hints[name], self.hints[name].parentItem())

    # ------------------------------------------------------------------ while training
    def reset(self, variants: list[str], final_step: int, intro: str) -> None:
        """Empty plots and table for a comparison of ``variants``; ``intro`` (a lesson's claim)
        stands where the verdict will."""
        self.shown = None
        self.loss_plot.clear()
        self.loss_plot.setTitle(title_html("Loss of each run (training)"),
                                color=theme.current().text)
        self.loss_plot.getViewBox().final_step = final_step
        self.loss_plot.getViewBox().set_growing(True)  # held steady while the runs log steps
        self._curves, self._points = {}, {}
        self._colours = {name: i for i, name in enumerate(variants)}
        self._set_hint("loss", LOSS_HINT)
        self.plot_choice.setCurrentText(LOSS)   # the run's loss, live
        self._draw_choice()
        self.verdict.setHtml(intro_html(intro))
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.seed.clear()
        self.open_button.setEnabled(False)

    def add_step(self, variant: str, seed: int, step: int, loss: float) -> None:
        key = (variant, seed)
        if key not in self._curves:
            index = self._colours.setdefault(variant, len(self._colours))
            self._curves[key] = self.loss_plot.plot([], [], pen=pen(series_colour(index), 1.5),
                                                    name=legend_name(variant, self._curves))
            self._points[key] = []
            self._set_hint("loss", "")
        self._points[key].append((step, loss))

    def steps_done(self) -> int:
        """Steps trained so far over every run drawn (each run's last logged step)."""
        return steps_done(self._points)

    def redraw(self) -> None:
        """Put the steps added since the last redraw on the curves."""
        for key, points in self._points.items():
            steps, losses = zip(*points)
            self._curves[key].setData(list(steps), list(losses))

    # ------------------------------------------------------------------ finished
    def ended(self) -> None:
        """No run logs a step any more (finished or stopped): the loss plot's range is the one
        its data decides, whatever the redraws on the way left."""
        self.loss_plot.getViewBox().set_growing(False)

    def show(self, shown: Shown) -> None:
        self.shown = shown
        self._show_verdict(shown)
        self._show_table(shown)
        self._draw_loss(shown.plots)
        self.ended()
        self._draw_choice()
        self.tabs.setCurrentIndex(1)

    def verdict_text(self) -> str:
        return self.verdict.toPlainText()

    def _show_verdict(self, shown: Shown) -> None:
        self.verdict.setHtml(verdict_html(shown))

    def _show_table(self, shown: Shown) -> None:
        self.table.clear()
        self.table.setColumnCount(len(shown.header))
        self.table.setHorizontalHeaderLabels([two_lines(h) for h in shown.header])
        self.table.setRowCount(len(shown.rows))
        for r, row in enumerate(table_cells(shown)):
            for c, (text, tip) in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                self.table.setItem(r, c, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        if shown.rows:
            self.table.selectRow(0)

    def _variant_picked(self) -> None:
        rows = self.table.selectionModel().selectedRows() if self.shown else []
        self.seed.clear()
        if rows:
            name = self.table.item(rows[0].row(), 0).text()
            for label, data in seed_entries(self.shown, name):
                self.seed.addItem(label, data)
        self.open_button.setEnabled(self.seed.count() > 0)

    def _open(self) -> None:
        data = self.seed.currentData()
        if data is not None:
            name, seed, run_dir = data
            self.open_requested.emit(run_dir, run_name(name, seed))

    def _draw_loss(self, data: dict) -> None:
        """The report's loss plot: each variant's training loss averaged over its seeds (thin)
        and validation loss (thick, dots), the n-gram counters dashed."""
        self.loss_plot.clear()
        self.loss_plot.setTitle(title_html("Loss: training (thin) and validation (dots), "
                                           "mean over seeds"), color=theme.current().text)
        for i, (name, series) in enumerate(data["curves"].items()):
            colour = series_colour(i)
            if series["train"]:
                steps, losses = zip(*series["train"])
                self.loss_plot.plot(list(steps), list(losses), pen=pen(colour, 1.0, alpha=150))
            if series["val"]:
                steps, losses = zip(*series["val"])
                self.loss_plot.plot(list(steps), list(losses), pen=pen(colour, 2.5),
                                    symbol="o", symbolSize=5, symbolBrush=colour,
                                    symbolPen=None, name=name)
        for name, value in data["baselines"].items():  # labelled on the line: the legend
            self.loss_plot.addItem(pg.InfiniteLine(   # keeps to the variants
                value, angle=0, pen=pen("#777777", 1.2, dashed=True),
                label=f"{name} counts {value:.2f}",
                labelOpts={"position": 0.85, "color": theme.current().muted_text}))
        self._set_hint("loss", loss_hint(data["curves"]))

    def _draw_choice(self) -> None:
        name = self.plot_choice.currentText()
        self.plots.setCurrentWidget(self.loss_plots if name == LOSS else self.other_plots)
        if name == LOSS:
            return
        x_label, hint = OTHER_PLOTS[name]
        plot = self.other_plot
        plot.clear()
        plot.setLogMode(y=False)
        plot.setTitle(title_html(name), color=theme.current().text)
        plot.setLabel("bottom", x_label)
        data = self.shown.plots if self.shown is not None else None
        drawn = data is not None and {
            "Loss against position": self._positions,
            "Validation loss against parameters": lambda d: self._points_at(d, "params"),
            "Validation loss against KV-cache bytes": lambda d: self._points_at(d, "kv_bytes"),
            "Gradient norm per layer": self._grad_norms}[name](data)
        self._set_hint("other", "" if drawn else hint)

    def _positions(self, data: dict) -> bool:
        for i, (name, curve) in enumerate(data["positions"].items()):
            self.other_plot.plot(list(range(len(curve))), curve, pen=pen(series_colour(i)),
                                  name=name)
        if data["positions"]:
            self.other_plot.addItem(pg.InfiniteLine(
                data["train_length"], angle=90, pen=pen("#888888", 1.5, dashed=True),
                label=f"trained length {data['train_length']}",
                labelOpts={"position": 0.92, "color": theme.current().text}))
        return bool(data["positions"])

    def _points_at(self, data: dict, x: str) -> bool:
        points = drawn_points(data["params"], x)
        if points is None:
            return False
        for p in points:
            colour = series_colour(self._colours.get(p["name"], 0))
            self.other_plot.plot([p[x]], [p["loss"]], pen=None, symbol="o", symbolSize=10,
                                  symbolBrush=colour, symbolPen=None, name=p["name"])
            if p["spread"]:
                self.other_plot.addItem(pg.ErrorBarItem(
                    x=np.array([float(p[x])]), y=np.array([p["loss"]]),
                    height=np.array([2 * p["spread"]]), beam=0, pen=pen(colour)))
        self.other_plot.setLabel("left", "final validation loss")
        return bool(points)

    def _grad_norms(self, data: dict) -> bool:
        layers = grad_norm_layers(data["grad_norms"])
        if not layers:
            return False
        self.other_plot.setLogMode(y=True)
        self.other_plot.setLabel("left", "gradient norm, first seed (line style: layer)")
        for v, (name, series) in enumerate(data["grad_norms"].items()):
            for k, layer in enumerate(layers):
                if series.get(layer):
                    steps, values = zip(*series[layer])
                    self.other_plot.plot(
                        list(steps), log_floored(values),
                        pen=pen(series_colour(v), 1.5, style=layer_style(k)),
                        name=f"{name}" if k == 0 else None)
        return True
