"""Draws each transition of the Train workspace's shown state (:mod:`.shown_state`) on the
views: a look view with nothing of the shown run shows its empty state, never an older run's
look; the weight views load the checkpoint kept at the step, or the nearest kept one; the
positions of a shown run without a look are its own tensors (its loaded weights). The
decisions are functions here (:func:`weights_action`, :func:`positions_waiting`,
:func:`preview_length`), tested without the views."""
from __future__ import annotations

LOAD, SAME = "load", "same"
PREVIEW_POSITIONS = 64   # the positions an untrained graph's preview draws, at most


def weights_action(before, now, host) -> str | None:
    """What a transition from ``before`` to ``now`` (Shown moments) does to the weight views,
    ``host`` holding the weights loaded: LOAD the checkpoint ``now`` reads (another run, or
    another checkpoint than the last moment's, not loaded yet), SAME (those weights are the
    loaded ones: the views are only named for the new step), or None (no past run's weights
    to show)."""
    run, want = now.run, now.weights_step()
    if run is None or run.live or want is None:
        return None
    other = before.run is None or before.run.path != run.path or before.weights_step() != want
    if other and not (host.ready and host.run_dir == run.path and host.step == want):
        return LOAD
    return SAME if host.run_dir == run.path else None


def positions_waiting(run) -> str:
    """Why the shown run's positions are not drawn yet (its weights are not loaded)."""
    if run.checkpoints or run.live:
        return f"{run.name}: its positions appear when its weights load"
    return f"{run.name} saved no weights to read them from"


def preview_length(graph) -> int:
    """The positions an untrained graph's preview draws: its context, at most
    PREVIEW_POSITIONS."""
    return min(PREVIEW_POSITIONS, int(graph.meta.get("context_length") or PREVIEW_POSITIONS))


class ShownViews:
    def __init__(self, panel):
        self.panel = panel  # the TrainingPanel whose views show ``panel.shown``
        panel.shown.listen(self.moved)

    def moved(self, before, now) -> None:
        """One transition of the shown state: a look view with no look for the shown run
        shows its empty state (never an older run's look), and the weight views load the
        checkpoint kept at the step (or the nearest kept one)."""
        panel = self.panel
        if now.look_step() is None:  # (the model has no look on screen for it either)
            reason = now.caption("attention")
            panel.attention.show_empty(reason)
            panel.experts.show_snapshot(None)
            if panel.tabs.currentWidget() is panel.positions:
                self.show_run_positions()
            else:
                panel.positions.show_unavailable("")  # drawn afresh when shown
        action = weights_action(before, now, panel.host)
        if action == LOAD:
            panel.next_token.set_logits(None, str, now.caption("next_token"))
            panel.generation.load_weights(now.run.path, step=now.weights_step())
        elif action == SAME and panel.next_token.logits is not None:
            # the same weights (a step that keeps the same nearest checkpoint, too), named
            # for this step
            panel.next_token.source.setText(f"{panel.view_caption('next_token')} · after "
                                            "your prompt")
        panel.shown_changed.emit()

    def show_run_positions(self) -> None:
        """Positions without a look on screen: the shown run's own tensors (its loaded
        weights), or the canvas's untrained graph when no run is shown."""
        panel = self.panel
        run = panel.shown.now.run
        if run is None:
            self.preview_positions()
            return
        host = panel.host
        if not (host.ready and host.run_dir == run.path):
            panel.positions.show_unavailable(positions_waiting(run))
            return
        model, caption = host.model, panel.view_caption("next_token")
        length = run.config.seq_len if run.config is not None else 64

        def job():
            from ...probes.snapshot import shown_positions
            return shown_positions(model, length)

        panel.background.submit(
            job, lambda data: panel.positions.show_positions(
                data, f"{caption}: the model's own tensors", length),
            key="positions-preview", error=lambda exc: panel.positions.show_unavailable(
                f"The positions of {run.name} cannot be read: {exc}"))

    def preview_positions(self) -> None:
        """Before any run: the positions of the graph on the canvas, freshly initialised."""
        panel = self.panel
        graph = panel.graph_source()

        def job():
            from ...compiler import compile_graph
            from ...probes.snapshot import shown_positions
            length = preview_length(graph)
            return shown_positions(compile_graph(graph), length)

        panel.background.submit(
            job, lambda data: panel.positions.show_positions(
                data, "The graph on the canvas, untrained (learned tables start random)"),
            key="positions-preview", error=lambda exc: panel.positions.show_unavailable(
                f"The positions appear once the graph can be built; now: {exc}"))
