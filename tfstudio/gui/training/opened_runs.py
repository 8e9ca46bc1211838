"""Past runs in the Train workspace: overlaying their curves, opening one (its graph on the
canvas, its curves, looks inside, setup and weights, replacing everything of the previous
run), forgetting one and adding a run folder from disk."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...graph import ShowRunGraph, same_model
from ...probes import SnapshotStore
from .history import RunRecord, load_series
from .run_lines import canvas_line, opened_line, progress_format
from .shown_state import is_training, kept_checkpoints
from .series import RunSeries


class OpenedRuns:
    def __init__(self, panel):
        self.panel = panel  # the TrainingPanel whose views show the opened run
        self._reading: set[str] = set()  # runs whose curves were asked for
        self._opening: str | None = None

    def refresh(self) -> None:
        panel = self.panel
        panel.runs.set_records(panel.history.records(), panel.shown_paths)

    def with_series(self, record: RunRecord, then: Callable[[RunSeries], None],
                    key: str) -> None:
        """Call ``then`` with ``record``'s curves: at once when read before, else once the
        worker has read its ``metrics.jsonl`` (a 20,000-step run's took 0.4 s of the event
        loop). A newer call with the same ``key`` drops an older one's."""
        panel = self.panel
        series = panel.series_by_path.get(record.path)
        if series is not None:
            then(series)
            return

        def read(series: RunSeries) -> None:
            if record.path in self._reading:  # (forgotten meanwhile: nothing to show)
                then(panel.series_by_path.setdefault(record.path, series))

        self._reading.add(record.path)
        panel.background.submit(lambda: load_series(record), read, key=key,
                                error=lambda exc: panel.show_error(
                                    f"Cannot read the curves of {record.label}: {exc}",
                                    "Cannot open the run"))

    def set_overlay(self, record: RunRecord, shown: bool) -> None:
        panel = self.panel
        if shown:
            panel.shown_paths.add(record.path)
        else:
            panel.shown_paths.discard(record.path)
        if shown or record.path in panel.series_by_path:
            self.with_series(record, self._overlay, key=f"overlay {record.path}")

    def _overlay(self, series: RunSeries) -> None:
        """The curves of ``series`` shown or hidden, as asked last (it may have been read
        meanwhile)."""
        panel = self.panel
        shown = any(panel.series_by_path.get(p) is series for p in panel.shown_paths)
        if shown and not any(e.series is series for e in panel.curves.entries):
            panel.curves.add_series(series)
        else:
            panel.curves.set_visible(series, shown)

    def open_run(self, record: RunRecord) -> None:
        """Show a past run everywhere: its curves, its snapshots (newest first), its setup and
        its weights; nothing of the previous run stays. (A run not read before shows once
        its curves are read, off the GUI thread.)"""
        panel = self.panel
        self._opening = record.path  # the run asked for last: one read before it opens no more
        run = panel.run
        if is_training(record.path, run):
            looks = SnapshotStore(run.run_dir).steps()
            panel.shown.back_to_training(run.run_dir, record.label, run.config.steps,
                                         run.graph, run.config, looks)
            panel.curves.show_layers_of(run.series)
            panel.progress.setRange(0, run.config.steps)  # the bar is the live run's again
            panel.progress.setFormat("%v / %m steps")
            panel.pacer.show_progress()
            panel._show_figures()
            panel.step_bar.set_follow(True)
            panel._show_caption()
            return
        if record.path not in panel.series_by_path:
            panel.message(f"Reading the curves of {record.label}…")
        self.with_series(record, lambda series: self._open(record, series), key="open run")

    def _open(self, record: RunRecord, series: RunSeries) -> None:
        panel = self.panel
        if self._opening != record.path:
            return
        canvas = self._show_run_graph(record)  # first: the canvas colours are the run's
        self.set_overlay(record, True)
        panel.curves.show_layers_of(series)
        panel.runs.show_overlaid(record.path)
        from ...runs.folder import RunError, RunFolder
        folder = RunFolder(record.path)
        try:
            config = folder.config()
        except (OSError, RunError):  # gone or damaged since it was listed: the rest still shows
            config = None
        try:
            graph = folder.graph()
        except (OSError, ValueError):
            graph = None
        done = series.steps[-1] if series.steps else 0
        looks = SnapshotStore(record.path).steps()
        panel.experts.set_series(series)
        panel.step_bar.set_follow(False, quiet=True)
        panel.host.clear()
        panel.weights_changed.emit(None, None)
        # one transition: the run, its newest look (else its newest weights), its text;
        # the views with nothing of it show their empty state, the weights load
        panel.shown.open_run(Path(record.path), record.label, series.total_steps, graph,
                             config, looks, kept_checkpoints(record.path), done=done)
        panel._show_figures()
        self._show_opened_run(record, config, graph)
        if looks:
            panel.step_bar.set_steps(looks, looks[-1])
            panel.show_step(looks[-1])
        else:
            panel.step_bar.set_steps([])
            panel._show_caption()
        if not folder.has_checkpoints():
            panel.next_token.set_generation_available(False, "This run saved no weights")
        panel.message(opened_line(record.label, len(series.steps), len(looks), canvas,
                                  config_read=config is not None))

    def _show_run_graph(self, record: RunRecord) -> str:
        """The canvas shows the graph the run trained, as one undoable edit, unless it already
        shows that model (layout, labels and the tokenizer-fitted vocabulary aside). Returns
        what happened to the canvas, for the status line ("": nothing)."""
        panel = self.panel
        if panel._edit_graph is None:
            return ""
        from ...runs.folder import RunFolder
        try:
            graph = RunFolder(record.path).graph()
        except (OSError, ValueError) as exc:  # GraphFileError is a ValueError
            return canvas_line(record.label, unreadable=str(exc))
        # its vocabulary too: the canvas (and the status bar's parameter count) is the run's
        # own graph, whatever graph was on the canvas before
        if same_model(graph, panel.graph_source(), fitted=True):
            return ""
        refusal = panel._edit_graph(ShowRunGraph((), graph, run=record.label))
        return canvas_line(record.label, refusal)

    def _show_opened_run(self, record: RunRecord, config, graph) -> None:
        """Progress, setup (the run's ``config``, None: unreadable, previewed with the
        tokenizer it saved), probe text and canvas colours are the opened run's."""
        panel = self.panel
        done, total = panel.shown.progress
        panel.progress.setRange(0, total)
        panel.progress.setValue(done)
        panel.progress.setFormat(progress_format(record.label))
        panel.progress_line.hide()
        if panel.run is not None and panel.run.active:
            panel.pacer.show_progress()  # the run training goes on below, by name
        panel.error.hide()
        panel.probe_text.show(config.probe_text if config is not None else "")
        if config is not None:  # the tokenizer it saved previews the probe text
            panel.setup.show_run(config, panel.generation.run_tokenizer(), graph)
        panel.refresh_telemetry()  # clears the colours the previous run left

    def forget_run(self, record: RunRecord) -> None:
        panel = self.panel
        if is_training(record.path, panel.run):
            panel.message("This run is training; stop it before forgetting it")
            return
        panel.history.forget(record.path)
        self._reading.discard(record.path)
        series = panel.series_by_path.pop(record.path, None)
        if series is not None:
            panel.curves.remove_series(series)
        panel.shown_paths.discard(record.path)
        self.refresh()

    def add_run_folder(self, path: str) -> RunRecord | None:
        panel = self.panel
        try:
            record = panel.history.record_for_folder(path)
        except (ValueError, OSError) as exc:
            panel.show_error(str(exc), "Cannot open the run")
            return None
        panel.history.add(record)
        self.refresh()
        self.open_run(record)
        return record
