"""The training panel: run setup and controls on the left, the views on the right (curves,
attention, positions, next token, experts, run history).

It drives one :class:`TrainingRun` at a time and decides what the inspection views show: the
live run's newest look inside while it trains, a replayed snapshot when the step slider moves,
or a past run opened from the history. Once a run has ended its weights are loaded into a
:class:`ModelHost`, so custom prompts, generation and new probe texts are answered at once.
"""
from __future__ import annotations

import gc
import html
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...graph import Edit, Graph, ShowRunGraph, same_model
from ...probes import SnapshotStore
from ...train.events import Failed
from .attention_view import AttentionView
from .background import Background, GuiThreadGarbageCollector
from .labels import muted
from .curves_view import SPEED_WINDOW, CurvesView
from .experts_view import ExpertsView
from .history import RunHistory, RunRecord, load_series
from .model_host import ModelHost
from .next_token_view import NextTokenView
from .positions_view import PositionsView
from .run_controller import TrainingRun
from .run_state import ViewedRun, WorkspaceState, latest_figures
from .runs_view import RunsView
from .series import RunSeries
from .setup_view import SetupView
from .step_bar import StepBar
from .telemetry import MODES, apply_to_scene, legend_text

PLOT_REDRAW_MS = 250      # the plots redraw at most this often...
REDRAW_SHARE = 0.015      # ...and less often on a machine where a redraw takes longer than
MAX_REDRAW_MS = 2000      # this share of the time between two (never less than every 2 s)
LABEL_INTERVAL_MS = 500   # the progress bar and the status line follow a run this often
# On a small machine every millisecond the GUI thread works is taken from the training
# process: a live look inside redraws its view at most this share of the time, from what its
# last redraw cost (the newest look is drawn; the ones in between only reach the step slider)
PROBE_REDRAW_SHARE = 0.02
MAX_PROBE_WAIT_MS = 2000


