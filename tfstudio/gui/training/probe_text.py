"""One probe text for every view: Run setup's box and the Attention tab's name the text that the
look shown read, and a text typed in either is the one the next look reads."""
from __future__ import annotations


class ProbeText:
    def __init__(self, panel):
        self.panel = panel  # the TrainingPanel whose boxes and run it keeps in step

    def set(self, text: str) -> None:
        """The user's text, in both boxes; a running trainer reads it at its next look, a
        loaded model now."""
        panel = self.panel
        self.show(text)
        if not text.strip():
            return
        panel.shown.ask(panel.run.run_dir if panel.training else None, text)
        if panel.training:
            panel.run.set_probe_text(text)
            panel.message(f"The next look inside (every {panel.run.config.probe_every} steps) "
                          "reads the new probe text")
        elif panel.host.ready:
            panel.host.snapshot(text, panel.show_snapshot, panel._job_failed)
        elif panel.shown.now.weights_step() is not None:  # the step's weights are loading
            panel.message(f"The weights of step {panel.shown.now.weights_step():,} are still "
                          "loading: press Look again once they are in")

    def show_look(self, text: str | None) -> None:
        """Both boxes name what the shown state decides for a look that read ``text``
        (:meth:`ShownState.box_text`)."""
        panel = self.panel
        typing = any(box.hasFocus() for box in (panel.setup.probe_text, panel.attention.text))
        shown = panel.shown.box_text(text or "", typing)
        if shown is not None:
            self.show(shown)

    def show(self, text: str) -> None:
        """Both boxes name ``text``; Run setup previews its tokens. (A text set here is sent to
        no run: the boxes send on Enter or when left, never on ``setText``.)"""
        for box in (self.panel.setup.probe_text, self.panel.attention.text):
            if box.text() != text:
                box.setText(text)
