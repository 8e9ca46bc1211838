"""A training run's life in the Train workspace decided without Qt (gui/training/run_lifecycle.py:
its rules read the panel's run and shown state; the run itself, a Qt object, is only made by
Train). A real run from the panel: test_training.py."""
from __future__ import annotations

from types import SimpleNamespace

from tfstudio.graph.edits import MoveNodes, SetParam
from tfstudio.gui.training.run_lifecycle import RunLifecycle
from tfstudio.gui.training.shown_state import ShownState


class Run:
    """A run that records what it was told."""

    def __init__(self, state: str):
        self.state, self.told = state, []

    @property
    def active(self) -> bool:
        return self.state in ("running", "paused", "stopping")

    def pause(self):
        self.told.append("pause")

    def resume(self):
        self.told.append("resume")

    def stop(self):
        self.told.append("stop")


class Widget:
    def __init__(self):
        self.enabled, self.text = None, ""

    def setEnabled(self, on):
        self.enabled = on

    def setText(self, text):
        self.text = text


def panel_with(run: Run | None):
    said = []
    panel = SimpleNamespace(run=run, shown=ShownState(), message=said.append, said=said,
                            train_button=Widget(), pause_button=Widget(), stop_button=Widget(),
                            setup=Widget())
    return panel


def test_the_graph_may_not_change_while_a_run_trains_but_blocks_may_move():
    move, heads = MoveNodes((), {"embed": (0.0, 0.0)}), SetParam(("layers",), "attn", "heads", 2)
    for state in ("running", "paused", "stopping"):
        lifecycle = RunLifecycle(panel_with(Run(state)))
        assert lifecycle.training
        assert lifecycle.edit_refusal(heads).startswith("The graph is training: stop the run")
        assert lifecycle.edit_refusal(None) is not None        # (an edit not yet known)
        assert lifecycle.edit_refusal(move) is None           # moving blocks is fine
    for run in (None, Run("completed"), Run("failed"), Run("stopped")):
        lifecycle = RunLifecycle(panel_with(run))
        assert not lifecycle.training and lifecycle.edit_refusal(heads) is None


def test_pause_toggles_a_running_run_and_resume_a_paused_one_saying_so():
    panel = panel_with(Run("running"))
    lifecycle = RunLifecycle(panel)
    lifecycle.toggle_pause()
    assert panel.run.told == ["pause"]
    assert panel.said == ["Paused after the current step; Resume continues exactly there"]
    panel.run.state = "paused"
    lifecycle.toggle_pause()
    assert panel.run.told == ["pause", "resume"] and panel.said[-1] == "Resumed"
    # Pause asks nothing of a paused run, Resume nothing of a running one
    lifecycle.pause()
    panel.run.state = "running"
    lifecycle.resume()
    assert panel.run.told == ["pause", "resume"]
    panel.run.state = "stopping"            # neither: it is on its way out
    lifecycle.toggle_pause()
    assert panel.run.told == ["pause", "resume"]
    RunLifecycle(panel_with(None)).toggle_pause()   # no run: nothing to do, nothing said


def test_stop_stops_only_a_run_that_holds_the_trainer():
    for state, stopped in (("running", True), ("paused", True), ("stopping", True),
                           ("completed", False)):
        panel = panel_with(Run(state))
        RunLifecycle(panel).stop()
        assert (panel.run.told == ["stop"]) == stopped, state
        assert (panel.said == ["Stopping after the current step; the weights are saved"]) \
            == stopped, state


def test_the_buttons_show_the_runs_state_and_the_graphs_reason():
    panel = panel_with(Run("paused"))
    RunLifecycle(panel).update_buttons()
    assert panel.shown.run_state == "paused"
    assert (panel.train_button.enabled, panel.pause_button.enabled, panel.stop_button.enabled,
            panel.setup.enabled) == (False, True, True, False)
    assert panel.pause_button.text == "Resume"
    panel = panel_with(None)
    panel.shown.blocked_reason = "layers/attn: 3 heads do not divide d_model 64"
    RunLifecycle(panel).update_buttons()
    assert panel.shown.run_state == "idle"
    assert (panel.train_button.enabled, panel.pause_button.enabled, panel.stop_button.enabled,
            panel.setup.enabled) == (False, False, False, True)
    assert panel.pause_button.text == "Pause"


class Told:
    """A panel part that records what it is told (``visible``: what isVisible says)."""

    def __init__(self, visible: bool = False):
        self.told, self.visible = [], visible

    def isVisible(self):  # noqa: N802 (Qt's name)
        return self.visible

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.told.append((name, *args, *kwargs.values()))


def ended_panel(tmp_path, curves_shown: bool):
    from tfstudio.gui.training.series import RunSeries
    run = Run("finished")
    run.run_dir, run.series = tmp_path / "run", RunSeries("tiny-gpt · 10:00:00")
    run.series.loss, run.series.params = [3.0, 2.5], 1234
    panel = panel_with(run)
    for part in ("history", "opened_runs", "pacer", "run_ended"):
        setattr(panel, part, Told())
    panel.curves, panel.experts = Told(visible=curves_shown), Told()
    panel._show_figures = panel._show_caption = lambda: None
    panel.show_error = lambda text, title: panel.said.append(f"{title}: {text}")
    return panel


def test_an_ended_run_is_recorded_and_the_views_hidden_meanwhile_draw_when_shown(tmp_path):
    from tfstudio.train.events import Failed, Finished
    panel = ended_panel(tmp_path, curves_shown=False)
    panel.viewed = None
    RunLifecycle(panel)._on_ended(Finished(2, "stopped", 2.5))
    assert panel.history.told == [("update", tmp_path / "run", "stopped", 2, 2.5, 1234)]
    assert panel.curves.told == [] and panel.shown.curves_stale   # drawn when its tab shows
    assert panel.said[-1] == "tiny-gpt · 10:00:00: stopped at step 2 in 0 s; final loss 2.5000"
    failed = ended_panel(tmp_path, curves_shown=True)
    failed.viewed = None
    RunLifecycle(failed)._on_ended(Failed(1, "nan", "the loss stopped being a number"))
    assert failed.history.told[0][2] == "failed" and failed.curves.told == [("refresh",)]
    assert any(line.startswith("Training failed: ") for line in failed.said)
    assert failed.run_ended.told == [("emit", Failed(1, "nan",
                                                     "the loss stopped being a number"))]