class TrainingPanel(QWidget):
    run_started = Signal(object)      # TrainingRun
    run_ended = Signal(object)        # Finished / Failed event
    problem_requested = Signal()      # "show the problem" next to a disabled Train
    # a run's weights loaded for reading (model, tokenizer), or (None, None) when they go: the
    # views that look inside a trained model (Explain) follow it, never a model in training
    weights_changed = Signal(object, object)

    def __init__(self, graph_source: Callable[[], Graph], data_dir: str | Path,
                 parent: QWidget | None = None, *,
                 scene_source: Callable[[], object] | None = None,
                 report_error: Callable[[str, str], None] | None = None,
                 report_message: Callable[[str], None] | None = None,
                 edit_graph: Callable[[Edit], str | None] | None = None):
        super().__init__(parent)
        self.graph_source = graph_source
        self.scene_source = scene_source or (lambda: None)
        self._report_error = report_error
        self._report_message = report_message
        # runs an edit on the editor's graph (None: done, else why not): reopening a run puts
        # its graph on the canvas as one undoable edit (see open_run)
        self._edit_graph = edit_graph
        self.history = RunHistory(data_dir)
        self.history.mark_interrupted()
        self.collector = GuiThreadGarbageCollector(self)  # before any worker thread starts
        self.background = Background(self)
        self.host = ModelHost(self.background)
        self.run: TrainingRun | None = None
        self.state = WorkspaceState()  # what is viewed and shown, decided without Qt
        self._error_box: QMessageBox | None = None
        self._tokenizer_cache: tuple[Path | None, object] = (None, None)
        self.series_by_path: dict[str, RunSeries] = {}
        # a redraw of six plots takes tens of milliseconds on a slow CPU: 4 a second is plenty
        self.plot_timer = QTimer(self, singleShot=True, interval=PLOT_REDRAW_MS)
        self.plot_timer.timeout.connect(self._redraw_plots)
        self.label_timer = QTimer(self, singleShot=True, interval=LABEL_INTERVAL_MS)
        self.label_timer.timeout.connect(self._show_progress)
        self.probe_timer = QTimer(self, singleShot=True)
        self.probe_timer.timeout.connect(self._show_pending_probe)
        self._pending_probe: dict | None = None  # the newest live look, not drawn yet
        self._probe_drawn_at = 0.0               # perf_counter() of the last live redraw
        self._probe_cost_s = 0.0                 # what that redraw cost
        self.shown_paths: set[str] = set()
        self._generated: list[int] = []
        self._corner_of: dict[QWidget, QWidget] = {}

        self.setup = SetupView(self.background)
        self.curves = CurvesView()
        self.attention = AttentionView()
        self.positions = PositionsView()
        self.next_token = NextTokenView()
        self.experts = ExpertsView()
        self.runs = RunsView()
        self.step_bar = StepBar()  # the one step control of every view of the insides
        self._view_names = {self.attention: "attention", self.positions: "positions",
                            self.experts: "experts", self.next_token: "next_token"}
        self._build()
        self._connect()
        self.refresh_graph()
        self._refresh_runs()
        self._update_buttons()

    # the state's fields, as the panel's own (views, tests and the benchmark read them)
    @property
    def viewed(self) -> ViewedRun | None:
        return self.state.viewed

    @property
    def snapshot(self) -> dict | None:
        return self.state.snapshot

    @snapshot.setter
    def snapshot(self, snapshot: dict | None) -> None:
        self.state.snapshot = snapshot

    @property
    def training_snapshot(self) -> dict | None:
        return self.state.training_snapshot

    @training_snapshot.setter
    def training_snapshot(self, snapshot: dict | None) -> None:
        self.state.training_snapshot = snapshot

    @property
    def blocked_reason(self) -> str | None:
        return self.state.blocked_reason

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self._make_controls()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # eight views and the shown one's controls share a 1366 px row: compact tabs keep every
        # title in view instead of behind scroll arrows
        self.tabs.tabBar().setStyleSheet("QTabBar::tab { padding: 4px 7px; }")
        self.corners = QStackedWidget()  # the shown view's own controls, beside the tabs
        self.tabs.setCornerWidget(self.corners, Qt.TopRightCorner)
        for widget, title in ((self.curves, "Curves"), (self.attention, "Attention"),
                              (self.positions, "Positions"), (self.next_token, "Next token"),
                              (self.experts, "Experts"), (self.runs, "Runs")):
            self.add_view(widget, title)
        right = QWidget()
        views = QVBoxLayout(right)
        views.setContentsMargins(0, 0, 0, 0)
        views.setSpacing(0)
        views.addWidget(self.tabs, 1)
        views.addWidget(self.step_bar)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(self._controls_column())
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 1000])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(splitter)

    def add_view(self, view: QWidget, title: str) -> int:
        """Add a view to the Train workspace as a tab (e.g. ``panel.add_view(CompareView(),
        "Compare")``). A view with a ``corner`` widget gets its controls shown beside the tabs
        while it is current. Returns the tab's index."""
        corner = getattr(view, "corner", None)
        if not isinstance(corner, QWidget):
            corner = QWidget()
        self._corner_of[view] = corner
        self.corners.addWidget(corner)
        return self.tabs.addTab(view, title)

    def _make_controls(self) -> None:
        self.train_button = QPushButton("Train")
        self.train_button.setToolTip("Train the graph on the canvas with these settings")
        self.train_button.setDefault(True)
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the run between two steps; its weights are saved")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat(self.state.progress_text())
        self.status = QLabel("Ready")
        self.status.setWordWrap(True)
        # step, loss, speed and ETA, twice a second: two lines high whatever the text, so an
        # update repaints this line only instead of laying out (and repainting) the column
        self.progress_line = QLabel()
        self.progress_line.setWordWrap(True)
        self.progress_line.hide()
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.error.hide()
        self.telemetry = QComboBox()
        for key, title in MODES.items():
            self.telemetry.addItem(title, key)
        self.telemetry.setToolTip("Colour the blocks on the canvas by what the latest look "
                                  "inside measured")
        self.telemetry_note = muted()
        self.blocked = QLabel()  # why Train is disabled, with a link to the problem
        self.blocked.setProperty("role", "error")
        self.blocked.setWordWrap(True)
        self.blocked.setTextFormat(Qt.RichText)
        self.blocked.linkActivated.connect(lambda _: self.problem_requested.emit())
        self.blocked.hide()

    def _controls_column(self) -> QScrollArea:
        """Train / Pause / Stop, progress, telemetry and the run setup, scrolling if short."""
        buttons = QHBoxLayout()
        for b in (self.train_button, self.pause_button, self.stop_button):
            buttons.addWidget(b)
        telemetry_row = QHBoxLayout()
        telemetry_row.addWidget(QLabel("Colour graph by"))
        telemetry_row.addWidget(self.telemetry, 1)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(8, 8, 8, 8)
        column.addLayout(buttons)
        for widget in (self.blocked, self.progress, self.progress_line, self.status, self.error):
            column.addWidget(widget)
        column.addLayout(telemetry_row)
        column.addWidget(self.telemetry_note)
        column.addSpacing(6)
        heading = QLabel("Run setup")
        heading.setProperty("role", "heading")
        column.addWidget(heading)
        column.addWidget(self.setup)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        scroll.setMinimumWidth(300)
        return scroll

    def _connect(self) -> None:
        self.train_button.clicked.connect(self.train)
        self.pause_button.clicked.connect(self.toggle_pause)
        self.stop_button.clicked.connect(self.stop)
        self.telemetry.currentIndexChanged.connect(lambda _: self.refresh_telemetry())
        self.setup.probe_text_edited.connect(self.set_probe_text)
        self.attention.probe_text_edited.connect(self.set_probe_text)
        self.attention.refresh_every_changed.connect(self._set_probe_every)
        self.step_bar.step_requested.connect(self.show_step)
        self.step_bar.follow_toggled.connect(self._follow_toggled)
        self.next_token.prompt_edited.connect(self._prompt_edited)
        self.next_token.prompt.returnPressed.connect(self._prompt_entered)
        self.next_token.generate_requested.connect(self.generate)
        self.next_token.stop_requested.connect(self.stop_generation)
        self.runs.open_requested.connect(self.open_run)
        self.runs.overlay_toggled.connect(self.set_overlay)
        self.runs.forget_requested.connect(self.forget_run)
        self.runs.add_folder_requested.connect(self.add_run_folder)
        self.tabs.currentChanged.connect(lambda _: self._tab_shown())

    # ------------------------------------------------------------------ feedback
    def message(self, text: str) -> None:
        self.status.setText(text)
        if self._report_message is not None:
            self._report_message(text)

    def show_error(self, text: str, title: str = "Training") -> None:
        """A clear, non-blocking message; the panel and its curves stay as they are."""
        self.error.setText(text)
        self.error.show()
        if self._report_error is not None:
            self._report_error(text, title)
            return
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        box.setModal(False)
        box.open()
        self._error_box = box

    # ------------------------------------------------------------------ graph
    def refresh_graph(self) -> None:
        """The editor's graph changed (or a new one was opened): update the defaults."""
        try:
            graph = self.graph_source()
        except Exception:  # noqa: BLE001 - the editor may be mid-change; try again next time
            return
        self.setup.set_graph(graph)
        self.experts.set_graph(graph)
        self.attention.set_graph(graph)
        if self.viewed is None and self.tabs.currentWidget() is self.positions:
            self._preview_positions()

    def set_blocked(self, reason: str | None) -> None:
        """Train is disabled while the graph has an error; ``reason`` says which (None: fine)."""
        self.state.blocked_reason = reason
        if reason:
            self.blocked.setText(f"Cannot train: {html.escape(reason)} "
                                 "<a href='problem'>Show the problem</a>")
        self.blocked.setVisible(bool(reason))
        self.train_button.setToolTip(reason or "Train the graph on the canvas with these "
                                               "settings")
        self._update_buttons()

    @property
    def training(self) -> bool:
        return self.run is not None and self.run.active

    def edit_refusal(self, command: Edit | None) -> str | None:
        """Why an edit of the graph must wait (None: go ahead). While a run trains the model
        is frozen to the copy it started with; moving blocks changes nothing and is allowed."""
        if not self.training or (command is not None and not command.changes_model):
            return None
        return ("The graph is training: stop the run (or let it finish) before changing it. "
                "The run trains the copy it started with; moving blocks is fine.")

    # ------------------------------------------------------------------ running
    def train(self) -> TrainingRun | None:
        refusal = self.state.refusal()
        if refusal:
            self.message(refusal)
            return None
        try:
            graph = self.graph_source()
            config = self.setup.config()
        except ValueError as exc:
            self.show_error(f"Cannot start training: {exc}")
            return None
        name = str(graph.meta.get("name") or "graph")
        run_dir = self.history.new_run_dir(name)
        record = RunRecord(str(run_dir), name, config.corpus, config.tokenizer,
                           time.strftime("%Y-%m-%d %H:%M:%S"), status="running")
        run = TrainingRun(graph, config, run_dir, name=record.label,
                          tokenizer=self.setup.built_tokenizer(), parent=self)
        run.started.connect(self._on_started)
        run.progressed.connect(self._on_progress)
        run.probed.connect(self._on_probe)
        run.ended.connect(self._on_ended)
        run.state_changed.connect(lambda _: self._update_buttons())
        self.run = run
        self.history.add(record)
        run.series.is_task = config.corpus.startswith("task:")
        self.series_by_path[str(run_dir)] = run.series
        self.shown_paths.add(str(run_dir))
        self.curves.add_series(run.series)
        self.curves.show_layers_of(run.series)
        self.state.started(run_dir, config.steps, record.label)
        self.experts.set_series(run.series)
        self.host.clear()
        self.weights_changed.emit(None, None)
        self.step_bar.set_steps([])
        self.step_bar.set_follow(True, quiet=True)
        self.attention.every.blockSignals(True)
        self.attention.every.setValue(max(1, config.probe_every))
        self.attention.every.blockSignals(False)
        self.next_token.set_generation_available(
            False, "Generation uses the trained weights: they load when the run ends")
        self.error.hide()
        self.progress.setRange(0, config.steps)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m steps")
        self.progress_line.hide()
        self._show_figures()
        self._show_caption()
        self.message(f"Starting {name} on {config.corpus} ({config.steps:,} steps)…")
        gc.freeze()  # what the app holds now outlives the run (see _on_started)
        run.start()
        self._refresh_runs()
        self._update_buttons()
        self.run_started.emit(run)
        return run

    def toggle_pause(self) -> None:
        if self.run is None:
            return
        if self.run.state == "paused":
            self.run.resume()
            self.message("Resumed")
        elif self.run.state == "running":
            self.run.pause()
            self.message("Paused after the current step; Resume continues exactly there")

    def pause(self) -> None:
        if self.run is not None and self.run.state == "running":
            self.toggle_pause()

    def resume(self) -> None:
        if self.run is not None and self.run.state == "paused":
            self.toggle_pause()

    def stop(self) -> None:
        if self.run is not None and self.run.active:
            self.run.stop()
            self.message("Stopping after the current step; the weights are saved")

    def _update_buttons(self) -> None:
        self.state.run_state = self.run.state if self.run is not None else "idle"
        b = self.state.buttons()
        self.train_button.setEnabled(b.train)
        self.pause_button.setEnabled(b.pause)
        self.pause_button.setText(b.pause_text)
        self.stop_button.setEnabled(b.stop)
        self.setup.setEnabled(b.setup)

    def _on_started(self, event) -> None:
        # torch and Qt live as long as the run: out of the cyclic collector's reach, its
        # collections on the GUI thread scan only what is new instead of every object
        gc.freeze()
        self._probe_drawn_at = self._probe_cost_s = 0.0
        self.progress.setRange(0, event.total_steps)
        self.history.update(self.run.run_dir, params=event.params)
        tokenizer = self.run.tokenizer or self._run_tokenizer()
        self.message(f"Training {event.graph_name or 'the graph'}: {event.params:,} parameters "
                     f"on {event.device} ({event.precision}), {event.objective}"
                     f"{params_note(self.run.graph, event.params, tokenizer)}")

    def _on_progress(self) -> None:
        if not self.plot_timer.isActive():  # plots redraw a few times a second, not per drain
            self.plot_timer.start()
        if not self.label_timer.isActive():  # a progress bar repaints at once when set
            self.label_timer.start()

    def _show_progress(self) -> None:
        if self.run is None:
            return
        series = self.run.series
        if not series.steps:
            return
        step = series.steps[-1]
        self.progress.setValue(step)
        eta = series.eta_s()
        recent = series.tokens_per_s[-SPEED_WINDOW:]  # the curve's moving average, not one step
        # the same string as the curves header, set in the same call: one loss on screen
        self._show_figures()
        parts = latest_figures(series).split(" · ") + [
            f"{sum(recent) / len(recent):,.0f} tokens/s"]
        if self.run.state == "paused":
            parts.append("paused")  # no time left to count while nothing moves
        elif eta is not None and self.run.active:
            parts.append(f"ETA {_duration(eta)}")
        line = self.progress_line
        line.setFixedHeight(2 * line.fontMetrics().lineSpacing())  # a no-op unless the font changed
        # no-break spaces inside each part: a narrow column wraps between parts only
        line.setText(" · ".join(part.replace(" ", "\u00a0") for part in parts))
        line.show()

    def _show_figures(self) -> str:
        """The curves header: the viewed run's name and newest figures (the run the views
        show, not the last one added to the plots). Returns the figures."""
        viewed = self.viewed
        series = self.series_by_path.get(str(viewed.path)) if viewed is not None else None
        figures = latest_figures(series) if series is not None else ""
        if viewed is None:
            self.curves.set_summary("")
        else:
            self.curves.set_summary(f"{viewed.label} · {figures or 'no step logged yet'}",
                                    f"{viewed.label}: the newest training loss, and the "
                                    "validation loss and task accuracy of the newest "
                                    "evaluation (each with its step)")
        return figures

    def _show_caption(self) -> None:
        """The step bar names what the views of the insides show, and is there only with
        them (Next token with loaded weights reads them, not the slider's step)."""
        self.step_bar.set_caption(self.state.caption())
        view = self.tabs.currentWidget()
        shown = view in self._view_names and not (view is self.next_token and self.host.ready)
        self.step_bar.setVisible(shown)

    def _redraw_plots(self) -> None:
        if self.curves.isVisible():
            started = time.perf_counter()
            self.curves.refresh()
            # what the last redraw cost: this refresh, and the paints of the one before it
            cost_ms = (time.perf_counter() - started + self.curves.plots.take_painting_s()) * 1000
            self.plot_timer.setInterval(int(min(MAX_REDRAW_MS, max(PLOT_REDRAW_MS,
                                                                   cost_ms / REDRAW_SHARE))))
        else:
            self.state.curves_stale = True
        if self.experts.isVisible():
            self.experts.redraw()

    def _on_probe(self, snapshot: dict) -> None:
        if self.viewed is None or not self.viewed.live:
            return
        step = int(snapshot.get("step", 0))
        self.state.probed(step)
        if not self.state.follow:
            self.step_bar.set_steps(self.viewed.steps)
            return
        self.step_bar.set_steps(self.viewed.steps, step)
        self._pending_probe = snapshot
        wait_s = self._probe_drawn_at + self._probe_cost_s / PROBE_REDRAW_SHARE \
            - time.perf_counter()
        if wait_s <= 0:
            self._show_pending_probe()
        elif not self.probe_timer.isActive():
            self.probe_timer.start(int(min(MAX_PROBE_WAIT_MS, wait_s * 1000)))

    def _show_pending_probe(self) -> None:
        """Draw the newest live look (now, and paint it, to know what a redraw costs)."""
        snapshot, self._pending_probe = self._pending_probe, None
        self.probe_timer.stop()
        if snapshot is None or self.viewed is None or not self.viewed.live \
                or not self.state.follow:
            return
        started = time.perf_counter()
        self.show_snapshot(snapshot)
        view = self.tabs.currentWidget()
        if view in self._view_names and view.isVisible():
            view.repaint()
        views = getattr(self.scene_source(), "views", None)
        if callable(views) and self.telemetry.currentData() != "off":
            for canvas in views():  # the canvas repaints its coloured blocks too
                if canvas.isVisible():
                    canvas.viewport().repaint()
        self._probe_drawn_at = time.perf_counter()
        self._probe_cost_s = self._probe_drawn_at - started

    def _on_ended(self, event) -> None:
        run = self.run
        series = run.series
        failed = isinstance(event, Failed)
        status = "failed" if failed else event.reason
        self.history.update(run.run_dir, status=status, steps=event.step,
                            final_loss=series.loss[-1] if series.loss else None,
                            params=series.params)
        self._refresh_runs()
        self._update_buttons()
        self.plot_timer.stop()
        self.label_timer.stop()
        self._show_progress()
        self._show_pending_probe()
        self._show_figures()
        self._show_caption()  # "following training" no more
        gc.unfreeze()  # the run's objects may be collected again
        self.curves.refresh()
        self.experts.redraw()
        if failed:
            what = {"nan": "the loss stopped being a number", "oom": "out of memory",
                    "error": "an error"}.get(event.reason, event.reason)
            self.show_error(f"Training stopped at step {event.step}: {what}.\n{event.message}",
                            "Training failed")
            self.message(f"Failed at step {event.step}; the curves so far are kept")
        else:
            self.message(f"Run {event.reason} at step {event.step:,} in "
                         f"{_duration(event.elapsed_s)}" +
                         (f"; final loss {event.final_loss:.4f}" if event.final_loss else ""))
        if run.run_dir.joinpath("checkpoints", "LATEST").exists() and self.viewed is not None \
                and self.viewed.path == run.run_dir:
            self._load_host(run.run_dir)
        self.run_ended.emit(event)

    def _set_probe_every(self, steps: int) -> None:
        if self.training:
            self.run.set_probe_every(steps)
        self.setup.probe_every.setValue(steps)

    # ------------------------------------------------------------------ what the views show
    def show_snapshot(self, snapshot: dict | None) -> None:
        """Show a look inside: the visible view redraws now, the others when they are shown
        (a hidden view's plots would cost the event loop for nothing)."""
        self.state.show(snapshot)
        if snapshot is None:
            return
        if self.viewed is not None:  # the handle stands on the step shown, whoever asked
            self.step_bar.set_steps(self.viewed.steps, self.state.shown_step)
        self._show_caption()
        self._refresh_visible_view()
        self.refresh_telemetry()

    def _refresh_visible_view(self) -> None:
        view = self.tabs.currentWidget()
        name = self._view_names.get(view, "")
        if not self.state.take_stale(name):
            return
        snapshot = self.snapshot
        where = "now, on your text" if snapshot.get("custom") else \
            f"at step {snapshot.get('step', 0)}"
        if view is self.attention:
            self.attention.show_snapshot(snapshot)
        elif view is self.positions:
            self.positions.show_positions(snapshot.get("positions"),
                                          f"The model's own tensors {where}")
        elif view is self.experts:
            self.experts.show_snapshot(snapshot)
        elif view is self.next_token and not self.host.ready and self.run is not None:
            self.next_token.set_prompt(snapshot.get("text", ""))
            self.next_token.set_logits(snapshot.get("next_token_logits"), self._decoder(),
                                       f"What comes after the probe text, {where} (during "
                                       "training the prompt is the probe text; Enter sets it)")

    def show_step(self, step: int) -> None:
        if self.viewed is None:
            return
        if self.viewed.live and self.run is not None and self.run.latest_probe is not None \
                and self.run.latest_probe.get("step") == step:
            self.show_snapshot(self.run.latest_probe)
            return
        try:
            self.show_snapshot(self.viewed.store.load(step))
        except (OSError, ValueError) as exc:
            self.message(str(exc))

    def _follow_toggled(self, on: bool) -> None:
        self.state.follow = on
        self._show_caption()
        if on and self.viewed is not None and self.viewed.live and self.run is not None \
                and self.run.latest_probe is not None:
            self.show_snapshot(self.run.latest_probe)

    def set_probe_text(self, text: str) -> None:
        """One probe text for every view; a running trainer reads it at its next look."""
        if self.setup.probe_text.text() != text:
            self.setup.probe_text.setText(text)
        self.attention.set_probe_text(text)
        if not text.strip():
            return
        if self.training:
            self.run.set_probe_text(text)
            self.message(f"The next look inside (every {self.run.config.probe_every} steps) "
                         "reads the new probe text")
        elif self.host.ready:
            self.host.snapshot(text, self.show_snapshot, self._job_failed)

    def _decoder(self):
        tokenizer = self.host.tokenizer if self.host.ready else self._run_tokenizer()
        if tokenizer is None:
            return str
        return lambda token_id: tokenizer.token_strings([token_id])[0]

    def _run_tokenizer(self):
        """The tokenizer the viewed run saved (read once per run folder)."""
        if self.viewed is None:
            return None
        cached = self._tokenizer_cache
        if cached[0] == self.viewed.path:
            return cached[1]
        try:
            from ...data import load_tokenizer
            tokenizer = load_tokenizer(self.viewed.path)
        except (OSError, ValueError):
            return None
        self._tokenizer_cache = (self.viewed.path, tokenizer)
        return tokenizer

    def refresh_telemetry(self) -> None:
        """Colour the canvas from the newest look that measured what is asked: a look at your
        own text after training runs no backward pass, so gradient norms come from the last
        training look, and the note says so."""
        mode = self.telemetry.currentData()
        scene = self.scene_source()
        snapshot, extra = self.state.telemetry(mode)
        note = extra if snapshot is None and extra else legend_text(mode) + extra
        self.telemetry_note.setText(note)
        if scene is not None:
            apply_to_scene(scene, snapshot, mode)

    def _tab_shown(self) -> None:
        if self._pending_probe is not None:
            self._show_pending_probe()
        widget = self.tabs.currentWidget()
        if widget in self._corner_of:
            corner = self._corner_of[widget]
            self.corners.setCurrentWidget(corner)
            # as wide as this view's controls (a stack is as wide as its widest page): a view
            # without controls leaves the whole row to the tabs
            self.corners.setFixedWidth(corner.sizeHint().width() if corner.layout() else 0)
            self.tabs.setCornerWidget(self.corners, Qt.TopRightCorner)  # lays the row out again
        self._refresh_visible_view()
        self._show_caption()
        if widget is self.curves and self.state.curves_stale:
            self.state.curves_stale = False
            self.curves.refresh()
        elif widget is self.experts:
            self.experts.redraw()
        elif widget is self.positions and self.snapshot is None:
            self._preview_positions()

    def _preview_positions(self) -> None:
        """Before any run: the positions of the graph on the canvas, freshly initialised."""
        graph = self.graph_source()

        def job():
            from ...compiler import compile_graph
            from ...probes.snapshot import shown_positions
            length = min(64, int(graph.meta.get("context_length") or 64))
            return shown_positions(compile_graph(graph), length)

        self.background.submit(
            job, lambda data: self.positions.show_positions(
                data, "The graph on the canvas, untrained (learned tables start random)"),
            key="positions-preview", error=lambda exc: self.positions.show_unavailable(
                f"The positions appear once the graph can be built; now: {exc}"))

    # ------------------------------------------------------------------ next token, generation
    def _load_host(self, run_dir: Path, opened: str = "") -> None:
        """Load the run's weights; ``opened`` is added to the line saying so."""
        def ready():
            if self.host.model.family == "encoder":
                self.next_token.set_generation_available(
                    False, "A masked-LM encoder predicts masked tokens; it does not write "
                           "left to right. The chart shows its guess for the last position.")
            else:
                self.next_token.set_generation_available(True)
            prompt = self.next_token.prompt.text()
            probe = (self.snapshot or {}).get("text", "")
            if not prompt or prompt == probe:  # not the user's own: ask for the task's answer
                self.next_token.set_prompt(self._task_prompt(run_dir, probe))
            self._prompt_edited(self.next_token.prompt.text())
            note = checkpoint_note(self.host.checkpoint, self.host.skipped)
            self.runs.set_note(str(run_dir), note)
            self.state.weights_step = self.host.step
            self._show_caption()
            self.message((note or f"Loaded the weights of step {self.host.step:,}: type a "
                                  "prompt, move the sliders, generate")
                         + (f"; {opened}" if opened else ""))
            self.weights_changed.emit(self.host.model, self.host.tokenizer)

        self.state.weights_step = None
        self.host.load(run_dir, ready, self._job_failed)

    @staticmethod
    def _task_prompt(run_dir: Path, text: str) -> str:
        """For a synthetic task, the probe text up to its separator ("abc>"): the next token
        is then the first answer token."""
        try:
            from ...data import load_corpus
            from ...runs.folder import RunFolder
            task = load_corpus(RunFolder(run_dir).config().corpus).task
        except (OSError, ValueError):
            return text
        if task is None or task.sep not in text:
            return text
        return text[:text.index(task.sep) + len(task.sep)]

    def _prompt_edited(self, prompt: str) -> None:
        if not self.host.ready or not prompt:
            return
        label = self.viewed.label if self.viewed is not None else ""
        total = f" of {self.viewed.total:,}" if self.viewed is not None and self.viewed.total \
            else ""
        self.host.next_logits(prompt, lambda logits: self.next_token.set_logits(
            logits, self._decoder(), f"{label} · the weights of step {self.host.step:,}{total} "
                                     "(its newest checkpoint) after your prompt"),
                              self._job_failed)

    def _prompt_entered(self) -> None:
        if not self.host.ready:
            self.set_probe_text(self.next_token.prompt.text())

    def generate(self, prompt: str, new_tokens: int) -> None:
        if not self.host.ready:
            self.message("Generation uses trained weights: finish a run or open a past one")
            return
        if not prompt:
            self.message("Type a prompt to continue first")
            return
        t, k, p = self.next_token.settings
        self._generated = []
        tokenizer = self.host.tokenizer
        self.next_token.generation_started(prompt)

        def progress(ids):
            self._generated.extend(ids)
            self.next_token.show_generated(tokenizer.decode(
                [i for i in self._generated if i != tokenizer.eot_id]))

        def done(_result):
            self.next_token.generation_finished()

        def failed(exc):
            self.next_token.generation_finished()
            self._job_failed(exc)

        self.host.generate(prompt, new_tokens, t, k, p, progress, done, failed)

    def stop_generation(self) -> None:
        self.host.stop_generation()
        self.next_token.generation_finished("Generation stopped")

    def _job_failed(self, exc: Exception) -> None:
        self.message(f"{exc}")

    # ------------------------------------------------------------------ past runs
    def _refresh_runs(self) -> None:
        self.runs.set_records(self.history.records(), self.shown_paths)

    def _series_of(self, record: RunRecord) -> RunSeries:
        series = self.series_by_path.get(record.path)
        if series is None:
            series = self.series_by_path[record.path] = load_series(record)
        return series

    def set_overlay(self, record: RunRecord, shown: bool) -> None:
        series = self._series_of(record)
        if shown:
            self.shown_paths.add(record.path)
            if any(e.series is series for e in self.curves.entries):
                self.curves.set_visible(series, True)
            else:
                self.curves.add_series(series)
        else:
            self.shown_paths.discard(record.path)
            self.curves.set_visible(series, False)

    def open_run(self, record: RunRecord) -> None:
        """Show a past run everywhere: its curves, its snapshots (newest first), its weights."""
        if self.run is not None and self.run.active and Path(record.path) == self.run.run_dir:
            self.state.viewed = ViewedRun(self.run.run_dir, live=True,
                                          steps=SnapshotStore(self.run.run_dir).steps(),
                                          label=record.label, total=self.run.config.steps)
            self.curves.show_layers_of(self.run.series)
            self._show_figures()
            self.step_bar.set_follow(True)
            self._show_caption()
            return
        canvas = self._show_run_graph(record)  # first: the canvas colours are the run's
        series = self._series_of(record)
        self.set_overlay(record, True)
        self.curves.show_layers_of(series)
        self.runs.show_overlaid(record.path)
        done = series.steps[-1] if series.steps else 0
        self.state.opened(Path(record.path), SnapshotStore(record.path).steps(), done,
                          series.total_steps, record.label)
        self.experts.set_series(series)
        self.step_bar.set_follow(False, quiet=True)
        self.host.clear()
        self.weights_changed.emit(None, None)
        self._show_figures()
        if self.viewed.steps:
            last = self.viewed.steps[-1]
            self.step_bar.set_steps(self.viewed.steps, last)
            self.show_step(last)
        else:
            self.step_bar.set_steps([])
            self._show_caption()
        from ...runs.folder import RunFolder
        if RunFolder(self.viewed.path).has_checkpoints():  # intact or not: loading says which
            self._load_host(self.viewed.path, canvas)
        else:
            self.next_token.set_generation_available(False, "This run saved no weights")
        self._show_opened_run(record, series)
        self.message(f"Opened {record.label}: {len(series.steps):,} logged steps, "
                     f"{len(self.viewed.steps)} snapshots" + (f"; {canvas}" if canvas else ""))

    def _show_run_graph(self, record: RunRecord) -> str:
        """The canvas shows the graph the run trained, as one undoable edit, unless it already
        shows that model (layout, labels and the tokenizer-fitted vocabulary aside). Returns
        what happened to the canvas, for the status line ("": nothing)."""
        if self._edit_graph is None:
            return ""
        from ...runs.folder import RunFolder
        try:
            graph = RunFolder(record.path).graph()
        except (OSError, ValueError) as exc:  # GraphFileError is a ValueError
            return f"the canvas keeps your graph: the run's graph cannot be read ({exc})"
        if same_model(graph, self.graph_source()):
            return ""
        refusal = self._edit_graph(ShowRunGraph((), graph, run=record.label))
        if refusal:
            return f"the canvas keeps your graph ({refusal})"
        return f"the canvas shows the graph of {record.label} (Ctrl+Z brings yours back)"

    def _show_opened_run(self, record: RunRecord, series: RunSeries) -> None:
        """Nothing of the previous run stays: progress, probe text and canvas colours are the
        opened run's."""
        done, total = self.state.progress
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress.setFormat(f"%v / %m steps ({record.label})")
        self.progress_line.hide()
        self.error.hide()
        from ...runs.folder import RunFolder
        try:  # the setup is the run's: corpus, tokenizer (its own, for the preview), steps...
            config = RunFolder(record.path).config()
        except (OSError, ValueError):
            config = None
        text = (self.snapshot or {}).get("text")
        if text is None:
            text = config.probe_text if config is not None else ""
        self.setup.probe_text.blockSignals(True)
        self.setup.probe_text.setText(text or "")
        self.setup.probe_text.blockSignals(False)
        if config is not None:
            self.setup.show_run(config, self._run_tokenizer())
        self.attention.set_probe_text(text or "")
        if self.snapshot is None:
            self.refresh_telemetry()  # clears the colours the previous run left

    def forget_run(self, record: RunRecord) -> None:
        if self.run is not None and self.run.active and Path(record.path) == self.run.run_dir:
            self.message("This run is training; stop it before forgetting it")
            return
        self.history.forget(record.path)
        series = self.series_by_path.pop(record.path, None)
        if series is not None:
            self.curves.remove_series(series)
        self.shown_paths.discard(record.path)
        self._refresh_runs()

    def add_run_folder(self, path: str) -> RunRecord | None:
        try:
            record = self.history.record_for_folder(path)
        except (ValueError, OSError) as exc:
            self.show_error(str(exc), "Cannot open the run")
            return None
        self.history.add(record)
        self._refresh_runs()
        self.open_run(record)
        return record

    # ------------------------------------------------------------------ closing
    def shutdown(self, timeout: float = 30.0) -> None:
        """Stop a run (its weights are saved) and the background worker; for closing the app."""
        if self.run is not None:
            # a run that has ended ignores the stop, and may still be writing its checkpoint
            self.run.stop()
            if not self.run.wait(timeout):
                self.run.kill()  # stuck: the newest checkpoint on disk stays intact
                self.run.wait(5.0)
        self.host.stop_generation()
        self.background.shutdown()
        self.collector.stop()


