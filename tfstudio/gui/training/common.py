"""Pieces the training views share: token display, colours, picture export, background jobs."""
from __future__ import annotations

import gc
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QPoint, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (QFileDialog, QGraphicsItem, QGraphicsView, QLabel, QMenu,
                               QToolButton, QWidget)

from .. import theme

# Distinct colours for overlaid runs, experts and heads (Tableau 10: legible on light and dark).
SERIES_COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                  "#ff9da7", "#9c755f", "#bab0ac"]

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


def series_colour(i: int) -> QColor:
    return QColor(SERIES_COLOURS[i % len(SERIES_COLOURS)])


def display_token(text: str) -> str:
    """A token as a label: whitespace made visible, nothing invisible left."""
    if text == "":
        return "∅"
    return "".join(_VISIBLE.get(ch, ch if ch.isprintable() else f"\\x{ord(ch):02x}")
                   for ch in text)


# --------------------------------------------------------------------------- colour maps
_SEQUENTIAL = [(0.0, (247, 251, 255)), (0.25, (198, 219, 239)), (0.5, (107, 174, 214)),
               (0.75, (33, 113, 181)), (1.0, (8, 48, 107))]                   # ColorBrewer Blues
_DIVERGING = [(0.0, (33, 102, 172)), (0.25, (146, 197, 222)), (0.5, (247, 247, 247)),
              (0.75, (244, 165, 130)), (1.0, (178, 24, 43))]                  # ColorBrewer RdBu


def colour_ramp(values: np.ndarray, kind: str = "sequential") -> np.ndarray:
    """Values in [0, 1] -> uint8 RGB [..., 3] along a ColorBrewer ramp."""
    stops = _SEQUENTIAL if kind == "sequential" else _DIVERGING
    xs = np.array([s[0] for s in stops])
    values = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
    rgb = np.stack([np.interp(values, xs, [s[1][c] for s in stops]) for c in range(3)], -1)
    return rgb.astype(np.uint8)


def ramp_colour(value: float, kind: str = "sequential") -> QColor:
    r, g, b = colour_ramp(np.array([value]), kind)[0]
    return QColor(int(r), int(g), int(b))


