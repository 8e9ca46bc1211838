"""How often the Train workspace redraws while a run trains. Every millisecond the GUI thread
works is taken from the training process on a small machine, so the plots, the progress line
and the live looks inside redraw on timers, each at most a share of the time its last redraw
cost, never once per event (the intervals: redraw_pace.py)."""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer

from .live_look import line_height, shows_run
from .plots import TimedLayoutWidget
from .redraw_pace import LABEL_INTERVAL_MS, PLOT_REDRAW_MS, plot_interval_ms, probe_wait_ms
from .series import progress_line


class RedrawPacer(QObject):
    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel  # the TrainingPanel whose views it redraws
        # a redraw of six plots takes tens of milliseconds on a slow CPU: 4 a second is plenty
        self.plot_timer = QTimer(self, singleShot=True, interval=PLOT_REDRAW_MS)
        self.plot_timer.timeout.connect(self._redraw_plots)
        self.label_timer = QTimer(self, singleShot=True, interval=LABEL_INTERVAL_MS)
        self.label_timer.timeout.connect(self.show_progress)
        self.probe_timer = QTimer(self, singleShot=True)
        self.probe_timer.timeout.connect(self.show_pending_probe)
        # the canvas is recoloured by a live look in the task after the view's redraw
        self.recolour_timer = QTimer(self, singleShot=True, interval=0)
        self.recolour_timer.timeout.connect(self._recolour)
        self.pending: dict | None = None  # the newest live look, not drawn yet
        self._drawn_at = 0.0              # perf_counter() of the last live redraw
        self._cost_s = 0.0                # what that redraw cost

    def reset(self) -> None:
        """A new run: no redraw cost known yet."""
        self._drawn_at = self._cost_s = 0.0

    def stop(self) -> None:
        """The run ended: the timers stop, and what they held back is shown now (the newest
        look in a task of its own, next: drawn in the run's last task, it made that one of
        the longest)."""
        self.plot_timer.stop()
        self.label_timer.stop()
        self.show_progress()
        if self.pending is not None:
            self.probe_timer.start(0)

    def on_progress(self) -> None:
        if not self.plot_timer.isActive():  # plots redraw a few times a second, not per drain
            self.plot_timer.start()
        if not self.label_timer.isActive():  # the progress line follows a run twice a second
            self.label_timer.start()

    def show_progress(self) -> None:
        panel = self.panel
        if panel.run is None:
            return
        series = panel.run.series
        if not series.steps:
            return
        step = series.steps[-1]
        other = panel.viewed is not None and not shows_run(panel.viewed, panel.run)  # a past run
        if not other:  # else the bar is the shown run's
            set_quietly(panel.progress, step)
        # the same string as the curves header, set in the same call: one loss on screen
        panel._show_figures()
        line = panel.progress_line
        line.setText(progress_line(series, panel.run, named=other))
        if line.isHidden():  # laid out once as it appears: the width its height depends on
            line.show()
            if line.parentWidget() is not None and line.parentWidget().layout() is not None:
                line.parentWidget().layout().activate()
        # as tall as its text at the column's width, fixed between changes in its line count:
        # a height set at each update (twice a second) would lay the column out again each time
        line.setFixedHeight(line_height(line.heightForWidth(line.width()),
                                        line.fontMetrics().lineSpacing()))

    def _redraw_plots(self) -> None:
        panel = self.panel
        if panel.curves.isVisible():
            started = time.perf_counter()
            panel.curves.refresh()
            # what the last redraw cost: this refresh, and the paints of the one before it
            cost_ms = (time.perf_counter() - started + panel.curves.plots.take_painting_s()) * 1000
            self.plot_timer.setInterval(plot_interval_ms(cost_ms))
        else:
            panel.shown.curves_stale = True
        if panel.experts.isVisible():
            panel.experts.redraw()

    def on_probe(self, snapshot: dict) -> None:
        panel = self.panel
        if not self._shows_the_run():
            return
        step = int(snapshot.get("step", 0))
        panel.shown.look_arrived(step, str(snapshot.get("text") or ""), follow=False)
        # the handle stays on the look drawn; it moves when the newest one is drawn (paced)
        panel.step_bar.set_steps(panel.viewed.looks)
        if not panel.shown.follow:
            return
        self.pending = snapshot
        self._cost_s += self.plots_painting_s()
        wait_ms = probe_wait_ms(self._drawn_at, self._cost_s, time.perf_counter())
        if wait_ms == 0:
            self.probe_timer.start(0)  # a task of its own: not in the drain of the events
        elif not self.probe_timer.isActive():
            self.probe_timer.start(wait_ms)

    def _shows_the_run(self) -> bool:
        """The views show the run this pacer follows (its last look may come after its end)."""
        return shows_run(self.panel.viewed, self.panel.run)

    def show_pending_probe(self) -> None:
        """Draw the newest live look (now, and paint it, to know what a redraw costs). The
        canvas is recoloured in the next task, and its bands painted in the next frame."""
        panel = self.panel
        snapshot, self.pending = self.pending, None
        self.probe_timer.stop()
        if snapshot is None or not self._shows_the_run() or not panel.shown.follow:
            return
        started = time.perf_counter()
        panel.show_snapshot(snapshot, recolour=False)
        view = panel.tabs.currentWidget()
        if view in panel._view_names and view.isVisible():
            view.repaint()
        self.recolour_timer.start()
        self._drawn_at = time.perf_counter()
        self._cost_s = self._drawn_at - started

    def plots_painting_s(self) -> float:
        """What the shown view's plots spent painting since last asked: a plot paints with
        the next frame, after the look's task, and that counts as the look's cost too."""
        view = self.panel.tabs.currentWidget()
        if view not in self.panel._view_names:
            return 0.0
        return sum(plots.take_painting_s() for plots in view.findChildren(TimedLayoutWidget))

    def _recolour(self) -> None:
        """The canvas coloured by the look just drawn; what it costs counts as the look's."""
        started = time.perf_counter()
        self.panel.refresh_telemetry()
        self._cost_s += time.perf_counter() - started


def set_quietly(bar, value: int) -> None:
    """``bar.setValue(value)``, painted with the next frame: a progress bar repaints at once
    when set, and a repaint paints everything then waiting in the window (the canvas, a
    view), a task of 10-15 ms at every progress line."""
    bar.setUpdatesEnabled(False)
    bar.setValue(value)
    bar.setUpdatesEnabled(True)  # (asks for the paint)
