"""The comparison report's pictures, drawn with pyqtgraph off screen and saved as PNG.

The report's numbers come from ``tfstudio.experiments`` as plain data (no Qt there); this module
only draws them: loss curves of every variant overlaid with the n-gram baselines as horizontal
lines, validation loss against parameters, loss against position with the training length
marked, and per-layer gradient norms. Light background and dark text, to read on a page.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")
BASELINE_COLOUR = "#555555"
WIDTH, HEIGHT = 1000, 560
SMOOTHING = 8  # positions averaged in the loss-against-position curve
FLOOR = 1e-7   # smaller gradients (0 included) are drawn at this floor of the log axis
LINE_STYLES = ("solid", "dashed", "dotted", "dash-dotted")  # one per variant, in order


def _app():
    """A QApplication to draw with; off screen unless one already runs (the GUI's)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    pg.setConfigOptions(antialias=True, background="w", foreground="#222222")
    return pg.mkQApp()


class _Figure:
    """A plot with its legend in a column of its own to the right, so the legend never hides
    a curve; ``add`` draws a named item into both."""

    def __init__(self, title: str, x_label: str, y_label: str):
        import pyqtgraph as pg
        from PySide6.QtGui import QFont

        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground("w")
        self.widget.resize(WIDTH, HEIGHT)
        self.plot = self.widget.addPlot(row=0, col=0, rowspan=2)
        self.plot.setTitle(f"<span style='font-size:13pt;color:#222'>{title}</span>")
        font = QFont()
        font.setPixelSize(13)
        for side, label in (("left", y_label), ("bottom", x_label)):
            axis = self.plot.getAxis(side)
            axis.setTickFont(font)
            axis.setTextPen("#333333")
            axis.setPen("#888888")
            axis.enableAutoSIPrefix(False)
            self.plot.setLabel(side, f"<span style='font-size:12pt;color:#333'>{label}</span>")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.legend = pg.LegendItem(labelTextColor="#222222", labelTextSize="11pt")
        self.widget.addItem(self.legend, row=0, col=1)
        # the legend keeps its own size at the top right; the plot takes the rest
        grid = self.widget.ci.layout
        grid.setColumnStretchFactor(0, 10)
        grid.setColumnStretchFactor(1, 0)
        grid.setRowStretchFactor(0, 0)
        grid.setRowStretchFactor(1, 10)

    def add(self, item, name: str | None = None):
        self.plot.addItem(item)
        if name:
            self.legend.addItem(item, name)
        return item

    def line(self, xs, ys, name: str | None = None, **style):
        import pyqtgraph as pg
        return self.add(pg.PlotDataItem(list(xs), list(ys), **style), name)

    def export(self, path: Path) -> Path:
        import pyqtgraph.exporters as exporters
        from PySide6.QtWidgets import QApplication

        from PySide6.QtCore import QRectF

        # never shown, so the layout is given its size by hand before it is drawn
        self.widget.ci.setGeometry(QRectF(0, 0, WIDTH, HEIGHT))
        QApplication.processEvents()
        path.parent.mkdir(parents=True, exist_ok=True)
        exporter = exporters.ImageExporter(self.widget.ci)
        exporter.parameters()["width"] = WIDTH
        exporter.export(str(path))
        # let pyqtgraph's queued updates run while the items still exist, then drop the widget
        QApplication.processEvents()
        self.widget.close()
        return path


def _pen(colour: str, width: float = 2.5, dashed: bool | str = False):
    """``dashed``: True for dashes, or one of LINE_STYLES."""
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    style = {"solid": Qt.SolidLine, "dashed": Qt.DashLine, "dotted": Qt.DotLine,
             "dash-dotted": Qt.DashDotLine}["dashed" if dashed is True else dashed or "solid"]
    return pg.mkPen(colour, width=width, style=style)


def loss_curves(path: Path, curves: dict, baselines: dict[str, float]) -> Path:
    """Training loss (thin) and validation loss (thick, dots) per variant; baselines dashed."""
    _app()
    fig = _Figure("Loss during training", "step", "loss (nats/token)")
    last_step, highest = 1, 0.0
    for i, (name, series) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        if series["train"]:
            steps, losses = zip(*series["train"])
            fig.line(steps, _smooth(list(losses), 10), pen=_pen(colour, 1.2))
            last_step = max(last_step, steps[-1])
            highest = max(highest, sorted(losses)[int(0.95 * (len(losses) - 1))])
        if series["val"]:
            steps, losses = zip(*series["val"])
            fig.line(steps, losses, name, pen=_pen(colour, 3), symbol="o", symbolSize=6,
                     symbolBrush=colour, symbolPen=None)
    for name, value in baselines.items():
        fig.line([0, last_step], [value, value], f"{name} counts: {value:.2f}",
                 pen=_pen(BASELINE_COLOUR, 1.5, dashed=True))
    if highest:  # the first steps' loss (ln V) would flatten everything else
        top = max(highest, *baselines.values()) if baselines else highest
        fig.plot.setYRange(0, top * 1.08, padding=0)
    return fig.export(path)


def loss_vs_params(path: Path, points: list[dict], x: str = "params",
                   labels: tuple[str, str] = ("Validation loss against size", "parameters")
                   ) -> Path:
    """Final validation loss (mean over seeds, bar: spread) against ``points``' ``x`` (the
    parameter count, or the KV cache's bytes)."""
    import pyqtgraph as pg
    _app()
    points = [{**p, "params": p[x]} for p in points]
    fig = _Figure(labels[0], labels[1], "final validation loss")
    for i, p in enumerate(points):
        colour = COLOURS[i % len(COLOURS)]
        fig.line([p["params"]], [p["loss"]], p["name"], pen=None, symbol="o", symbolSize=12,
                 symbolBrush=colour, symbolPen=None)
        if p["spread"]:
            fig.add(pg.ErrorBarItem(x=np.array([p["params"]], dtype=float),
                                    y=np.array([p["loss"]]), height=np.array([2 * p["spread"]]),
                                    beam=0, pen=_pen(colour, 2)))
    if points:
        xs, ys = [p["params"] for p in points], [p["loss"] for p in points]
        dx = max(max(xs) - min(xs), 0.05 * max(xs))
        dy = max(max(ys) - min(ys), 0.02 * max(ys)) + max(p["spread"] for p in points)
        fig.plot.setXRange(min(xs) - 0.15 * dx, max(xs) + 0.15 * dx, padding=0)
        fig.plot.setYRange(min(ys) - 0.4 * dy, max(ys) + 0.4 * dy, padding=0)
    return fig.export(path)


def loss_vs_position(path: Path, positions: dict[str, list[float]], train_length: int) -> Path:
    """Loss at each position (a moving average over a few positions) per variant, with the
    training length marked."""
    import pyqtgraph as pg
    _app()
    fig = _Figure("Loss against position", "position in the sequence",
                  "validation loss (nats/token)")
    highest = 0.0
    for i, (name, curve) in enumerate(positions.items()):
        smooth = _smooth(curve, SMOOTHING)
        fig.line(range(len(smooth)), smooth, name, pen=_pen(COLOURS[i % len(COLOURS)], 2.5))
        highest = max(highest, max(smooth[1:] or smooth))
    fig.add(pg.InfiniteLine(pos=train_length, angle=90, pen=_pen("#444444", 2, dashed=True),
                            label=f"trained length {train_length}",
                            labelOpts={"position": 0.95, "color": "#222222",
                                       "fill": (255, 255, 255, 220)}))
    if highest:
        fig.plot.setYRange(0, highest * 1.15, padding=0)
    return fig.export(path)


def grad_norms(path: Path, norms: dict[str, dict[str, list]]) -> Path:
    """Per-layer gradient norm over training, one colour per layer, one line style per variant
    (log scale)."""
    _app()
    fig = _Figure("Gradient norm per layer (log scale)", "step", "gradient norm")
    fig.plot.setLogMode(y=True)
    fig.plot.getAxis("left").setWidth(70)  # room for 10^-6 beside the label
    layers = grad_norm_layers(norms)
    for v, (name, series) in enumerate(norms.items()):
        for layer, points in series.items():
            if not points or layer not in layers:
                continue
            steps, values = zip(*points)
            values = [max(x, FLOOR) for x in _smooth(list(values), 10)]
            fig.line(steps, values, f"{name}: {layer}",
                     pen=_pen(COLOURS[layers.index(layer) % len(COLOURS)], 2,
                              dashed=LINE_STYLES[v % len(LINE_STYLES)]))
    return fig.export(path)


def drawn_points(params: list[dict], x: str) -> list[dict] | None:
    """The variants' points against ``x`` (those that measured it); None, no plot at all,
    against KV-cache bytes unless the variants' caches differ in size (one column of points
    says nothing)."""
    points = [p for p in params if p.get(x)]
    if x == "kv_bytes" and len({p[x] for p in points}) < 2:
        return None
    return points


def grad_norm_layers(grad_norms: dict) -> list[str]:
    """The layers whose gradient norms are drawn: every variant's "layers.*", in layer order
    (layers.2 before layers.10), which gives each its colour."""
    return sorted({layer for series in grad_norms.values() for layer in series
                   if layer.startswith("layers.")}, key=_layer_order)


def _layer_order(name: str):
    parts = name.split(".")
    rank = {"embed": 0, "layers": 1}.get(parts[0], 2)
    return (rank, int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0, name)


def _smooth(values: list[float], width: int) -> list[float]:
    """Trailing moving average over ``width`` values (the first values average fewer)."""
    out, total = [], 0.0
    for i, x in enumerate(values):
        total += x
        if i >= width:
            total -= values[i - width]
        out.append(total / min(i + 1, width))
    return [x if math.isfinite(x) else float("nan") for x in out]


def draw_report(out: Path, data: dict, *, positions: bool = True,
                norms: bool = False) -> dict[str, str]:
    """Every picture of a comparison under ``out``/plots, the one that makes its point first
    (loss against position, then gradient norms, when present); returns {caption: path}."""
    pictures = {}
    plots = Path(out) / "plots"
    if positions and data["positions"]:
        loss_vs_position(plots / "loss_vs_position.png", data["positions"],
                         data["train_length"])
        pictures["Loss against position"] = "plots/loss_vs_position.png"
    if norms and data["grad_norms"]:
        grad_norms(plots / "grad_norms.png", data["grad_norms"])
        styles = ", ".join(f"{style}: {name}" for style, name in
                           zip(LINE_STYLES, data["grad_norms"]))
        pictures[f"Gradient norm of each layer ({styles}; norms below {FLOOR:g}, 0 "
                 f"included, are drawn at {FLOOR:g})"] = "plots/grad_norms.png"
    if data["curves"]:
        loss_curves(plots / "loss_curves.png", data["curves"], data["baselines"])
        pictures["Loss curves (dashed: n-gram baselines)"] = "plots/loss_curves.png"
    if data["params"]:
        loss_vs_params(plots / "loss_vs_params.png", data["params"])
        pictures["Validation loss against parameters"] = "plots/loss_vs_params.png"
    kv = drawn_points(data["params"], "kv_bytes")
    if kv is not None:
        loss_vs_params(plots / "loss_vs_kv.png", kv, "kv_bytes",
                       ("Validation loss against the KV cache",
                        f"KV-cache bytes at context ({kv[0].get('kv_dtype') or 'dtype n/a'})"))
        pictures["Validation loss against KV-cache bytes (measured after one context "
                 "length; bar: spread over seeds)"] = "plots/loss_vs_kv.png"
    return pictures
