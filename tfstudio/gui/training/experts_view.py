"""Inside a mixture of experts: the share of tokens each expert received, per MoE layer over
training (a balanced router gives every expert top_k / experts), and the probe text coloured by
the expert each token was sent to first."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .colours import series_colour
from .experts_lines import (NO_MOE, balanced_share, before_training, coloured_tokens_html,
                            expert_count, expert_layers, first_choices, look_caption,
                            routed_tokens)
from .kept_choice import kept_choice
from .labels import muted, placeholder
from .picture_export import ExportButton
from .plots import STEP_LINE, layout_widget, legend_above, live_plot, pen, styled_plot
from .series import RunSeries, still_logging


class ExpertsView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.series: RunSeries | None = None
        self.snapshot: dict | None = None
        self.layer = QComboBox()
        self.layer.setMinimumContentsLength(14)
        self.layer.currentIndexChanged.connect(lambda _: self.redraw())
        self.plots = layout_widget()
        self.load_plot = styled_plot(live_plot(self.plots.ci, 1, 0),
                                     "Expert load over training", "share of tokens")
        self.load_plot.setYRange(0, 1)  # a share: its whole scale, the balanced line in place
        self.load_legend = legend_above(self.plots.ci, self.load_plot, 0, 0, columns=8)
        self.balanced = None
        self.tokens = QLabel()
        self.tokens.setWordWrap(True)
        self.tokens.setTextFormat(Qt.RichText)
        self.caption = muted()
        self.empty = placeholder(NO_MOE)
        self.export = ExportButton(lambda: self.body, "expert view")
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.plots, 1)
        body.addWidget(QLabel("Probe text, each token coloured by its first-choice expert:"))
        body.addWidget(self.tokens)
        body.addWidget(self.caption)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("MoE layer"))
        bar.addWidget(self.layer)
        bar.addStretch(1)
        bar.addWidget(self.export)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addLayout(bar)
        column.addWidget(self.body, 1)
        column.addWidget(self.empty, 1)
        self._curves: list = []
        self.redraw()

    def set_graph(self, graph) -> None:
        """Before any run: say whether the graph on the canvas has experts to show."""
        self.empty.setText(before_training(graph))

    def set_series(self, series: RunSeries | None) -> None:
        self.series = series
        self._fill_layers()
        self.redraw()

    def show_snapshot(self, snapshot: dict | None) -> None:
        self.snapshot = snapshot
        self._fill_layers()
        self.redraw()

    def _layers(self) -> list[str]:
        return expert_layers((self.snapshot or {}).get("experts") or {},
                             self.series.expert_load if self.series else {})

    def _fill_layers(self) -> None:
        names = self._layers()
        current = self.layer.currentText()
        if [self.layer.itemText(i) for i in range(self.layer.count())] == names:
            return
        self.layer.blockSignals(True)
        self.layer.clear()
        self.layer.addItems(names)
        if names:
            self.layer.setCurrentText(kept_choice(current, names))
        self.layer.blockSignals(False)

    def redraw(self) -> None:
        layer = self.layer.currentText()
        has = bool(layer)
        self.body.setVisible(has)
        self.empty.setVisible(not has)
        self.export.setEnabled(has)
        if not has:
            return
        for curve in self._curves:
            self.load_plot.removeItem(curve)
            self.load_legend.removeItem(curve)
        self._curves = []
        loads = np.asarray(self.series.expert_load.get(layer, []) if self.series else [],
                           dtype=float)
        routing = ((self.snapshot or {}).get("experts") or {}).get(layer)
        experts = expert_count(loads, routing)
        if loads.ndim == 2 and loads.size:
            steps = np.asarray(self.series.router_steps[:len(loads)], dtype=float)
            box = self.load_plot.getViewBox()
            box.final_step = self.series.total_steps
            box.set_growing(still_logging([self.series]))  # ended: the range its data decides
            for e in range(experts):
                self._curves.append(self.load_plot.plot(steps, loads[:, e],
                                                        pen=pen(series_colour(e), STEP_LINE),
                                                        name=f"expert {e}"))
            even = balanced_share(loads[-1], experts)
            self._curves.append(self.load_plot.plot(steps[[0, -1]], [even, even],
                                                    pen=pen("#888888", 1, dashed=True),
                                                    name="balanced"))
        if routing:
            stream = routed_tokens(self.snapshot.get("tokens") or {})
            first = first_choices(routing)
            self.tokens.setText(coloured_tokens_html(stream[:len(first)], first))
            self.caption.setText(look_caption(first, experts, self.snapshot.get("step", 0)))
        else:
            self.tokens.setText("")
            self.caption.setText(look_caption(None, experts, 0))