def checkpoint_note(used: Path | None, skipped: list[str]) -> str:
    """One line naming the checkpoint the weights came from and each newer one passed over as
    damaged, with why ("": the newest one was used)."""
    if used is None or not skipped:
        return ""
    root = str(used.parent) + "/"
    why = "; ".join(problem.replace(root, "") for problem in skipped)
    newer = "a newer one" if len(skipped) == 1 else f"{len(skipped)} newer ones"
    return (f"Loaded the weights of {used.name}, the newest intact checkpoint: skipped {newer} "
            f"because {why} (nothing was deleted)")


def params_note(graph: Graph, params: int, tokenizer) -> str:
    """Why the run's parameter count differs from the canvas's: the vocabulary is resized to
    the tokenizer's (embedding and head rows), which the canvas cannot know."""
    try:
        from ...graph.cost import estimate_cost
        canvas = estimate_cost(graph).total_params
    except Exception:  # noqa: BLE001 - a note, never a failure
        return ""
    if canvas == params:
        return ""
    vocab = getattr(tokenizer, "vocab_size", None)
    why = (f"the vocabulary is resized to the tokenizer's {vocab:,} tokens" if vocab
           else "the vocabulary is resized to the tokenizer's")
    return f" (the canvas counts {canvas:,}: {why})"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}:{seconds:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"
