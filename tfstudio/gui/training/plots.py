"""pyqtgraph set-up shared by the plotting views: themed plots, legends, run colours."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsItem, QSizePolicy

from .. import theme


def configure_pyqtgraph() -> None:
    pg.setConfigOptions(antialias=True, foreground=theme.current().text,
                        background=theme.current().panel)


def layout_widget() -> pg.GraphicsLayoutWidget:
    configure_pyqtgraph()
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground(theme.current().panel)
    widget.ci.setSpacing(8)
    widget.ci.setContentsMargins(2, 2, 2, 2)
    return widget


TITLE_HEIGHT = 20
# Curves with a point per step are drawn 1 px wide: Qt strokes a wider antialiased polyline of
# a noisy curve about 100x slower (2.8 s against 21 ms for 20,000 points, downsampled to 2,700).
STEP_LINE = 1.0


def title_html(title: str) -> str:
    return f"<span style='font-size:10pt;font-weight:600'>{title}</span>"


def styled_plot(plot: pg.PlotItem, title: str, y_label: str = "", x_label: str = "step"
                ) -> pg.PlotItem:
    t = theme.current()
    plot.setTitle(title_html(title), color=t.text)
    plot.titleLabel.setMaximumHeight(TITLE_HEIGHT)
    plot.layout.setRowFixedHeight(0, TITLE_HEIGHT)
    font = QFont()
    font.setPixelSize(11)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(t.node_border))
        axis.setTextPen(pg.mkPen(t.muted_text))
        axis.setTickFont(font)
        axis.enableAutoSIPrefix(False)  # "probability (x0.001)" reads worse than 0.5
        # an axis (its ticks, labels and grid over the whole plot) replays its drawing at every
        # paint of the plot; kept as a pixmap it is redrawn only when its range or size changes
        axis.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
    if y_label:
        plot.setLabel("left", y_label, color=t.muted_text)
    if x_label:
        plot.setLabel("bottom", x_label, color=t.muted_text)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setClipToView(True)
    plot.setDownsampling(auto=True, mode="peak")
    return plot


def step_curve(plot: pg.PlotItem, colour, name: str | None = None) -> pg.PlotDataItem:
    """A curve with a point per step: thin, and drawn with about 1.5 points per pixel of the
    plot's width (peaks kept), so a redraw costs the same at step 20,000 as at step 200."""
    return plot.plot(pen=pen(colour, STEP_LINE), name=name, autoDownsampleFactor=1.5)


def legend_above(layout: pg.GraphicsLayout, plot: pg.PlotItem, row: int, col: int,
                 columns: int = 4, colspan: int = 1) -> pg.LegendItem:
    """A legend in its own layout cell (above the plot), never over the data; the plot's named
    curves join it as they are added."""
    t = theme.current()
    item = pg.LegendItem(colCount=columns, labelTextColor=t.text, labelTextSize="9pt",
                         verSpacing=-6, horSpacing=12)
    layout.addItem(item, row=row, col=col, colspan=colspan)
    item.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)  # its rows, no more
    layout.layout.setRowStretchFactor(row, 0)
    layout.layout.setRowStretchFactor(row + 1, 1)
    plot.legend = item  # PlotItem.addItem(name=...) adds to ``plot.legend``
    return item


def pen(colour: QColor | str, width: float = 2.0, dashed: bool = False, alpha: int = 255):
    c = QColor(colour)
    c.setAlpha(alpha)
    from PySide6.QtCore import Qt
    return pg.mkPen(c, width=width, style=Qt.DashLine if dashed else Qt.SolidLine)
