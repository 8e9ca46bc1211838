"""A labelled heatmap that draws a mask as a mask, and a grid of them.

Cells the model could not look at (the causal upper triangle, outside a sliding window, -inf
biases) are hatched grey, so a zero weight the model chose never looks like a masked one.
Hovering a row (a query token) outlines it and shades each column label by how much that query
attends to it. ``paint_into`` draws on any painter, so the same picture goes to the screen, a PNG
or an SVG.

A ``scrollable`` heatmap never shrinks its token labels below READABLE_PX: when a long text would
need smaller cells, it shows a window of the tokens at a readable size, with scroll bars (and the
mouse wheel) to reach the rest, as a spreadsheet keeps its headers while its cells scroll.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtWidgets import QGridLayout, QScrollBar, QSizePolicy, QToolTip, QWidget

from .colours import colour_ramp, themed_colour
from .heatmap_cells import (cell_size, cell_tip, centred_left, grid_places, hover_shades,
                            rotate_labels)
from .heatmap_paint import font as _font
from .heatmap_paint import paint_colour_bar, paint_mask
from .heatmap_labels import label_stride, labelled, rows_to_label
from .heatmap_scale import on_scale, scale_range
from .heatmap_window import cell_under, fitted, scroll_bars, wheel_target, whole
from .token_text import display_token

LABEL_FONT_PX = 12
COLOUR_BAR_W = 64   # the colour scale right of the cells: a bar and its labels ("-1.2e-4")
COLOUR_BAR_LABEL_W = COLOUR_BAR_W - 21  # what the 8-px gap, the 10-px bar and 3 px leave
TITLE_FONT_PX = 12
READABLE_PX = 9    # labels never get smaller than this: a small map labels every k-th token;
                   # a scrollable one...
WINDOW_CELL_PX = 14  # ...it shows a window of cells this size instead, labels at WINDOW_LABEL_PX
WINDOW_LABEL_PX = 11
SCROLLBAR_PX = 12
CAPTION_H = 18     # below a window's horizontal scroll bar: which tokens it shows


class Heatmap(QWidget):
    hovered = Signal(int)   # the row under the mouse, -1 when none
    clicked = Signal()

    def __init__(self, parent: QWidget | None = None, *, kind: str = "sequential",
                 labels: bool = True, min_size: int = 120, square: bool = True,
                 scale: bool = True, scrollable: bool = False):
        super().__init__(parent)
        self.scrollable = scrollable  # a window of readable cells rather than unreadable labels
        self.show_scale = scale       # a colour bar with the values its ends stand for
        self.label_px = LABEL_FONT_PX
        self.square = square          # square cells (matrices of tokens) or fill the area
        self._rotate_cols = False
        self.kind = kind              # "sequential" (weights) or "diverging" (signed values)
        self.show_labels = labels
        self.matrix = np.zeros((0, 0))
        self.allowed: np.ndarray | None = None
        self.rows: list[str] = []
        self.cols: list[str] = []
        self.title = ""
        self.value_range = (0.0, 1.0)
        self.hover_row = -1
        self.selected = False
        self._image: QImage | None = None
        self._buffer: np.ndarray | None = None
        self._labels_fit = True
        self._label_stride = 1  # every k-th row and column labelled (cells smaller than a label)
        self._title_h = 2.0
        # the rows and columns shown: all of them unless a scrollable map shows a window
        self._window = whole(0, 0)
        self.first_row = 0
        self.first_col = 0
        self.vbar = QScrollBar(Qt.Vertical, self)
        self.hbar = QScrollBar(Qt.Horizontal, self)
        for bar, name in ((self.vbar, "first_row"), (self.hbar, "first_col")):
            bar.hide()
            bar.valueChanged.connect(lambda value, name=name: self._scrolled(name, value))
        self.setMouseTracking(True)
        self.setMinimumSize(min_size, min_size)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    # ------------------------------------------------------------------ data
    def set_data(self, matrix: np.ndarray, rows: list[str] | None = None,
                 cols: list[str] | None = None, allowed: np.ndarray | None = None,
                 title: str = "", value_range: tuple[float, float] | None = None) -> None:
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.ndim != 2:
            raise ValueError(f"a heatmap needs a 2-D matrix; got shape {matrix.shape}")
        finite = np.isfinite(matrix)
        self.allowed = (finite if allowed is None else np.asarray(allowed, bool) & finite)
        self.matrix = matrix
        self.rows = [display_token(r) for r in rows] if rows is not None else []
        self.cols = [display_token(c) for c in cols] if cols is not None else []
        self.title = title
        self.value_range = value_range if value_range is not None \
            else scale_range(matrix[self.allowed], self.kind)
        self._image = self._build_image()
        if self.hover_row >= matrix.shape[0]:
            self.hover_row = -1
        self._sync_scrollbars()
        self.update()

    def _build_image(self) -> QImage | None:
        if self.matrix.size == 0:
            return None
        rgb = colour_ramp(on_scale(self.matrix, self.value_range), self.kind)
        masked = themed_colour("window")
        rgb[~self.allowed] = (masked.red(), masked.green(), masked.blue())
        h, w = rgb.shape[:2]
        rgba = np.concatenate([rgb, np.full((h, w, 1), 255, np.uint8)], -1)
        self._buffer = np.ascontiguousarray(rgba)
        return QImage(self._buffer.data, w, h, 4 * w, QImage.Format_RGBA8888).copy()

    # ------------------------------------------------------------------ geometry
    def _labelled(self) -> bool:
        return labelled(self.show_labels, self._labels_fit, len(self.rows), len(self.cols),
                        self.scrollable)

    def _layout(self, rect: QRectF) -> tuple[QRectF, float, float]:
        """(cell area, cell width, cell height) inside ``rect``; sets ``_rotate_cols``,
        ``label_px``, ``_label_stride`` and ``_window``. Labels shrink with the cells, down to
        READABLE_PX; below that a scrollable map shows a window of readable cells and any
        other labels every k-th token, so they are never unreadable and never overlap."""
        self._labels_fit = True
        self._label_stride = 1
        area, cw, ch = self._layout_with(rect, LABEL_FONT_PX)
        if self._labelled() and ch < LABEL_FONT_PX:
            area, cw, ch = self._layout_with(rect, max(READABLE_PX, int(ch)))
            if ch < READABLE_PX - 0.5 and self.scrollable:  # a readable window, scroll bars
                area, cw, ch = self._layout_with(rect, WINDOW_LABEL_PX, WINDOW_CELL_PX)
            elif ch < READABLE_PX - 0.5:
                line = QFontMetricsF(_font(READABLE_PX)).height()
                for _ in range(2):  # the stride moves the label bands, and so the cells
                    self._label_stride = label_stride(line, min(cw, ch))
                    area, cw, ch = self._layout_with(rect, READABLE_PX)
        return area, cw, ch

    def labelled_rows(self) -> list[int]:
        """The rows (and, the same, columns) whose tokens are written beside the cells."""
        if not self._labelled():
            return []
        self._layout(QRectF(self.rect()))
        return self._rows_to_label()

    def _rows_to_label(self) -> list[int]:
        """labelled_rows for the layout already made (painting has just laid the map out)."""
        hover = self.hover_row if 0 <= self.hover_row < self.matrix.shape[0] else None
        return rows_to_label(self.visible_rows(), self._label_stride, hover)

    @property
    def windowed(self) -> bool:
        """Whether only some of the rows or columns are shown (the rest are a scroll away)."""
        return self._window.windowed

    def visible_rows(self) -> range:
        return self._window.rows

    def visible_cols(self) -> range:
        return self._window.cols

    def _layout_with(self, rect: QRectF, px: int,
                     cell: float | None = None) -> tuple[QRectF, float, float]:
        """The layout with labels at ``px``; with ``cell``, square cells of that size and as
        many rows and columns as fit (a window; the scroll bars take a strip beside it)."""
        total_rows, total_cols = self.matrix.shape if self.matrix.size else (1, 1)
        n_rows, n_cols = total_rows, total_cols
        self._window = whole(total_rows, total_cols)
        bar = SCROLLBAR_PX + 2 if cell is not None else 0       # right of the cells
        below = bar + CAPTION_H if cell is not None else 0      # under them
        self._title_h = self._title_height(rect.width())
        top = rect.top() + self._title_h
        left = rect.left() + 2
        right_band = (COLOUR_BAR_W if self.show_scale else 0) + bar
        self._rotate_cols = False
        self.label_px = px
        col_band = 0.0
        if self._labelled():
            metrics = QFontMetricsF(_font(px))
            left += max(metrics.horizontalAdvance(t) for t in self.rows) + 8
            widest_col = max(metrics.horizontalAdvance(t) for t in self.cols)
            col_band = metrics.height() + 6
        width = max(rect.right() - left - 2 - right_band, 1.0)

        def cells(band: float) -> tuple[float, float]:
            height = max(rect.bottom() - top - band - 2 - below, 1.0)
            return cell_size(width, height, n_rows, n_cols, self.square, cell)

        cw, ch = cells(col_band)
        # labels too wide to sit side by side (every k-th one: k cells apart) are rotated
        if self._labelled() and rotate_labels(widest_col, cw, self._label_stride):
            self._rotate_cols = True
            col_band = widest_col + 8
            cw, ch = cells(col_band)
        top += col_band
        if cell is not None:  # the window: as many cells as fit, from the first one asked
            height = max(rect.bottom() - top - 2 - below, 1.0)
            window = fitted(self.first_row, self.first_col, int(height // cell),
                            int(width // cell), total_rows, total_cols)
            self._window, n_rows, n_cols = window, window.n_rows, window.n_cols
            self.first_row, self.first_col = window.first_row, window.first_col
        left = centred_left(left, width, cw, n_cols, self.square)
        return QRectF(left, top, cw * n_cols, ch * n_rows), cw, ch

    def _title_height(self, width: float) -> float:
        """The title's lines (it wraps rather than being cut) and a gap; 2 px without one."""
        if not self.title:
            return 2.0
        metrics = QFontMetricsF(_font(TITLE_FONT_PX, bold=True))
        box = metrics.boundingRect(QRectF(0, 0, max(width, 40.0), 1000.0),
                                   int(Qt.AlignLeft | Qt.TextWordWrap), self.title)
        return box.height() + 6

    def label_font_px(self) -> int:
        """The pixel size the token labels are drawn at now (0: no labels)."""
        if not self._labelled():
            return 0
        self._layout(QRectF(self.rect()))
        return self.label_px

    def cell_at(self, pos: QPointF) -> tuple[int, int]:
        """(row, column) of the matrix under a widget position; -1 where outside the cells."""
        area, cw, ch = self._layout(QRectF(self.rect()))
        return cell_under(self._window, pos.x(), pos.y(),
                          (area.left(), area.top(), area.right(), area.bottom()), cw, ch)

    def sizeHint(self) -> QSize:
        return QSize(360, 360)

    # ------------------------------------------------------------------ scrolling
    def scroll_to(self, first_row: int | None = None, first_col: int | None = None) -> None:
        """Show the window of cells starting at this row and column (clamped)."""
        if first_row is not None:
            self.first_row = int(first_row)
        if first_col is not None:
            self.first_col = int(first_col)
        self._sync_scrollbars()
        self.update()

    def _scrolled(self, name: str, value: int) -> None:
        if getattr(self, name) != value:
            setattr(self, name, value)
            self.update()

    def _sync_scrollbars(self) -> None:
        """Place the scroll bars beside the window of cells, sized to what is hidden."""
        if not self.scrollable:
            return
        area, _, _ = self._layout(QRectF(self.rect()))
        vertical, horizontal = scroll_bars(self._window, self.scrollable and self.windowed)
        for bar, state, geometry in (
                (self.vbar, vertical, (area.right() + 2, area.top(), SCROLLBAR_PX, area.height())),
                (self.hbar, horizontal,
                 (area.left(), area.bottom() + 2, area.width(), SCROLLBAR_PX))):
            bar.setVisible(state.needed)
            if not state.needed:
                continue
            bar.blockSignals(True)
            bar.setRange(0, state.maximum)
            bar.setPageStep(state.page)
            bar.setSingleStep(1)
            bar.setValue(state.value)
            bar.blockSignals(False)
            bar.setGeometry(*(int(round(v)) for v in geometry))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._sync_scrollbars()

    def wheelEvent(self, event) -> None:
        """The wheel moves down the text: rows, and along the diagonal the columns too (a
        token's own neighbourhood stays in view); with Shift, or sideways, only the columns."""
        if not (self.scrollable and self.windowed):
            event.ignore()
            return
        delta = event.angleDelta()
        self.scroll_to(*wheel_target(self._window, delta.x(), delta.y(),
                                     bool(event.modifiers() & Qt.ShiftModifier),
                                     self.square and self.rows == self.cols))
        event.accept()

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        self.paint_into(painter, QRectF(self.rect()))
        painter.end()

    def paint_into(self, painter: QPainter, rect: QRectF) -> None:
        t = self
        painter.setRenderHint(QPainter.Antialiasing, False)
        painter.setRenderHint(QPainter.TextAntialiasing, True)
        text_colour = themed_colour("text")
        if self.title:
            painter.setFont(_font(TITLE_FONT_PX, bold=self.selected))
            painter.setPen(themed_colour("accent") if self.selected else text_colour)
            painter.drawText(QRectF(rect.left(), rect.top(), rect.width(),
                                    self._title_height(rect.width())),
                             Qt.AlignLeft | Qt.AlignVCenter | Qt.TextWordWrap, self.title)
        if self._image is None:
            return
        area, cw, ch = self._layout(rect)
        r0, nr, c0, nc = self._window.extent
        painter.drawImage(area, self._image, QRectF(c0, r0, nc, nr))
        self._paint_mask(painter, area, cw, ch)
        painter.setPen(QPen(themed_colour("node_border"), 1))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(area)
        if t._labelled():
            self._paint_labels(painter, area, cw, ch)
        if self.show_scale:
            self._paint_scale(painter, area)
        if self.windowed:
            self._paint_window_caption(painter, rect, area)
        if self.hover_row in self.visible_rows():
            painter.setPen(QPen(themed_colour("selection"), 2))
            painter.drawRect(QRectF(area.left(), area.top() + (self.hover_row - r0) * ch,
                                    area.width(), ch))

    def _paint_window_caption(self, painter: QPainter, rect: QRectF, area: QRectF) -> None:
        """Which tokens the window shows, under its horizontal scroll bar."""
        painter.setFont(_font(READABLE_PX + 1))
        painter.setPen(themed_colour("muted_text"))
        painter.drawText(QRectF(rect.left() + 2, area.bottom() + SCROLLBAR_PX + 3,
                                rect.width() - 4, CAPTION_H - 2),
                         Qt.AlignLeft | Qt.AlignVCenter, self.window_caption())

    def window_caption(self) -> str:
        return self._window.caption()

    def _paint_mask(self, painter: QPainter, area: QRectF, cw: float, ch: float) -> None:
        r0, nr, c0, nc = self._window.extent
        paint_mask(painter, ~self.allowed[r0:r0 + nr, c0:c0 + nc], area, cw, ch)

    def _paint_scale(self, painter: QPainter, area: QRectF) -> None:
        """The colour bar: what the lightest and darkest cells mean."""
        beside = SCROLLBAR_PX + 2 if self.windowed else 0  # right of the vertical scroll bar
        bar = QRectF(area.right() + 8 + beside, area.top(), 10, max(area.height(), 30))
        paint_colour_bar(painter, bar, self.kind, self.value_range, COLOUR_BAR_LABEL_W)

    def _paint_labels(self, painter: QPainter, area: QRectF, cw: float, ch: float) -> None:
        font = _font(self.label_px)
        bold = _font(self.label_px, bold=True)
        text_colour = themed_colour("text")
        shades = None
        r0, nr, c0, nc = self._window.extent
        if 0 <= self.hover_row < self.matrix.shape[0]:
            shades = hover_shades(self.matrix[self.hover_row], self.allowed[self.hover_row])
        labelled = self._rows_to_label()
        line = QFontMetricsF(bold).height()
        for r in labelled:
            painter.setFont(bold if r == self.hover_row else font)
            painter.setPen(themed_colour("selection") if r == self.hover_row else text_colour)
            painter.drawText(row_label_rect(area, r - r0, ch, line),
                             Qt.AlignRight | Qt.AlignVCenter, self.rows[r])
        painter.setFont(font)
        for c in self.visible_cols():
            label = self.cols[c] if c in labelled or self._label_stride == 1 else ""
            x = area.left() + (c - c0) * cw
            if shades is not None and shades[c] is not None:  # what the hovered query reads
                shade = themed_colour("selection")
                shade.setAlphaF(shades[c])
                band = area.top() - self._label_top(area)
                painter.fillRect(QRectF(x, area.top() - band, cw, band - 2), shade)
            painter.setPen(text_colour)
            # a thinned label owns its k cells' width (it would be cut to one cell's)
            draw_column_label(painter, x + cw / 2, max(cw * self._label_stride, line),
                              area.top(), label, self._rotate_cols)

    def _label_top(self, area: QRectF) -> float:
        return self._title_h

    # ------------------------------------------------------------------ hover
    def mouseMoveEvent(self, event) -> None:
        row, col = self.cell_at(event.position())
        self._set_hover(row)
        if row >= 0 and col >= 0 and self.matrix.size:
            QToolTip.showText(event.globalPosition().toPoint(),
                              cell_tip(self.rows, self.cols, row, col, self.matrix[row, col],
                                       self.allowed[row, col]), self)

    def leaveEvent(self, event) -> None:
        self._set_hover(-1)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self.clicked.emit()

    def _set_hover(self, row: int) -> None:
        if row != self.hover_row:
            self.hover_row = row
            self.update()
            self.hovered.emit(row)


