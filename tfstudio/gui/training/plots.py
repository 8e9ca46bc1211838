"""pyqtgraph set-up shared by the plotting views: themed plots, legends, run colours."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont

from .. import theme


def configure_pyqtgraph() -> None:
    pg.setConfigOptions(antialias=True, foreground=theme.current().text,
                        background=theme.current().panel)


def layout_widget() -> pg.GraphicsLayoutWidget:
    configure_pyqtgraph()
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground(theme.current().panel)
    widget.ci.setSpacing(8)
    widget.ci.setContentsMargins(4, 4, 4, 4)
    return widget


def styled_plot(plot: pg.PlotItem, title: str, y_label: str = "", x_label: str = "step"
                ) -> pg.PlotItem:
    t = theme.current()
    plot.setTitle(f"<span style='font-size:11pt;font-weight:600'>{title}</span>", color=t.text)
    font = QFont()
    font.setPixelSize(11)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(t.node_border))
        axis.setTextPen(pg.mkPen(t.muted_text))
        axis.setTickFont(font)
        axis.enableAutoSIPrefix(False)  # "probability (x0.001)" reads worse than 0.5
    if y_label:
        plot.setLabel("left", y_label, color=t.muted_text)
    if x_label:
        plot.setLabel("bottom", x_label, color=t.muted_text)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setClipToView(True)
    plot.setDownsampling(auto=True, mode="peak")
    return plot


def legend(plot: pg.PlotItem, columns: int = 1) -> pg.LegendItem:
    t = theme.current()
    item = plot.addLegend(offset=(-8, 8), colCount=columns, labelTextColor=t.text,
                          labelTextSize="9pt")
    back = QColor(t.panel)
    back.setAlpha(220)
    item.setBrush(pg.mkBrush(back))
    item.setPen(pg.mkPen(t.node_border))
    return item


def pen(colour: QColor | str, width: float = 2.0, dashed: bool = False, alpha: int = 255):
    c = QColor(colour)
    c.setAlpha(alpha)
    from PySide6.QtCore import Qt
    return pg.mkPen(c, width=width, style=Qt.DashLine if dashed else Qt.SolidLine)
