"""Positional encodings of the graph, drawn from the model's own tensors (tfstudio.probes):

- sinusoidal and learned tables: waveforms of a few dimensions over positions, the position x
  dimension table, and the similarity p_i . p_j of every pair of positions;
- RoPE: the rotation rate of each feature pair, the score of two rotated vectors against their
  offset, and the same score for every pair of positions (constant along each diagonal);
- ALiBi: the bias each head adds to its attention scores, masked cells hatched.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from .colours import series_colour
from .labels import muted, placeholder
from .picture_export import ExportButton
from .heatmap import Heatmap, HeatmapGrid
from .plots import (STEP_LINE, layout_widget, legend_above, menu_later_plot, pen, styled_plot,
                    title_html)
from .positions_math import (alibi_titles, drawn_already, drawn_rows, nothing_to_draw_text,
                             page_for, rope_title, scheme_choice, similarity_title, table_title,
                             trained_rows, waveform_bound, waveform_dims, waveform_title)

class _TablePage(QWidget):
    """Sinusoidal or learned: waveforms, the table, the similarity matrix."""

    def __init__(self):
        super().__init__()
        self.plots = layout_widget()
        self.wave_plot = styled_plot(menu_later_plot(self.plots.ci, row=1, col=0),
                                     "Waveforms per dimension", "value", "position")
        self.wave_legend = legend_above(self.plots.ci, self.wave_plot, 0, 0, columns=3)
        self.table = Heatmap(kind="diverging", square=False)
        self.similarity = Heatmap(kind="diverging")
        grid = QGridLayout(self)  # the waveforms get the full height; the two maps share it
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.plots, 0, 0, 2, 1)
        grid.addWidget(self.table, 0, 1)
        grid.addWidget(self.similarity, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self._curves: list = []
        self._dims: list[int] = []
        self._bound = 0.0  # the waveforms' y range, +-bound
        # where training stopped reaching the rows of a learned table (shown with all rows)
        self.trained_end = pg.InfiniteLine(angle=90, pen=pg.mkPen("#c2410c", width=1.5,
                                                                  style=Qt.DashLine),
                                           label="untrained →", labelOpts={"position": 0.95})
        self.trained_end.hide()
        self.wave_plot.addItem(self.trained_end, ignoreBounds=True)

    def _mark_trained_end(self, at: float | None) -> None:
        self.trained_end.setVisible(at is not None)
        if at is not None:
            self.trained_end.setValue(at)

    def display(self, scheme: str, data: dict, trained: int | None = None,
                all_rows: bool = False) -> None:
        """``trained``: the rows a learned table was trained on (the run's sequence length);
        the rows past it never reached a batch and keep their random start, so they are left
        out unless ``all_rows``, and then marked."""
        table = np.asarray(data["table"], dtype=float)
        trained = trained_rows(scheme, len(table), trained)
        rows, trained_end = drawn_rows(len(table), trained, all_rows)
        table = table[:rows]
        positions = np.arange(table.shape[0])
        dims = waveform_dims(table.shape[1])
        if len(self._curves) != len(dims) or self._dims != dims:  # a new table: new curves
            for curve in self._curves:
                self.wave_plot.removeItem(curve)
                self.wave_legend.removeItem(curve)
            self._curves = [self.wave_plot.plot(pen=pen(series_colour(i), STEP_LINE),
                                                name=f"dim {dim}")
                            for i, dim in enumerate(dims)]
            self._dims = dims
        for curve, dim in zip(self._curves, dims):  # the same table as it trains: new data
            curve.setData(positions, table[:, dim])
        # a symmetric range at a round bound, changed only when the values pass it: the axis is
        # not laid out and painted again at every look at a learned table as it trains
        bound = waveform_bound(float(np.abs(table[:, dims]).max()) if dims and table.size
                               else 0.0)
        if bound != self._bound:
            self._bound = bound
            self.wave_plot.setYRange(-bound, bound, padding=0.02)
        title = title_html(waveform_title(scheme))
        if self.wave_plot.titleLabel.text != title:  # a new title re-lays out the plot
            self.wave_plot.setTitle(title)
        self._mark_trained_end(trained_end)
        self.table.set_data(table, title=table_title(scheme, table.shape, len(data["table"]),
                                                     trained, all_rows))
        similarity = np.asarray(data["similarity"], dtype=float)
        self.similarity.set_data(similarity, title=similarity_title(len(similarity)))


class _RopePage(QWidget):
    def __init__(self):
        super().__init__()
        self.plots = layout_widget()
        self.freq_plot = styled_plot(menu_later_plot(self.plots.ci, row=0, col=0),
                                     "Rotation per position of each feature pair",
                                     "radians / position (log scale)", "pair k")
        self.freq_plot.setLogMode(y=True)
        self.freq_plot.getAxis("left").setStyle(maxTextLevel=1)  # decade labels, no crowding
        self.score_plot = styled_plot(menu_later_plot(self.plots.ci, row=0, col=1),
                                      "Score vs offset", "q_m · k_n / d (all-ones q, k)",
                                      "offset m − n")
        self.freq_curve = self.freq_plot.plot(pen=pen(series_colour(0), STEP_LINE), symbol="o",
                                              symbolSize=5, symbolBrush=series_colour(0))
        self.score_curve = self.score_plot.plot(pen=pen(series_colour(1), STEP_LINE))
        self.similarity = Heatmap(kind="diverging")
        grid = QGridLayout(self)  # side by side: every plot gets the full height
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.plots, 0, 0)
        grid.addWidget(self.similarity, 0, 1)
        grid.setColumnStretch(0, 2)
        grid.setColumnStretch(1, 1)

    def display(self, scheme: str, data: dict) -> None:
        freqs = np.asarray(data["frequencies"], dtype=float)  # new data, the same curves
        self.freq_curve.setData(np.arange(len(freqs)), freqs)
        self.score_curve.setData(np.asarray(data["offsets"], dtype=float),
                                 np.asarray(data["scores"], dtype=float))
        self.similarity.set_data(np.asarray(data["similarity"], dtype=float),
                                 title=rope_title(data["base"], data["scaling"]))


class _AlibiPage(QWidget):
    def __init__(self):
        super().__init__()
        self.grid = HeatmapGrid(kind="negative")  # a bias that is never positive
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.caption = muted()
        column.addWidget(self.caption)
        column.addWidget(self.grid, 1)

    def display(self, scheme: str, data: dict) -> None:
        bias = np.asarray(data["bias"], dtype=float)
        slopes = np.asarray(data["slopes"], dtype=float)
        self.grid.set_data(list(bias), alibi_titles(slopes), shared_range=True)
        self.caption.setText("Each head adds −slope × distance to its attention scores: a "
                             "steep head looks close by, a gentle one far. Never positive: "
                             "white is 0 (no penalty), dark the most negative bias of all "
                             "heads. Rows: query position, columns: key position; hatched: "
                             "masked.")


class PositionsView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.data: dict = {}
        self.scheme = QComboBox()
        self.scheme.setToolTip("This graph encodes positions in more than one way: pick one")
        self.scheme_label = QLabel("Scheme")
        self.scheme.setVisible(False)
        self.scheme_label.setVisible(False)
        self.scheme.currentIndexChanged.connect(lambda _: self.redraw())
        self.source = muted()
        self.trained: int | None = None  # the rows a learned table was trained on
        self.all_rows = QCheckBox("Rows past the sequence length")
        self.all_rows.setToolTip("A learned table has rows past the run's sequence length that "
                                 "no batch ever reached: they keep their random start. Shown "
                                 "only on request: the waveforms mark where they begin with a "
                                 "dashed line, the table's title names the first of them")
        self.all_rows.hide()
        self.all_rows.toggled.connect(lambda _: self.redraw())
        self.pages = {"table": _TablePage(), "rope": _RopePage(), "alibi": _AlibiPage()}
        self.empty = placeholder("The positional encodings of the graph appear here.")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        for page in self.pages.values():
            self.stack.addWidget(page)
        self.export = ExportButton(lambda: self.stack.currentWidget(), "positions view")
        bar = QHBoxLayout()
        bar.addWidget(self.scheme_label)
        bar.addWidget(self.scheme)
        bar.addWidget(self.source, 1)
        bar.addWidget(self.all_rows)
        bar.addWidget(self.export)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addLayout(bar)
        column.addWidget(self.stack, 1)

    def show_positions(self, positions: dict | None, source: str = "",
                       trained: int | None = None) -> None:
        """``positions``: a snapshot's "positions" entry ({scheme: data}); ``trained``: the
        run's sequence length (None: an untrained graph). Tensors equal to those shown are
        not drawn again: sinusoidal, RoPE and ALiBi do not change as a model trains (a learned
        table does)."""
        positions = positions or {}
        unchanged = drawn_already(self.data, positions, self.trained, trained)
        self.data = positions
        self.trained = trained
        self.source.setText(source)
        if unchanged:
            return
        current = self.scheme.currentText()
        self.scheme.blockSignals(True)
        self.scheme.clear()
        for scheme in self.data:
            self.scheme.addItem(scheme)
        chosen, several = scheme_choice(list(self.data), current)
        if chosen is not None:
            self.scheme.setCurrentText(chosen)
        self.scheme.blockSignals(False)
        self.scheme.setVisible(several)
        self.scheme_label.setVisible(several)
        self.redraw()

    def show_unavailable(self, reason: str) -> None:
        """One message, and no contradicting second one (the graph cannot be built yet)."""
        self.data = {}
        self.all_rows.hide()
        self.scheme.clear()
        self.scheme.setVisible(False)
        self.scheme_label.setVisible(False)
        self.source.setText("")
        self.empty.setText(reason)
        self.stack.setCurrentWidget(self.empty)

    def redraw(self) -> None:
        scheme = self.scheme.currentText()
        if scheme not in self.data:
            self.all_rows.hide()
            self.stack.setCurrentWidget(self.empty)
            text = nothing_to_draw_text(self.source.text())
            if text is not None:
                self.empty.setText(text)
            return
        page = self.pages[page_for(scheme)]
        rows = len(self.data[scheme].get("table", ()))
        self.all_rows.setVisible(trained_rows(scheme, rows, self.trained) is not None)
        if page is self.pages["table"]:
            page.display(scheme, self.data[scheme], self.trained, self.all_rows.isChecked())
        else:
            page.display(scheme, self.data[scheme])
        self.stack.setCurrentWidget(page)
