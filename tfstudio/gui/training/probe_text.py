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
        """Both boxes name ``text``, the text of the look shown; not while the user types in
        one, nor for a live look read before the text was changed (the next one reads it)."""
        panel = self.panel
        boxes = (panel.setup.probe_text, panel.attention.text)
        if not text or any(box.hasFocus() for box in boxes):
            return
        if panel.training and panel.viewed is not None and panel.viewed.live \
                and text != panel.run.config.probe_text:
            return
        self.show(text)

    def show(self, text: str) -> None:
        """Both boxes name ``text``; Run setup previews its tokens. (A text set here is sent to
        no run: the boxes send on Enter or when left, never on ``setText``.)"""
        for box in (self.panel.setup.probe_text, self.panel.attention.text):
            if box.text() != text:
                box.setText(text)
