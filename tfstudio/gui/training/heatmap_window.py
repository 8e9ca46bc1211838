"""Which cells a scrollable heatmap shows, without Qt: a long probe text's map shows a window of
readable cells (the rest a scroll away), and the wheel moves it down the text, along the
diagonal so a token's own neighbourhood stays in view. The widget (heatmap.py) measures how
many cells fit and draws; the window, the wheel, the caption and which cell is under the mouse
are decided here."""
from __future__ import annotations

from dataclasses import dataclass

WHEEL_ROWS = 3     # rows (and, along the diagonal, columns) one wheel notch moves
NOTCH = 120        # a wheel's angle delta for one notch (Qt's eighths of a degree)


@dataclass(frozen=True)
class Window:
    """The rows and columns shown of a ``total_rows`` x ``total_cols`` map."""
    first_row: int
    n_rows: int
    first_col: int
    n_cols: int
    total_rows: int
    total_cols: int

    @property
    def extent(self) -> tuple[int, int, int, int]:
        """(first row, rows, first column, columns): the slice of the map drawn."""
        return self.first_row, self.n_rows, self.first_col, self.n_cols

    @property
    def rows(self) -> range:
        return range(self.first_row, self.first_row + self.n_rows)

    @property
    def cols(self) -> range:
        return range(self.first_col, self.first_col + self.n_cols)

    @property
    def windowed(self) -> bool:
        """Whether only some of the rows or columns are shown (the rest are a scroll away)."""
        return self.total_rows * self.total_cols > 0 and \
            (self.n_rows < self.total_rows or self.n_cols < self.total_cols)

    def caption(self) -> str:
        """Which tokens the window shows, written under its horizontal scroll bar."""
        return (f"rows {self.first_row + 1}–{self.first_row + self.n_rows} and columns "
                f"{self.first_col + 1}–{self.first_col + self.n_cols} of "
                f"{self.total_rows}×{self.total_cols} shown, at a readable size: scroll with "
                "the wheel (Shift: columns only) or the bars")


def whole(total_rows: int, total_cols: int) -> Window:
    """Every cell shown."""
    return Window(0, total_rows, 0, total_cols, total_rows, total_cols)


def fitted(first_row: int, first_col: int, fit_rows: int, fit_cols: int, total_rows: int,
           total_cols: int) -> Window:
    """The window of as many cells as fit (at least one), from the first row and column asked,
    held inside the map: asked past its end, the last window; before its start, the first."""
    n_rows = max(1, min(total_rows, fit_rows))
    n_cols = max(1, min(total_cols, fit_cols))
    return Window(min(max(first_row, 0), total_rows - n_rows), n_rows,
                  min(max(first_col, 0), total_cols - n_cols), n_cols, total_rows, total_cols)


def wheel_target(window: Window, delta_x: int, delta_y: int, shift: bool,
                 along_diagonal: bool) -> tuple[int | None, int | None]:
    """(first row, first column) a wheel turn asks for (None: that one stays): down the text,
    by WHEEL_ROWS a notch and at least one; along the diagonal (a token map) the columns too;
    with Shift, or sideways, only the columns."""
    notches = -(delta_y or delta_x) / NOTCH
    steps = int(round(notches * WHEEL_ROWS)) or (1 if notches > 0 else -1)
    if shift or (delta_x and not delta_y):
        return None, window.first_col + steps
    if along_diagonal:
        return window.first_row + steps, window.first_col + steps
    return window.first_row + steps, None


def cell_under(window: Window, x: float, y: float, area: tuple[float, float, float, float],
               cell_w: float, cell_h: float) -> tuple[int, int]:
    """(row, column) under the point (x, y) of a map whose cells fill ``area`` (left, top,
    right, bottom); -1 outside the cells, column -2 over the row labels (left of the cells:
    the row still counts as hovered)."""
    left, top, right, bottom = area
    row = window.first_row + int((y - top) // cell_h) if top <= y < bottom else -1
    col = window.first_col + int((x - left) // cell_w) if left <= x < right else -1
    if row >= 0 and col < 0 and x < left:
        col = -2
    return row, col


@dataclass(frozen=True)
class ScrollBar:
    """A window's scroll bar: shown only while cells are hidden along it."""
    needed: bool
    maximum: int = 0       # the first row (or column) of the last window
    page: int = 0          # rows (or columns) shown
    value: int = 0         # the first shown


def scroll_bars(window: Window, windowed: bool) -> tuple[ScrollBar, ScrollBar]:
    """(the vertical bar, the horizontal one) beside a ``windowed`` map's ``window``."""
    def bar(first: int, shown: int, total: int) -> ScrollBar:
        if not (windowed and shown < total):
            return ScrollBar(False)
        return ScrollBar(True, total - shown, shown, first)
    return (bar(window.first_row, window.n_rows, window.total_rows),
            bar(window.first_col, window.n_cols, window.total_cols))
