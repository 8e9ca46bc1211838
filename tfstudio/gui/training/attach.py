"""Dock the training panel into the editor's main window.

``attach(window)`` adds a "Training" dock, the Build | Train workspace switch (see
:mod:`.workspace`: Train mode gives the views the space and keeps the canvas as a strip), a Train
menu (Train, Pause/Resume, Stop, the Train workspace, open a Hugging Face folder) and Train
buttons on the main toolbar. The panel itself (and pyqtgraph, numpy, the data layer) is built
the first time it is needed, so the editor starts as fast as without it. Once built it trains
the editor's graph, colours the canvas's blocks with the telemetry the panel picks, disables
Train (saying why) while the graph has an error, locks the inspector and refuses graph edits
while a run trains (moving blocks stays allowed). Quitting stops a run between two steps, so
its weights are saved.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QToolBar

from .explain_links import (ABLATE, ablate_text, blocks_to_ablate, head_score_pool, run_label,
                            toggled)
from .shown_state import blocked_reason_of, buttons_for, first_error, train_tips
from .workspace import BUILD, MODES, TRAIN, Workspace


class TrainingAttachment:
    """The dock, its actions and (once needed) the panel of one main window."""

    def __init__(self, window):
        self.window = window
        self._panel = None
        self._extra_views: list[tuple[object, str]] = []  # (factory, title) added on build
        self.dock = QDockWidget("Training", window)
        self.dock.setObjectName("training")
        self.dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                              | QDockWidget.DockWidgetClosable)
        window.addDockWidget(Qt.BottomDockWidgetArea, self.dock)
        self.dock.hide()  # the editor opens as it always did; Train (or the menu) shows it
        self.dock.visibilityChanged.connect(lambda shown: shown and self.panel)

        self.train_action = self._action("&Train", self.train, "Ctrl+Return",
                                         "train the graph on the canvas with the run setup")
        self.pause_action = self._action("&Pause", lambda: self.panel.toggle_pause(),
                                         "Ctrl+Shift+P", "pause between two steps, or continue")
        self.stop_action = self._action("&Stop", lambda: self.panel.stop(), None,
                                        "end the run; its weights are saved")
        self.show_action = self._action("Show the training &workspace", self.show_panel, None,
                                        "setup, curves, attention, positions, next token, "
                                        "experts, runs; the graph as a strip above")
        self.hf_action = self._action("Open a &Hugging Face folder...", self.open_hf_dialog, None,
                                      "a local GPT-2 / LLaMA / Mistral / Mixtral / Qwen2 / BERT "
                                      "checkpoint, as a run to look inside or train further")
        self.workspace = Workspace(window, self.dock, [
            getattr(window, name, None) for name in ("palette_dock", "inspector_dock",
                                                     "problems_dock")])
        self.train_action.setIconText("▶ Start training")  # "Train" alone names the workspace
        menu = window.menuBar().addMenu("&Train")
        for a in (self.train_action, self.pause_action, self.stop_action, None,
                  self.show_action, self.hf_action):
            menu.addSeparator() if a is None else menu.addAction(a)
        toolbar = window.findChild(QToolBar, "main_toolbar")
        if toolbar is not None:
            toolbar.addSeparator()
            toolbar.addAction(self.train_action)
            toolbar.addSeparator()
            for mode in MODES:  # the perspective switch, as a pair of toggles
                toolbar.addAction(self.workspace.actions[mode])
        session = getattr(window, "session", None)
        if hasattr(session, "report_ready"):  # an error in the graph disables Train, and says why
            session.report_ready.connect(lambda _report: self.update_actions())
        self.update_actions()

    def _action(self, text: str, slot, shortcut: str | None, tip: str) -> QAction:
        action = QAction(text, self.window)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.triggered.connect(lambda _=False: slot())
        self.window.addAction(action)
        return action

    # ------------------------------------------------------------------ the panel
    @property
    def panel(self):
        """The training panel, built on first use."""
        if self._panel is None:
            self._panel = self._build_panel()
        return self._panel

    def _build_panel(self):
        from .panel import TrainingPanel

        w = self.window
        panel = TrainingPanel(lambda: w.session.root, w.data_dir, w,
                              scene_source=lambda: w.scene,
                              report_error=w.show_error, report_message=w.show_message,
                              edit_graph=w.session.try_execute)
        self.dock.setWidget(panel)
        panel.run_started.connect(lambda run: run.state_changed.connect(self.update_actions))
        panel.run_started.connect(self.update_actions)
        panel.run_ended.connect(self.update_actions)
        panel.set_blocked(self.blocked_reason())
        self._add_lab_views(panel)
        for make_view, title in self._extra_views:
            panel.add_view(make_view(panel), title)
        session = w.session
        if hasattr(session, "set_edit_guard"):
            session.set_edit_guard(panel.edit_refusal)
        if hasattr(session, "report_ready"):
            session.report_ready.connect(lambda _report: panel.refresh_graph())
        panel.problem_requested.connect(self.show_problem)
        inspector = getattr(w, "inspector", None)
        if inspector is not None and hasattr(inspector, "set_locked"):
            panel.run_started.connect(lambda _run: inspector.set_locked(
                "A run is training the graph: settings are read-only until it stops "
                "(moving blocks is fine)."))
            panel.run_ended.connect(lambda _event: inspector.set_locked(None))
        if hasattr(w.scene, "path_changed"):
            w.scene.path_changed.connect(lambda _path: panel.refresh_telemetry())
        QApplication.instance().aboutToQuit.connect(self._quitting)
        w.training_panel = panel
        return panel

    def add_view(self, make_view, title: str) -> None:
        """Add a view to the Train workspace: ``window.training.add_view(lambda panel:
        CompareView(panel), "Compare")``. ``make_view(panel)`` returns the widget; it is called
        when the panel is built (at once if it already is). A widget with a ``corner`` widget
        has its controls shown beside the tabs while it is current."""
        if self._panel is None:
            self._extra_views.append((make_view, title))
        else:
            self._panel.add_view(make_view(self._panel), title)

    def _add_lab_views(self, panel) -> None:
        """Compare (variants trained side by side) and Explain (the forward pass of the viewed
        run's weights, step by step)."""
        from .compare_view import CompareView, join_runs, open_variant
        from .explain_view import ExplainView

        w = self.window
        compare = CompareView(base_graph=w.session.root, out_dir=w.data_dir / "compare")
        panel.add_view(compare, "Compare")
        compare.runs_ready.connect(lambda runs: join_runs(panel, runs))
        compare.open_requested.connect(lambda path, name: open_variant(panel, path, name))
        explain = ExplainView(panel.background)
        panel.add_view(explain, "Explain")
        panel.add_step_view(explain, "explain")  # the step bar's step is its weights' too
        panel.shown_changed.connect(
            lambda: explain.set_weights_caption(panel.view_caption("explain")))

        # while a run trains, Explain shows its latest look inside (no weights yet); hidden, it
        # keeps the newest and draws it when shown: rebuilding its stage pictures at every look
        # took 0.6 s of the event loop per look, on every tab (bench_gui_latency, busy machine).
        # Likewise the walk of new weights: computed and drawn behind another tab when a run
        # ended, its pictures and embedding map took 0.2 s of the event loop
        unseen: dict = {}

        def weights(model, tokenizer) -> None:
            run_dir = panel.host.run_dir if model is not None else None  # replays its checkpoints
            explain.set_model(model, tokenizer, run_dir, run=_run_label(panel, run_dir),
                              step=panel.host.step if model is not None else None,
                              caption=panel.view_caption("explain") if model is not None
                              else "")
            text = (panel.snapshot or {}).get("text", "")  # else the run's own
            unseen.pop("walk", None)
            if model is not None:
                unseen.pop("look", None)  # the weights' walk replaces a training look's
            if panel.tabs.currentWidget() is explain:
                explain.start_on(text)
            elif model is not None:
                unseen["walk"] = text
            _show_head_roles(panel, model, tokenizer)
        panel.weights_changed.connect(weights)

        def probed(snapshot) -> None:
            if panel.tabs.currentWidget() is explain:
                explain.show_snapshot(snapshot, _run_label(panel))
            else:
                unseen["look"] = snapshot
        panel.run_started.connect(lambda run: run.probed.connect(probed))
        # the stage explained is lit on the canvas, and a block clicked there is explained
        from .explain_view import follow_canvas
        follow_canvas(explain, w.scene)

        def shown(index: int) -> None:
            if panel.tabs.widget(index) is compare:  # "current graph" is the one on the canvas
                compare.base_graph = w.session.root
            elif panel.tabs.widget(index) is explain:
                if "look" in unseen:
                    explain.show_snapshot(unseen.pop("look"), _run_label(panel))
                if "walk" in unseen:
                    explain.start_on(unseen.pop("walk"))
        panel.tabs.currentChanged.connect(shown)
        # what Explain switches off is drawn off on the canvas, whichever side switched it
        explain.ablations_changed.connect(lambda names: w.scene.set_ablated(names))
        w.view.context_actions += [None, self._ablate_action(panel, explain)]

    def _ablate_action(self, panel, explain) -> QAction:
        """Right-click a block on the canvas: switch it off (or on again) in Explain, every copy
        of it in a repeated layer, and show what that changes."""
        w = self.window
        action = QAction(ABLATE, w)
        action.setToolTip("see what the loaded run's output loses without this block (no "
                          "retraining); again to switch it back on")

        def picked() -> list[str]:  # Explain's switches for the blocks selected on the canvas
            offered = [explain.switches.item(i).text() for i in range(explain.switches.count())]
            return blocks_to_ablate(offered, w.scene.path, w.scene.selected_node_ids())

        def ablate() -> None:
            chosen = picked()
            if not chosen:
                w.show_message("Explain switches off attention, feed-forward and expert blocks "
                               "of a loaded run: train or open a run, then right-click one")
                return
            explain.set_ablations(toggled(explain.ablations(), chosen))
            self.show_panel()
            panel.tabs.setCurrentWidget(explain)
            explain.tabs.setCurrentIndex(explain.tabs.indexOf(explain.ablation_page))

        def name_the_action(*_args) -> None:  # it says what it will do to the selection
            action.setText(ablate_text(picked(), explain.ablations()))
        action.triggered.connect(ablate)
        explain.ablations_changed.connect(name_the_action)
        w.view.context_menu_opening.connect(name_the_action)
        return action

    def _quitting(self) -> None:
        self.workspace.remember()
        self._panel.shutdown()  # a run stops between two steps and saves its weights

    # ------------------------------------------------------------------ actions
    def show_panel(self) -> None:
        """Switch to the Train workspace (the panel is built before it shows)."""
        self.panel  # noqa: B018 - built before it shows
        self.workspace.set_mode(TRAIN)
        self.dock.show()
        self.dock.raise_()

    def open_hf_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.window,
                                                  "Open a Hugging Face checkpoint folder")
        if folder:
            self.open_hf_folder(folder)

    def open_hf_folder(self, folder: str | Path) -> Path | None:
        """Import a local Hugging Face checkpoint as a run: its graph goes on the canvas and its
        weights into every view. Returns the run folder (None when it cannot be imported)."""
        from ...export import import_hf
        from ...runs.folder import RunFolder

        run_dir = self.panel.history.new_run_dir("hf-" + Path(folder).name)
        try:
            import_hf(folder, run_dir)
        except (ValueError, OSError) as exc:  # InteropError is a ValueError
            self.window.show_error(str(exc), "Cannot open this Hugging Face folder")
            return None
        self.window.load_graph(RunFolder(run_dir).graph())
        self.show_panel()
        self.panel.add_run_folder(str(run_dir))
        return run_dir

    def train(self) -> None:
        self.show_panel()
        self.panel.train()

    def blocked_reason(self) -> str | None:
        """Why the graph cannot be trained now (its first error), else None."""
        report = getattr(self.window.session, "report", None)
        return blocked_reason_of(getattr(report, "diagnostics", ()),
                                 getattr(report, "errors", 0))

    def show_problem(self) -> None:
        """Back to the Build workspace, on the block with the first error."""
        report = self.window.session.report
        first = first_error(report.diagnostics)
        self.workspace.set_mode(BUILD)
        if first is not None and hasattr(self.window, "go_to_node"):
            self.window.go_to_node(tuple(first.path or ()), first.node_id)

    def update_actions(self, *_) -> None:
        run = self._panel.run if self._panel is not None else None
        state = run.state if run is not None else "idle"
        reason = self.blocked_reason()
        if self._panel is not None:
            self._panel.set_blocked(reason)
        offered = buttons_for(state, reason)  # the panel's buttons' rule, for the menu
        self.train_action.setEnabled(offered.train)
        self.train_action.setStatusTip(train_tips(reason)[1])
        self.pause_action.setEnabled(offered.pause)
        self.pause_action.setText("&" + offered.pause_text)
        self.stop_action.setEnabled(offered.stop)


def _show_head_roles(panel, model, tokenizer) -> None:
    """Score each head of the loaded weights (previous token, induction) for the attention
    grid, off the GUI thread; cleared while no weights are loaded."""
    panel.attention.set_head_roles({})
    pool = head_score_pool(tokenizer) if model is not None else None
    if pool is None:
        return
    from ...probes import head_scores

    step = panel.host.step  # the scores describe these weights, and the look of this step
    panel.background.submit(lambda: head_scores(model, pool, length=min(12, len(pool))),
                            lambda roles: panel.attention.set_head_roles(roles, step),
                            key="head-roles",
                            error=lambda exc: panel.attention.set_head_roles({}))


def attach(window) -> TrainingAttachment:
    attachment = TrainingAttachment(window)
    window.training = attachment
    return attachment


def _run_label(panel, run_dir=None) -> str:
    return run_label(panel.viewed, run_dir, panel.history.records)
