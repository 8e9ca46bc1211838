"""The training panel: run setup and controls on the left, the views on the right (curves,
attention, positions, next token, experts, run history).

The panel lays the workspace out and draws what one Qt-free model, :class:`ShownState`,
says is shown (run, step, text, the live run's lifecycle and the look on screen): the live
run's newest look inside while it trains, a replayed look when the step bar moves, or a past
run opened from the history. Its jobs live beside it: :class:`RunLifecycle` (Train, Pause,
Stop), :class:`RedrawPacer` (how often views redraw), :class:`GenerationController` (the
trained weights: next token, generation) and :class:`OpenedRuns` (past runs).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...graph import Edit, Graph
from .attention_view import AttentionView
from .background import Background, GuiThreadGarbageCollector
from .controls_column import ControlsColumn
from .curves_view import CurvesView
from .experts_view import ExpertsView
from .generation import GenerationController
from .history import RunHistory, RunRecord
from .live_look import newest_look
from .model_host import ModelHost
from .next_token_lines import live_source
from .next_token_view import NextTokenView
from .opened_runs import OpenedRuns
from .positions_math import own_tensors_line
from .positions_view import PositionsView
from .probe_text import ProbeText
from .redraw_pacer import RedrawPacer
from .run_controller import TrainingRun
from .run_lifecycle import RunLifecycle
from .runs_view import RunsView
from .series import RunSeries, header_line, latest_figures
from .setup_view import SetupView
from .shown_state import ShownRun, ShownState, blocked_html, look_where, train_tips
from .shown_views import ShownViews
from .step_bar import StepBar
from .strip import apply_to_scene, show_legend
from .telemetry import note_line


class TrainingPanel(QWidget):
    run_started = Signal(object)      # TrainingRun
    run_ended = Signal(object)        # Finished / Failed event
    problem_requested = Signal()      # "show the problem" next to a disabled Train
    # a run's weights loaded for reading (model, tokenizer), or (None, None) when they go: the
    # views that look inside a trained model (Explain) follow it, never a model in training
    weights_changed = Signal(object, object)
    # what the views show changed (another run, step, text or follow): ``panel.shown`` says
    # what, and ``panel.view_caption(view)`` names it (for views outside this package: Explain)
    shown_changed = Signal()

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
        # its graph on the canvas as one undoable edit (see OpenedRuns.open_run)
        self._edit_graph = edit_graph
        self.history = RunHistory(data_dir)
        self.history.mark_interrupted()
        self.collector = GuiThreadGarbageCollector(self)  # before any worker thread starts
        self.background = Background(self)
        self.host = ModelHost(self.background)
        self.run: TrainingRun | None = None
        # which run, step and text every view shows, the captions that name them, the live
        # run's lifecycle and the look on screen: the one model the views render from
        self.shown = ShownState()
        self._error_box: QMessageBox | None = None
        self.series_by_path: dict[str, RunSeries] = {}
        self.shown_paths: set[str] = set()
        self._corner_of: dict[QWidget, QWidget] = {}
        self.lifecycle = RunLifecycle(self)
        self.pacer = RedrawPacer(self)
        self.generation = GenerationController(self)
        self.opened_runs = OpenedRuns(self)
        self.probe_text = ProbeText(self)
        self.shown_views = ShownViews(self)  # draws each transition of ``shown``

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
        self._step_views = dict(self._view_names)  # every tab the step bar drives (+ Explain)
        self._build()
        self._connect()
        self.refresh_graph()
        self.opened_runs.refresh()
        self.lifecycle.update_buttons()
        # the step bar only under the views of the insides from the start: hidden at the
        # first run instead, it gave the curves its height, laid out and redrawn whole
        self._show_caption()

    @property
    def viewed(self) -> ShownRun | None:
        """The run the views show."""
        return self.shown.now.run

    @property
    def snapshot(self) -> dict | None:
        """The look inside on screen."""
        return self.shown.snapshot

    @property
    def blocked_reason(self) -> str | None:
        return self.shown.blocked_reason

    def _build(self) -> None:
        self.controls = ControlsColumn(self.setup)
        c = self.controls  # its widgets, as the panel's (the menus and tests reach them)
        self.train_button, self.pause_button, self.stop_button = (
            c.train_button, c.pause_button, c.stop_button)
        self.progress, self.progress_line, self.status, self.error = (
            c.progress, c.progress_line, c.status, c.error)
        self.telemetry, self.telemetry_note, self.blocked = c.telemetry, c.telemetry_note, c.blocked
        self.progress.setFormat(self.shown.progress_text())
        self.blocked.linkActivated.connect(lambda _: self.problem_requested.emit())
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
        splitter.addWidget(self.controls)
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

    def _connect(self) -> None:
        self.train_button.clicked.connect(self.train)
        self.pause_button.clicked.connect(self.toggle_pause)
        self.stop_button.clicked.connect(self.stop)
        self.telemetry.currentIndexChanged.connect(lambda _: self.refresh_telemetry())
        self.setup.probe_text_edited.connect(self.set_probe_text)
        self.attention.probe_text_edited.connect(self.set_probe_text)
        self.attention.refresh_every_changed.connect(self.lifecycle.set_probe_every)
        self.step_bar.step_requested.connect(self.show_step)
        self.step_bar.follow_toggled.connect(self._follow_toggled)
        self.next_token.prompt_edited.connect(self.generation.prompt_edited)
        self.next_token.prompt.returnPressed.connect(self.generation.prompt_entered)
        self.next_token.generate_requested.connect(self.generate)
        self.next_token.stop_requested.connect(self.stop_generation)
        self.runs.open_requested.connect(self.open_run)
        self.runs.overlay_toggled.connect(self.set_overlay)
        self.runs.forget_requested.connect(self.forget_run)
        self.runs.add_folder_requested.connect(self.add_run_folder)
        self.tabs.currentChanged.connect(lambda _: self._tab_shown())

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
            self.shown_views.preview_positions()  # (a run shown: its own, see _show_run_positions)

    def set_blocked(self, reason: str | None) -> None:
        """Train is disabled while the graph has an error; ``reason`` says which (None: fine)."""
        self.shown.blocked_reason = reason
        line = blocked_html(reason)
        if line:
            self.blocked.setText(line)
        self.blocked.setVisible(bool(line))
        self.train_button.setToolTip(train_tips(reason)[0])
        self.lifecycle.update_buttons()

    def _show_figures(self) -> str:
        """The curves header: the viewed run's name and newest figures (the run the views
        show, not the last one added to the plots). Returns the figures."""
        viewed = self.viewed
        series = self.series_by_path.get(str(viewed.path)) if viewed is not None else None
        figures = latest_figures(series) if series is not None else ""
        if viewed is None:
            self.curves.set_summary("")
        else:
            self.curves.set_summary(header_line(viewed.name, figures),
                                    f"{viewed.name}: the newest training loss, and the "
                                    "validation loss and task accuracy of the newest "
                                    "evaluation (each with its step)")
        return figures

    def add_step_view(self, view: QWidget, name: str) -> None:
        """``view`` (a tab) reads the step bar's step: the bar shows under it, captioned for it
        (``name``: one of shown_state.STEP_VIEWS)."""
        self._step_views[view] = name

    def view_caption(self, name: str) -> str:
        """What the view ``name`` shows, named by the shown state (live runs add whether the
        views follow training)."""
        return self.shown.caption(name)

    def _show_caption(self) -> None:
        """The step bar names what the current view shows, and is there under every view
        that reads its step (the looks inside, and the views that run the weights)."""
        self.step_bar.set_live(self.viewed is None or self.shown.training_shown)
        view = self.tabs.currentWidget()
        caption = self.view_caption(self._step_views.get(view, "attention"))
        if caption != self.step_bar.caption.text():
            self.step_bar.set_caption(caption)
            self.shown_changed.emit()
        self.step_bar.setVisible(view in self._step_views)

    def show_snapshot(self, snapshot: dict | None, *, recolour: bool = True) -> None:
        """Show a look inside: the visible view redraws now, the others when they are shown
        (a hidden view's plots would cost the event loop for nothing); ``recolour=False``:
        the caller recolours the canvas (a live look does, in a task of its own)."""
        self.shown.show_look(snapshot)
        if snapshot is None:
            return
        self.probe_text.show_look(snapshot.get("text"))
        if self.viewed is not None:  # the handle stands on the step shown, whoever asked
            self.step_bar.set_steps(self.viewed.looks, self.shown.shown_step)
        self._show_caption()
        self._refresh_visible_view()
        if recolour:
            self.refresh_telemetry()

    def _refresh_visible_view(self) -> None:
        view = self.tabs.currentWidget()
        name = self._view_names.get(view, "")
        if not self.shown.take_stale(name):
            return
        snapshot = self.snapshot
        where = look_where(snapshot)
        if view is self.attention:
            self.attention.show_snapshot(snapshot)
        elif view is self.positions:
            trained = self.viewed.trained_length if self.viewed is not None else 0
            name = self.viewed.name if self.viewed is not None else ""
            self.positions.show_positions(snapshot.get("positions"),
                                          own_tensors_line(name, where), trained or None)
        elif view is self.experts:
            self.experts.show_snapshot(snapshot)
        elif view is self.next_token and not self.host.ready and self.run is not None:
            self.next_token.set_prompt(snapshot.get("text", ""))
            decode = self.generation.decoder()
            self.next_token.set_logits(snapshot.get("next_token_logits"), decode,
                                       live_source(where))

    def show_step(self, step: int) -> None:
        if self.viewed is None:
            return
        latest = newest_look(self.viewed, self.run, step)
        if latest is not None:
            self.show_snapshot(latest)
            return
        try:
            self.show_snapshot(self.viewed.store.load(step))
        except (OSError, ValueError) as exc:
            self.message(str(exc))

    def _follow_toggled(self, on: bool) -> None:
        self.shown.follow = on
        self._show_caption()
        latest = newest_look(self.viewed, self.run) if on else None
        if latest is not None:
            self.show_snapshot(latest)

    def set_probe_text(self, text: str) -> None:
        self.probe_text.set(text)

    def refresh_telemetry(self) -> None:
        """Colour the canvas from the newest look that measured what is asked: a look at your
        own text after training runs no backward pass, so gradient norms come from the last
        training look, and the note says so."""
        mode = self.telemetry.currentData()
        scene = self.scene_source()
        snapshot, extra = self.shown.telemetry(mode)
        self.telemetry_note.setText(note_line(mode, snapshot is not None, extra))
        if scene is not None:
            shown = apply_to_scene(scene, snapshot, mode)
            show_legend(scene, shown)

    def _tab_shown(self) -> None:
        if self.pacer.pending is not None:
            self.pacer.show_pending_probe()
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
        if widget is self.curves and self.shown.curves_stale:
            self.shown.curves_stale = False
            self.curves.refresh()
        elif widget is self.experts:
            self.experts.redraw()
        elif widget is self.positions and self.snapshot is None:
            self.shown_views.show_run_positions()

    def _job_failed(self, exc: Exception) -> None:
        self.message(f"{exc}")

    # ------------------------------------------------------------------ the jobs, as the panel's
    # (the window's menus, tests and the benchmark drive the panel)
    def train(self) -> TrainingRun | None:
        return self.lifecycle.train()

    def toggle_pause(self) -> None:
        self.lifecycle.toggle_pause()

    def pause(self) -> None:
        self.lifecycle.pause()

    def resume(self) -> None:
        self.lifecycle.resume()

    def stop(self) -> None:
        self.lifecycle.stop()

    @property
    def training(self) -> bool:
        return self.lifecycle.training

    def edit_refusal(self, command: Edit | None) -> str | None:
        return self.lifecycle.edit_refusal(command)

    def open_run(self, record: RunRecord) -> None:
        self.opened_runs.open_run(record)

    def forget_run(self, record: RunRecord) -> None:
        self.opened_runs.forget_run(record)

    def add_run_folder(self, path: str) -> RunRecord | None:
        return self.opened_runs.add_run_folder(path)

    def set_overlay(self, record: RunRecord, shown: bool) -> None:
        self.opened_runs.set_overlay(record, shown)

    def generate(self, prompt: str, new_tokens: int) -> None:
        self.generation.generate(prompt, new_tokens)

    def stop_generation(self) -> None:
        self.generation.stop_generation()

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
