"""A training run's life in the Train workspace: Train starts one (in a process of its own),
Pause / Resume / Stop drive it, its start and its end update the history, the buttons and the
views. One run at a time; the panel asks here whether the graph may be edited now."""
from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from ...graph import Edit
from ...train.events import Failed
from .history import RunRecord, folder_started
from .live_look import shows_run
from .run_lines import ended_lines, started_line
from .shown_state import kept_checkpoints

if TYPE_CHECKING:
    from .run_controller import TrainingRun


class RunLifecycle:
    def __init__(self, panel):
        self.panel = panel  # the TrainingPanel: its widgets, state and history

    def train(self) -> TrainingRun | None:
        panel = self.panel
        refusal = panel.shown.refusal()
        if refusal:
            panel.message(refusal)
            return None
        try:
            graph = panel.graph_source()
            config = panel.setup.config()
        except ValueError as exc:
            panel.show_error(f"Cannot start training: {exc}")
            return None
        name = str(graph.meta.get("name") or "graph")
        run_dir = panel.history.new_run_dir(name)
        record = RunRecord(str(run_dir), name, config.corpus, config.tokenizer,
                           folder_started(run_dir), status="running")
        from .run_controller import TrainingRun  # (Qt: the rules here need none)
        run = TrainingRun(graph, config, run_dir, name=record.label,
                          tokenizer=panel.setup.built_tokenizer(), parent=panel)
        run.started.connect(self._on_started)
        run.progressed.connect(panel.pacer.on_progress)
        run.probed.connect(panel.pacer.on_probe)
        run.ended.connect(self._on_ended)
        run.state_changed.connect(lambda _: self.update_buttons())
        panel.run = run
        panel.history.add(record)
        run.series.is_task = config.corpus.startswith("task:")
        panel.series_by_path[str(run_dir)] = run.series
        panel.shown_paths.add(str(run_dir))
        panel.curves.add_series(run.series)
        panel.curves.show_layers_of(run.series)
        panel.shown.start_run(run_dir, record.label, config.steps, graph, config)
        panel.experts.set_series(run.series)
        panel.host.clear()
        panel.weights_changed.emit(None, None)
        panel.step_bar.set_steps([])
        panel.step_bar.set_follow(True, quiet=True)
        panel.attention.every.blockSignals(True)
        panel.attention.every.setValue(max(1, config.probe_every))
        panel.attention.every.blockSignals(False)
        panel.next_token.set_generation_available(
            False, "Generation uses the trained weights: they load when the run ends")
        panel.error.hide()
        panel.progress.setRange(0, config.steps)
        panel.progress.setValue(0)
        panel.progress.setFormat("%v / %m steps")
        panel.progress_line.hide()
        panel._show_figures()
        panel._show_caption()
        panel.message(f"Starting {name} on {config.corpus} ({config.steps:,} steps)…")
        gc.freeze()  # what the app holds now outlives the run (see _on_started)
        run.start()
        panel.opened_runs.refresh()
        self.update_buttons()
        panel.run_started.emit(run)
        return run

    def toggle_pause(self) -> None:
        panel = self.panel
        if panel.run is None:
            return
        if panel.run.state == "paused":
            panel.run.resume()
            panel.message("Resumed")
        elif panel.run.state == "running":
            panel.run.pause()
            panel.message("Paused after the current step; Resume continues exactly there")

    def pause(self) -> None:
        panel = self.panel
        if panel.run is not None and panel.run.state == "running":
            self.toggle_pause()

    def resume(self) -> None:
        panel = self.panel
        if panel.run is not None and panel.run.state == "paused":
            self.toggle_pause()

    def stop(self) -> None:
        panel = self.panel
        if panel.run is not None and panel.run.active:
            panel.run.stop()
            panel.message("Stopping after the current step; the weights are saved")

    def update_buttons(self) -> None:
        panel = self.panel
        panel.shown.run_state = panel.run.state if panel.run is not None else "idle"
        b = panel.shown.buttons()
        panel.train_button.setEnabled(b.train)
        panel.pause_button.setEnabled(b.pause)
        panel.pause_button.setText(b.pause_text)
        panel.stop_button.setEnabled(b.stop)
        panel.setup.setEnabled(b.setup)

    def _on_started(self, event) -> None:
        panel = self.panel
        # torch and Qt live as long as the run: out of the cyclic collector's reach, its
        # collections on the GUI thread scan only what is new instead of every object
        gc.freeze()
        panel.pacer.reset()
        panel.progress.setRange(0, event.total_steps)
        panel.history.update(panel.run.run_dir, params=event.params)
        tokenizer = panel.run.tokenizer or panel.generation.run_tokenizer()
        panel.message(started_line(event, panel.run.graph, tokenizer))

    def _on_ended(self, event) -> None:
        panel = self.panel
        run = panel.run
        series = run.series
        failed = isinstance(event, Failed)
        status = "failed" if failed else event.reason
        panel.history.update(run.run_dir, status=status, steps=event.step,
                             final_loss=series.loss[-1] if series.loss else None,
                             params=series.params)
        panel.opened_runs.refresh()
        self.update_buttons()
        panel.pacer.stop()
        panel._show_figures()
        panel._show_caption()  # "following training" no more
        gc.unfreeze()  # the run's objects may be collected again
        # a hidden view draws when shown: the curves, drawn afresh behind another tab, took
        # 30-60 ms of the event loop at the end of every run
        if panel.curves.isVisible():
            panel.curves.refresh()
        else:
            panel.shown.curves_stale = True
        if panel.experts.isVisible():
            panel.experts.redraw()
        said, error = ended_lines(run.series.name, event)
        if error is not None:
            panel.show_error(error, "Training failed")
        panel.message(said)
        if shows_run(panel.viewed, run):
            # its weights kept: the weight views load them (the step the slider stands on)
            panel.shown.run_ended(kept_checkpoints(run.run_dir))
            panel._show_caption()
        panel.run_ended.emit(event)

    def set_probe_every(self, steps: int) -> None:
        panel = self.panel
        if self.training:
            panel.run.set_probe_every(steps)
        panel.setup.probe_every.setValue(steps)

    @property
    def training(self) -> bool:
        panel = self.panel
        return panel.run is not None and panel.run.active

    def edit_refusal(self, command: Edit | None) -> str | None:
        """Why an edit of the graph must wait (None: go ahead). While a run trains the model
        is frozen to the copy it started with; moving blocks changes nothing and is allowed."""
        if not self.training or (command is not None and not command.changes_model):
            return None
        return ("The graph is training: stop the run (or let it finish) before changing it. "
                "The run trains the copy it started with; moving blocks is fine.")
