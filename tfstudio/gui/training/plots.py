"""pyqtgraph set-up shared by the plotting views: themed plots, legends, run colours, and a
view box whose automatic range moves in steps."""
from __future__ import annotations

import time

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu
from PySide6.QtCore import QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QGraphicsItem, QSizePolicy

from .. import theme
from .axis_range import STEADY_SLACK, SteadyRange, step_axis_end
from .curve_math import layer_line


def configure_pyqtgraph() -> None:
    pg.setConfigOptions(antialias=True, foreground=theme.current().text,
                        background=theme.current().panel)


class TimedLayoutWidget(pg.GraphicsLayoutWidget):
    """A plot layout that adds up the time its paints take, for a view that paces its redraws
    by what they cost: Qt paints a change later, often in more than one paint event."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._painting_s = 0.0

    def paintEvent(self, event) -> None:
        started = time.perf_counter()
        super().paintEvent(event)
        self._painting_s += time.perf_counter() - started

    def take_painting_s(self) -> float:
        """Seconds spent painting since the last call."""
        spent, self._painting_s = self._painting_s, 0.0
        return spent


def layout_widget() -> TimedLayoutWidget:
    configure_pyqtgraph()
    widget = TimedLayoutWidget()
    widget.setBackground(theme.current().panel)
    widget.ci.setSpacing(8)
    widget.ci.setContentsMargins(2, 2, 2, 2)
    return widget


class LazyMenuViewBox(pg.ViewBox):
    """A view box whose right-click menu is built the first time it opens. pyqtgraph builds it
    with the box (two axis panels of widgets, 3 of a plot's 8 ms): the Train workspace's 14
    plots paid 42 ms of every panel's 210 ms for menus a user seldom opens."""

    def __init__(self, *args, enableMenu: bool = True, **kwargs):
        super().__init__(*args, enableMenu=False, **kwargs)
        self.state["enableMenu"] = enableMenu  # on (or off) as asked; only the building waits

    def getMenu(self, ev):
        if self.menu is None and self.menuEnabled():
            self.menu = ViewBoxMenu(self)
            self.updateViewLists()  # its "link axis to" lists, as pyqtgraph fills them
        return self.menu

    def getContextMenus(self, event):
        return self.getMenu(event).actions() if self.menuEnabled() else []


def menu_later_plot(layout: pg.GraphicsLayout | pg.GraphicsLayoutWidget,
                    **where) -> pg.PlotItem:
    """``layout.addPlot(**where)``, its view box's menu built when first opened."""
    return layout.addPlot(viewBox=LazyMenuViewBox(), **where)


class SteadyViewBox(LazyMenuViewBox):
    """A view box whose automatic range holds still while the data stays well inside it (see
    ``axis_range.SteadyRange``); panning, zooming and the plot's "A" button work as in any
    view box. With ``final_step`` set, x is a run's steps: from 0, to ``step_axis_end``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._steady = [SteadyRange(), SteadyRange()]
        self.final_step = 0  # the step the plotted runs end at (0: not known)
        self.growing = True  # a plotted run still logs points

    def set_growing(self, growing: bool) -> None:
        """The plotted data grows (a live run), or no more: then its range is the one its data
        decides, whatever the redraws on the way left (refitted now, with no new point)."""
        if growing != self.growing:
            self.growing = growing
            if not growing:
                for axis in self._steady:
                    axis.ended()
                self.updateAutoRange()

    def childrenBounds(self, frac=None, orthoRange=(None, None), items=None):
        bounds = super().childrenBounds(frac=frac, orthoRange=orthoRange, items=items)
        for axis, extent in enumerate(bounds):
            if extent is None:
                continue
            # (steps start at 1: reported bounds reach a pen's width, or a symbol's, below it)
            if axis == 0 and self.final_step > 0 and extent[0] >= -STEADY_SLACK * extent[1]:
                bounds[0] = [0.0, step_axis_end(extent[1], self.final_step)]
                continue
            bounds[axis] = list(self._steady[axis].show(tuple(extent)))
        return bounds


TITLE_HEIGHT = 20
TICK_ROOM = "-0.0000"  # the widest tick label a y-axis makes room for before any data
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
        # an axis that shrank whenever its labels did ("2.5" after "10") re-laid out the whole
        # layout, and redrew every plot in it, at each change of a live plot's range; one that
        # widened for the first labels of a run ("0.0064", "21000") did so twice more, so a
        # y-axis has room for such labels from the start (and still widens for wider ones)
        if name == "left":
            axis.textWidth = max(axis.textWidth, QFontMetricsF(font).horizontalAdvance(
                TICK_ROOM) + 1)
        axis.setStyle(autoReduceTextSpace=False)
    if y_label:
        plot.setLabel("left", y_label, color=t.muted_text)
    if x_label:
        plot.setLabel("bottom", x_label, color=t.muted_text)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setClipToView(True)
    plot.setDownsampling(auto=True, mode="peak")
    return plot


def live_plot(layout: pg.GraphicsLayout, row: int, col: int) -> pg.PlotItem:
    """A plot in ``layout`` for data that grows while it is shown: its range moves in steps."""
    return layout.addPlot(row=row, col=col, viewBox=SteadyViewBox())


def step_curve(plot: pg.PlotItem, colour, name: str | None = None) -> pg.PlotDataItem:
    """A curve with a point per step: thin, and drawn with about 1.5 points per pixel of the
    plot's width (peaks kept), so a redraw costs the same at step 20,000 as at step 200."""
    return plot.plot(pen=pen(colour, STEP_LINE), name=name, autoDownsampleFactor=1.5)


def legend_above(layout: pg.GraphicsLayout, plot: pg.PlotItem, row: int, col: int,
                 columns: int = 4, colspan: int = 1) -> pg.LegendItem:
    """A legend in its own layout cell (above the plot), never over the data; the plot's named
    curves join it as they are added."""
    t = theme.current()
    item = RowLegend(colCount=columns, labelTextColor=t.text, labelTextSize="9pt",
                     verSpacing=-6, horSpacing=12)
    layout.addItem(item, row=row, col=col, colspan=colspan)
    item.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)  # its rows, no more
    layout.layout.setRowStretchFactor(row, 0)
    layout.layout.setRowStretchFactor(row + 1, 1)
    plot.legend = item  # PlotItem.addItem(name=...) adds to ``plot.legend``
    return item


