"""The one step control of the Train workspace: under every view of the model's insides
(attention, positions, next token, experts), a line naming what they show ("tiny-gpt ·
14:02:03 · step 300 of 400 · following training"), the slider over the steps that kept a
look inside, and "Follow training". One control for all those views, so none of them follows
a slider the user cannot see."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSlider, QWidget

from ..elided_label import ElidedLabel
from .step_slider import follow_tip, follows_after_move, handle_at, slider_moves, step_at


class StepBar(QWidget):
    step_requested = Signal(int)      # the user moved the slider to this step
    follow_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.steps: list[int] = []
        self.live = True   # the steps are a training run's that is still adding to them
        # one line: a narrow window or a long run name elides it rather than growing wide
        self.caption = ElidedLabel()
        self.caption.setProperty("role", "heading")
        self.caption.setToolTip("What the views of the model's insides show: which run, the "
                                "step whose weights made the look, and whose text")
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setEnabled(False)
        self.slider.setToolTip("Replay the looks inside kept during training (shared by "
                               "Attention, Positions, Next token and Experts)")
        self.slider.valueChanged.connect(self._slider_moved)
        self.follow = QCheckBox("Follow training")
        self.follow.setChecked(True)
        self.follow.setToolTip(follow_tip(True))
        self.follow.toggled.connect(self.follow_toggled)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(self.caption, 3)
        row.addWidget(QLabel("Step"))
        row.addWidget(self.slider, 2)
        row.addWidget(self.follow)

    def set_caption(self, text: str) -> None:
        if self.caption.text() != text:
            self.caption.setText(text)

    def set_steps(self, steps: list[int], current: int | None = None) -> None:
        """The steps that have a look inside; the handle goes to ``current`` when it is one."""
        self.steps = list(steps)
        self.slider.blockSignals(True)
        self.slider.setEnabled(slider_moves(self.steps))
        self.slider.setRange(0, max(0, len(self.steps) - 1))
        handle = handle_at(self.steps, current)
        if handle is not None:
            self.slider.setValue(handle)
        self.slider.blockSignals(False)

    def shown_step(self) -> int | None:
        """The step under the handle (None: no steps)."""
        return step_at(self.steps, self.slider.value())

    def set_follow(self, on: bool, *, quiet: bool = False) -> None:
        if quiet:
            self.follow.blockSignals(True)
        self.follow.setChecked(on)
        if quiet:
            self.follow.blockSignals(False)

    def set_live(self, live: bool) -> None:
        """Whether the steps belong to a run that is training: only then is there anything
        to follow (a finished or opened run's newest look is just its last)."""
        if live == self.live:
            return
        self.live = live
        self.follow.setEnabled(live)
        self.follow.setToolTip(follow_tip(live))
        if not live:
            self.set_follow(False, quiet=True)

    def _slider_moved(self, index: int) -> None:
        step = step_at(self.steps, index)
        if step is not None:
            self.set_follow(follows_after_move(self.steps, index, self.live))
            self.step_requested.emit(step)