# --------------------------------------------------------------------------- export
def export_widget(widget: QWidget, path: str | Path) -> Path:
    """Save what ``widget`` shows as a PNG (its pixels) or an SVG (its drawing)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(widget.size())
        generator.setViewBox(QRectF(0, 0, widget.width(), widget.height()))
        generator.setTitle("tfstudio")
        painter = QPainter(generator)
        cached = _drop_item_caches(widget)  # a pixmap-cached item would reach the SVG as one
        try:  # widgets paint with QPainter: vectors stay vectors
            if isinstance(widget, QGraphicsView):  # a plot: render its scene as shown
                widget.render(painter, QRectF(0, 0, widget.width(), widget.height()),
                              widget.viewport().rect())
            else:
                widget.render(painter, QPoint())
        finally:
            painter.end()
            for item, mode in cached:
                item.setCacheMode(mode)
    elif suffix == ".png":
        image = widget.grab()
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}; check the folder exists and is writable")
    else:
        raise ValueError(f"cannot export as {suffix or 'a file without an extension'}; "
                         "use .png or .svg")
    if not path.exists():
        raise OSError(f"could not write {path}; check the folder exists and is writable")
    return path


def _drop_item_caches(widget: QWidget) -> list:
    """Switch off the pixmap caches of the graphics items ``widget`` shows (plot axes keep one
    for the screen); returns (item, mode) pairs to restore."""
    views = [widget] if isinstance(widget, QGraphicsView) else []
    views += widget.findChildren(QGraphicsView)
    cached = [(item, item.cacheMode()) for view in views if view.scene() is not None
              for item in view.scene().items() if item.cacheMode() != QGraphicsItem.NoCache]
    for item, _ in cached:
        item.setCacheMode(QGraphicsItem.NoCache)
    return cached


def ask_save_path(parent: QWidget, caption: str, file_filter: str, suffix: str) -> str:
    """A save dialog (tests replace :data:`SAVE_DIALOG`)."""
    path, _ = QFileDialog.getSaveFileName(parent, caption, "", file_filter)
    if path and not Path(path).suffix:
        path += suffix
    return path


SAVE_DIALOG: list[Callable[[QWidget, str, str, str], str]] = [ask_save_path]


class ExportButton(QToolButton):
    """"Export ▾": PNG and SVG of a view (and CSV of its data when ``csv`` is given)."""

    def __init__(self, target: Callable[[], QWidget], name: str,
                 csv: Callable[[str], Any] | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.target, self.name, self.csv = target, name, csv
        self.setText("Export")
        self.setToolTip(f"Save the {name} as a picture" + (" or its data as CSV" if csv else ""))
        self.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self)
        menu.addAction("Save as PNG…", lambda: self._save("png"))
        menu.addAction("Save as SVG…", lambda: self._save("svg"))
        if csv is not None:
            menu.addAction("Save data as CSV…", lambda: self._save("csv"))
        self.setMenu(menu)
        self.last_path: Path | None = None

    def _save(self, fmt: str) -> None:
        labels = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)",
                  "csv": "CSV table (*.csv)"}
        path = SAVE_DIALOG[0](self, f"Save the {self.name}", labels[fmt], f".{fmt}")
        if not path:
            return
        try:
            if fmt == "csv":
                self.csv(path)
            else:
                export_widget(self.target(), path)
        except (OSError, ValueError) as exc:
            self.window().statusBar().showMessage(str(exc), 10000) \
                if hasattr(self.window(), "statusBar") else None
            return
        self.last_path = Path(path)


def placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignCenter)
    label.setWordWrap(True)
    label.setProperty("role", "muted")
    label.setMinimumSize(QSize(120, 60))
    return label


def muted(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setProperty("role", "muted")
    label.setWordWrap(True)
    return label


def themed_colour(attribute: str) -> QColor:
    return theme.current().color(attribute)


# --------------------------------------------------------------------------- threads and Qt
class GuiThreadGarbageCollector(QObject):
    """Collect cyclic garbage on the GUI thread only, while worker threads run Python.

    Python's cyclic collector runs in whichever thread happens to allocate. If that is a
    worker thread (the looks inside, the compare view's training) and the garbage holds Qt
    objects (a removed plot curve, a closed dialog), their C++ destructors run off the GUI
    thread, and can deadlock against a GUI thread that holds a Qt lock while waiting for the
    GIL. So automatic collection is switched off and a timer collects, generation by
    generation as the thresholds say, on the GUI thread (the remedy pyqtgraph documents for
    threaded applications). ``stop`` restores the collector."""

    _holders = 0                 # collectors alive: automatic collection stays off while > 0
    _was_enabled = True

    def __init__(self, parent: QObject | None = None, interval_ms: int = 500):
        super().__init__(parent)
        cls = GuiThreadGarbageCollector
        if cls._holders == 0:
            cls._was_enabled = gc.isenabled()
            gc.disable()
        cls._holders += 1
        self._stopped = False
        self._thresholds = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect)
        self._timer.start()

    def collect(self) -> None:
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self._thresholds[generation]:
                break
            gc.collect(generation)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._timer.stop()
        gc.collect()
        cls = GuiThreadGarbageCollector
        cls._holders -= 1
        if cls._holders == 0 and cls._was_enabled:
            gc.enable()


# --------------------------------------------------------------------------- background work
class Background(QObject):
    """Runs jobs one at a time on a worker thread; results come back on the GUI thread.

    ``submit(fn, done, key=...)``: a newer job with the same key makes an older one's result
    stale (it is dropped), so typing in a prompt never shows an old answer. A job may report
    partial results through the ``report`` callable it is given (streaming generation); they
    reach ``progress`` on the GUI thread, as a list of what arrived since the last delivery."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 25):
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfstudio-probe")
        self._jobs: list[tuple[Future, str, int, Callable, Callable | None, Callable | None,
                               queue.SimpleQueue]] = []
        self._generation: dict[str, int] = {}
        self._cancelled: set[int] = set()
        self._closed = False
        self._lock = threading.Lock()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._poll)

    def submit(self, fn: Callable, done: Callable[[Any], None], *, key: str = "",
               error: Callable[[Exception], None] | None = None,
               progress: Callable[[Any], None] | None = None, streaming: bool = False) -> int:
        """Run ``fn()`` (``fn(report)`` when ``streaming``) on the worker; returns a job id
        (-1 after :meth:`shutdown`: the app is closing, nothing runs any more)."""
        if self._closed:
            return -1
        with self._lock:
            number = self._generation.get(key, 0) + 1
            self._generation[key] = number
        reports: queue.SimpleQueue = queue.SimpleQueue()
        job_id = id(reports)

        def run():
            if job_id in self._cancelled:
                return None
            return fn(reports.put) if streaming else fn()

        future = self._pool.submit(run)
        self._jobs.append((future, key, number, done, error, progress, reports))
        self._timer.start()
        return job_id

    def cancel(self, job_id: int) -> None:
        """A cancelled streaming job sees ``cancelled(job_id)`` turn True and should return."""
        self._cancelled.add(job_id)

    def cancelled(self, job_id: int) -> bool:
        return job_id in self._cancelled

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def wait(self, timeout: float = 10.0) -> None:
        """Finish every job and deliver its result (tests, closing)."""
        for future, *_ in list(self._jobs):
            future.exception(timeout)
        self._poll()

    def shutdown(self) -> None:
        self._closed = True
        self._timer.stop()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _poll(self) -> None:
        remaining = []
        for job in self._jobs:
            future, key, number, done, error, progress, reports = job
            if progress is not None:
                items = []
                while True:
                    try:
                        items.append(reports.get_nowait())
                    except queue.Empty:
                        break
                if items:
                    progress(items)
            if not future.done():
                remaining.append(job)
                continue
            if self._generation.get(key) != number or id(reports) in self._cancelled:
                continue  # stale: a newer job with the same key has been asked for
            exc = future.exception()
            if exc is not None:
                if error is not None:
                    error(exc)
                else:
                    raise exc
            else:
                done(future.result())
        self._jobs = remaining
        if not self._jobs:
            self._timer.stop()