def set_columns(legend: pg.LegendItem, columns: int) -> None:
    """``legend``'s entries in ``columns`` columns, its size hint (and its layout's) now."""
    if legend.columnCount != columns:
        legend.setColumnCount(columns)
        legend.layout.invalidate()
        legend.updateGeometry()


class RowLegend(pg.LegendItem):
    """A legend as tall as a row of entries while it has none: the first entry (a run added, a
    live run's first layers) grew the row, which laid every plot below it out again and
    redrew all their axes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._row = 0.0
        sample = pg.PlotDataItem()
        self.addItem(sample, " ")
        self._row = self.effectiveSizeHint(Qt.MinimumSize).height()
        self.removeItem(sample)

    def sizeHint(self, which, constraint=QSizeF()):
        hint = super().sizeHint(which, constraint)
        if which in (Qt.MinimumSize, Qt.PreferredSize) and hint.height() < self._row:
            hint.setHeight(self._row)
        return hint


def pen(colour: QColor | str, width: float = 2.0, dashed: bool = False, alpha: int = 255,
        style=None):
    c = QColor(colour)
    c.setAlpha(alpha)
    return pg.mkPen(c, width=width,
                    style=style if style is not None else Qt.DashLine if dashed else Qt.SolidLine)


# Qt's pen style for each of curve_math.LAYER_STYLES (the count and the rule past it live there)
PEN_STYLES = (Qt.SolidLine, Qt.DashLine, Qt.DotLine, Qt.DashDotLine, Qt.DashDotDotLine)


def layer_style(i: int):
    """The line style of a run's ``i``-th layer (curve_math.layer_line): colour names the run,
    style the layer."""
    style, _ = layer_line(i, 1.0)
    return PEN_STYLES[style]