class HeatmapGrid(QWidget):
    """Small heatmaps side by side (every head of a layer); a click picks one."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None, kind: str = "sequential"):
        super().__init__(parent)
        self.kind = kind
        self.maps: list[Heatmap] = []
        self._grid = QGridLayout(self)
        self._grid.setSpacing(10)
        self._grid.setContentsMargins(4, 4, 4, 4)

    def set_data(self, matrices, titles: list[str], allowed=None, rows=None, cols=None,
                 shared_range: bool = False,
                 value_range: tuple[float, float] | None = None) -> None:
        """``value_range``: one fixed scale for every map; ``shared_range``: one scale over
        all their values; neither: each map its own."""
        matrices = [np.asarray(m, dtype=np.float64) for m in matrices]
        while len(self.maps) < len(matrices):
            i = len(self.maps)
            heatmap = Heatmap(self, kind=self.kind, min_size=90)
            heatmap.clicked.connect(lambda i=i: self.picked.emit(i))
            self.maps.append(heatmap)
        for extra in self.maps[len(matrices):]:
            extra.hide()
        if value_range is None and shared_range and matrices:
            value_range = scale_range(np.concatenate([m.ravel() for m in matrices]), self.kind)
        places = grid_places(len(matrices), value_range is not None)
        for i, (matrix, title) in enumerate(zip(matrices, titles)):
            heatmap = self.maps[i]
            row, column, heatmap.show_scale = places[i]
            self._grid.addWidget(heatmap, row, column)
            heatmap.set_data(matrix, rows, cols, allowed, title, value_range)
            heatmap.show()

    def paint_into(self, painter: QPainter, rect: QRectF) -> None:
        for heatmap in self.maps:
            if heatmap.isVisible():
                geometry = QRectF(heatmap.geometry())
                heatmap.paint_into(painter, geometry.translated(rect.topLeft()))


def row_label_rect(area: QRectF, index: int, ch: float, line: float) -> QRectF:
    """Where the label of the ``index``-th shown row is drawn: right of nothing, left of the
    cells, centred on its row and at least a line of text tall (QPainter clips text to its
    rect: a rect one thinned cell tall drew half glyphs)."""
    height = max(ch, line)
    centre = area.top() + (index + 0.5) * ch
    return QRectF(0, centre - height / 2, area.left() - 6, height)


def draw_column_label(painter: QPainter, centre: float, room: float, top: float, label: str,
                      rotate: bool) -> None:
    """A column's label above the cells, centred on ``centre``, ``room`` wide (upright) or
    tall (rotated a quarter turn, reading upwards)."""
    if not rotate:
        painter.drawText(QRectF(centre - room / 2, 2, room, top - 6),
                         Qt.AlignHCenter | Qt.AlignBottom, label)
        return
    painter.save()
    painter.translate(centre, top - 6)
    painter.rotate(-90)
    painter.drawText(QRectF(0, -room / 2, top, room), Qt.AlignLeft | Qt.AlignVCenter, label)
    painter.restore()
