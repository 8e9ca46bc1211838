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

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")
BASELINE_COLOUR = "#555555"
WIDTH, HEIGHT = 1000, 560
SMOOTHING = 8  # positions averaged in the loss-against-position curve


def _app():
    """A QApplication to draw with; off screen unless one already runs (the GUI's)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    pg.setConfigOptions(antialias=True, background="w", foreground="#222222")
    return pg.mkQApp()


def _plot(title: str, x_label: str, y_label: str):
    import pyqtgraph as pg
    from PySide6.QtGui import QFont

    widget = pg.PlotWidget(background="w")
    widget.resize(WIDTH, HEIGHT)
    plot = widget.getPlotItem()
    plot.setTitle(f"<span style='font-size:13pt;color:#222'>{title}</span>")
    font = QFont()
    font.setPixelSize(13)
    for side, label in (("left", y_label), ("bottom", x_label)):
        axis = plot.getAxis(side)
        axis.setTickFont(font)
        axis.setTextPen("#333333")
        axis.setPen("#888888")
        axis.enableAutoSIPrefix(False)
        plot.setLabel(side, f"<span style='font-size:12pt;color:#333'>{label}</span>")
    plot.showGrid(x=True, y=True, alpha=0.2)
    legend = plot.addLegend(offset=(-10, 10), labelTextColor="#222222", labelTextSize="11pt")
    legend.setBrush(pg.mkBrush(255, 255, 255, 230))
    legend.setPen(pg.mkPen("#bbbbbb"))
    return widget, plot


def _pen(colour: str, width: float = 2.5, dashed: bool = False):
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    return pg.mkPen(colour, width=width, style=Qt.DashLine if dashed else Qt.SolidLine)


def _export(widget, plot, path: Path) -> Path:
    import pyqtgraph.exporters as exporters
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    path.parent.mkdir(parents=True, exist_ok=True)
    exporter = exporters.ImageExporter(plot)
    exporter.parameters()["width"] = WIDTH
    exporter.export(str(path))
    widget.close()
    widget.deleteLater()
    return path


def loss_curves(path: Path, curves: dict, baselines: dict[str, float]) -> Path:
    """Training loss (thin) and validation loss (thick, dots) per variant; baselines dashed."""
    _app()
    widget, plot = _plot("Loss during training", "step", "loss (nats/token)")
    last_step, highest = 1, 0.0
    for i, (name, series) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        if series["train"]:
            steps, losses = zip(*series["train"])
            plot.plot(steps, _smooth(list(losses), 10), pen=_pen(colour, 1.2))
            last_step = max(last_step, steps[-1])
            highest = max(highest, sorted(losses)[int(0.95 * (len(losses) - 1))])
        if series["val"]:
            steps, losses = zip(*series["val"])
            plot.plot(steps, losses, pen=_pen(colour, 3), symbol="o", symbolSize=6,
                      symbolBrush=colour, symbolPen=None, name=f"{name} (validation)")
    for j, (name, value) in enumerate(baselines.items()):
        plot.plot([0, last_step], [value, value], pen=_pen(BASELINE_COLOUR, 1.5, dashed=True),
                  name=f"{name} counts: {value:.2f}")
    if highest:  # the first steps' loss (ln V) would flatten everything else
        top = max(highest, *baselines.values()) if baselines else highest
        plot.setYRange(0, top * 1.08, padding=0)
    return _export(widget, plot, path)


def loss_vs_params(path: Path, points: list[dict]) -> Path:
    """Final validation loss (mean over seeds, bar: spread) against parameter count."""
    import pyqtgraph as pg
    _app()
    widget, plot = _plot("Validation loss against size", "parameters", "final validation loss")
    for i, p in enumerate(points):
        colour = COLOURS[i % len(COLOURS)]
        plot.plot([p["params"]], [p["loss"]], pen=None, symbol="o", symbolSize=12,
                  symbolBrush=colour, symbolPen=None, name=p["name"])
        if p["spread"]:
            plot.addItem(pg.ErrorBarItem(x=[p["params"]], y=[p["loss"]], height=2 * p["spread"],
                                         beam=0, pen=_pen(colour, 2)))
    if points:
        xs, ys = [p["params"] for p in points], [p["loss"] for p in points]
        dx = max(max(xs) - min(xs), 0.05 * max(xs))
        dy = max(max(ys) - min(ys), 0.02 * max(ys)) + max(p["spread"] for p in points)
        plot.setXRange(min(xs) - 0.15 * dx, max(xs) + 0.15 * dx, padding=0)
        plot.setYRange(min(ys) - 0.4 * dy, max(ys) + 0.4 * dy, padding=0)
    return _export(widget, plot, path)


def loss_vs_position(path: Path, positions: dict[str, list[float]], train_length: int,
                     bucket_ends: list[int] = ()) -> Path:
    """Loss at each position (a moving average over a few positions) per variant, with the
    training length marked."""
    import pyqtgraph as pg
    _app()
    widget, plot = _plot("Loss against position", "position in the sequence",
                         "validation loss (nats/token)")
    highest = 0.0
    for i, (name, curve) in enumerate(positions.items()):
        smooth = _smooth(curve, SMOOTHING)
        plot.plot(list(range(len(smooth))), smooth, pen=_pen(COLOURS[i % len(COLOURS)], 2.5),
                  name=name)
        highest = max(highest, max(smooth[1:] or smooth))
    line = pg.InfiniteLine(pos=train_length, angle=90, pen=_pen("#444444", 2, dashed=True),
                           label=f"trained length {train_length}",
                           labelOpts={"position": 0.93, "color": "#222222",
                                      "fill": (255, 255, 255, 220), "anchors": [(0, 0), (0, 0)]})
    plot.addItem(line)
    if highest:
        plot.setYRange(0, highest * 1.1, padding=0)
    return _export(widget, plot, path)


def grad_norms(path: Path, norms: dict[str, dict[str, list]]) -> Path:
    """Per-layer gradient norm over training, one colour per layer, one line style per variant
    (log scale)."""
    _app()
    widget, plot = _plot("Gradient norm per layer", "step", "gradient norm (log scale)")
    plot.setLogMode(y=True)
    layers = sorted({layer for series in norms.values() for layer in series}, key=_layer_order)
    for v, (name, series) in enumerate(norms.items()):
        for layer, points in series.items():
            if not points:
                continue
            steps, values = zip(*points)
            values = [max(x, 1e-6) for x in _smooth(list(values), 10)]
            plot.plot(steps, values, name=f"{name}: {layer}",
                      pen=_pen(COLOURS[layers.index(layer) % len(COLOURS)], 2, dashed=v % 2 == 1))
    return _export(widget, plot, path)


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
    """Every picture of a comparison under ``out``/plots; returns {caption: relative path}."""
    pictures = {}
    plots = Path(out) / "plots"
    if data["curves"]:
        loss_curves(plots / "loss_curves.png", data["curves"], data["baselines"])
        pictures["Loss curves (dashed: n-gram baselines)"] = "plots/loss_curves.png"
    if positions and data["positions"]:
        loss_vs_position(plots / "loss_vs_position.png", data["positions"],
                         data["train_length"], data["bucket_ends"])
        pictures["Loss against position"] = "plots/loss_vs_position.png"
    if norms and data["grad_norms"]:
        grad_norms(plots / "grad_norms.png", data["grad_norms"])
        pictures["Gradient norm per layer (solid: first variant, dashed: second)"] = \
            "plots/grad_norms.png"
    if data["params"]:
        loss_vs_params(plots / "loss_vs_params.png", data["params"])
        pictures["Validation loss against parameters"] = "plots/loss_vs_params.png"
    return pictures
