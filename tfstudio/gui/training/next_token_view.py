"""Next token: the model's top candidates after a prompt, and what sampling does to them.

The bars are computed by the engine's own ``next_token_view`` (tfstudio.train.sampling) from the
logits of the last prompt token: temperature divides the logits, top-k keeps the k most likely,
top-p the smallest set reaching probability p. Moving a slider recomputes at once from the
same logits (no model call). Outlined bars are the distribution after temperature alone; filled
bars what is left after the filters, renormalised; hatched grey bars were filtered out.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .. import theme
from .labels import muted
from .next_token_lines import (NO_PREDICTION, bars, chart_top, chart_x_range, drawable,
                               from_sliders, prompt_html, setting_labels, summary_line,
                               takes_prompt, tick_label, to_sliders)
from .picture_export import ExportButton
from .plots import layout_widget, menu_later_plot, styled_plot

CANDIDATES = 20


class NextTokenView(QWidget):
    prompt_edited = Signal(str)
    generate_requested = Signal(str, int)     # prompt, new tokens
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.logits: np.ndarray | None = None
        self.decode = None
        self.state = None  # the last NextTokenView computed
        self._ticks: list | None = None  # the candidates' labels under the bars
        self._generated_from = 0
        self.prompt = QLineEdit()
        self.source = muted()
        self.temperature = QSlider(Qt.Horizontal)
        self.top_k = QSlider(Qt.Horizontal)
        self.top_p = QSlider(Qt.Horizontal)
        self.t_label, self.k_label, self.p_label = QLabel(), QLabel(), QLabel()
        self.plots = layout_widget()
        self.chart = styled_plot(menu_later_plot(self.plots.ci), "Next-token candidates",
                                 "probability", "")
        self.tempered_bars = pg.BarGraphItem(x=[], height=[], width=0.8)
        self.kept_bars = pg.BarGraphItem(x=[], height=[], width=0.8)
        self.filtered_bars = pg.BarGraphItem(x=[], height=[], width=0.8)
        self.summary = muted()
        self.export = ExportButton(lambda: self.plots, "next-token chart")
        self.new_tokens = QSpinBox()
        self.generate = QPushButton("Generate")
        self.stop = QPushButton("Stop")
        self.output = QPlainTextEdit()
        self._set_up_prompt_and_sliders()
        self._set_up_chart()
        self._set_up_generation()
        self._lay_out()
        self.set_generation_available(False, "Generation needs the trained weights: they are "
                                             "loaded when a run ends or a past run is opened.")
        self.recompute()

    def _set_up_prompt_and_sliders(self) -> None:
        self.prompt.setPlaceholderText("A prompt: the chart shows what the model would write next")
        self.prompt.textEdited.connect(self.prompt_edited)
        self.temperature.setRange(0, 300)  # hundredths
        self.temperature.setValue(100)
        self.top_k.setRange(0, 50)
        self.top_p.setRange(1, 100)  # hundredths
        self.top_p.setValue(100)
        for slider in (self.temperature, self.top_k, self.top_p):
            slider.valueChanged.connect(lambda _: self.recompute())

    def _set_up_chart(self) -> None:
        self.chart.setYRange(0, 1)
        self.chart.setMouseEnabled(x=False, y=False)
        for item in (self.tempered_bars, self.filtered_bars, self.kept_bars):
            self.chart.addItem(item)

    def _set_up_generation(self) -> None:
        self.new_tokens.setRange(1, 2000)
        self.new_tokens.setValue(120)
        self.generate.clicked.connect(
            lambda: self.generate_requested.emit(self.prompt.text(), self.new_tokens.value()))
        self.stop.setEnabled(False)
        self.stop.clicked.connect(self.stop_requested)
        self.output.setReadOnly(True)
        self.output.setPlaceholderText("Generated text streams here, token by token, sampled "
                                       "with the settings above.")

    def _sliders(self) -> QGridLayout:
        sliders = QGridLayout()
        for row, (name, slider, label, tip) in enumerate((
                ("Temperature", self.temperature, self.t_label,
                 "Divides the logits: below 1 sharpens, above 1 flattens, 0 is greedy"),
                ("Top-k", self.top_k, self.k_label, "Keep only the k most likely (0: all)"),
                ("Top-p", self.top_p, self.p_label,
                 "Keep the smallest set of tokens whose probability reaches p"))):
            caption = QLabel(name)
            caption.setToolTip(tip)
            slider.setToolTip(tip)
            sliders.addWidget(caption, row, 0)
            sliders.addWidget(slider, row, 1)
            sliders.addWidget(label, row, 2)
        sliders.setColumnStretch(1, 1)
        return sliders

    def _lay_out(self) -> None:
        """The chart gets the whole height on the left; sampling and generation sit right."""
        prompt_row = QHBoxLayout()
        prompt_row.addWidget(QLabel("Prompt"))
        prompt_row.addWidget(self.prompt, 1)
        gen_row = QHBoxLayout()
        for widget in (self.generate, self.stop, QLabel("new tokens"), self.new_tokens):
            gen_row.addWidget(widget)
        gen_row.addStretch(1)
        gen_row.addWidget(self.export)
        side = QWidget()
        side.setMinimumWidth(250)
        side.setMaximumWidth(380)
        controls = QVBoxLayout(side)
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addLayout(self._sliders())
        controls.addWidget(self.summary)
        controls.addLayout(gen_row)
        controls.addWidget(self.output, 1)
        body = QHBoxLayout()
        body.addWidget(self.plots, 1)
        body.addWidget(side)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.setSpacing(4)
        column.addLayout(prompt_row)
        column.addWidget(self.source)
        column.addLayout(body, 1)

    # ------------------------------------------------------------------ settings
    @property
    def settings(self) -> tuple[float, int, float]:
        return from_sliders(self.temperature.value(), self.top_k.value(), self.top_p.value())

    def set_settings(self, temperature: float | None = None, top_k: int | None = None,
                     top_p: float | None = None) -> None:
        for slider, value in zip((self.temperature, self.top_k, self.top_p),
                                 to_sliders(temperature, top_k, top_p)):
            if value is not None:
                slider.setValue(value)

    # ------------------------------------------------------------------ data
    def set_prompt(self, text: str) -> None:
        if takes_prompt(self.prompt.text(), text, self.prompt.hasFocus()):
            self.prompt.setText(text)

    def set_logits(self, logits: np.ndarray | None, decode, source: str = "") -> None:
        """The logits [V] after the prompt's last token; ``decode(id) -> str``."""
        self.logits = None if logits is None else np.asarray(logits, dtype=np.float32)
        self.decode = decode
        self.source.setText(source)
        self.recompute()

    def recompute(self) -> None:
        t, k, p = self.settings
        for label, text in zip((self.t_label, self.k_label, self.p_label),
                               setting_labels(t, k, p)):
            label.setText(text)
        if self.logits is None:
            self.state = None
            self._draw([])
            self.summary.setText(NO_PREDICTION)
            return
        import torch

        from ...train.sampling import next_token_view

        decode = self.decode or str
        self.state = next_token_view(torch.from_numpy(self.logits), decode, t, k, p,
                                     n=min(CANDIDATES, len(self.logits)))
        self._draw(self.state.candidates)
        self.summary.setText(summary_line(self.state.kept, len(self.logits), self.state.entropy))

    def _draw(self, candidates) -> None:
        t = theme.current()
        drawn = bars(candidates)
        accent = QColor(t.accent)
        (x, tempered), (kept_x, final) = drawn["outlined"], drawn["filled"]
        self.tempered_bars.setOpts(x=x, height=tempered, width=0.8, brush=QBrush(Qt.NoBrush),
                                   pen=pg.mkPen(t.muted_text, width=1))
        self.kept_bars.setOpts(x=kept_x, height=final, width=0.56,
                               brush=pg.mkBrush(accent), pen=pg.mkPen(accent))
        grey = QColor(t.muted_text)
        hatched_x, hatched = drawn["hatched"]
        self.filtered_bars.setOpts(x=hatched_x, height=hatched, width=0.8,
                                   brush=QBrush(grey, Qt.BDiagPattern), pen=pg.mkPen(grey))
        # each look inside redrew both axes (new ticks, a new top): the candidates' labels
        # are set when they change, and the top moves through 0.1, 0.2, 0.5 and 1
        ticks = [(float(i), tick_label(c.text)) for i, c in enumerate(candidates)]
        if ticks != self._ticks:
            self._ticks = ticks
            self.chart.getAxis("bottom").setTicks([ticks])
        self.chart.setYRange(0, chart_top([*tempered, *(c.prob_final for c in candidates)]),
                             padding=0)
        self.chart.setXRange(*chart_x_range(len(candidates)), padding=0)

    def drawn_bars(self) -> list[tuple[str, float]]:
        """(token, probability) of the filled bars, left to right: what sampling can draw."""
        return drawable(self.state.candidates) if self.state is not None else []

    # ------------------------------------------------------------------ generation
    def set_generation_available(self, available: bool, reason: str = "") -> None:
        self.generate.setEnabled(available)
        self.generate.setToolTip("" if available else reason)
        self.prompt.setReadOnly(False)

    def generation_started(self, prompt: str) -> None:
        self.output.clear()
        self.output.appendHtml(prompt_html(prompt, theme.current().muted_text))
        cursor = self.output.textCursor()
        cursor.movePosition(QTextCursor.End)
        self._generated_from = cursor.position()
        self.generate.setEnabled(False)
        self.stop.setEnabled(True)

    def show_generated(self, text: str) -> None:
        """Everything generated so far (decoded whole, so a character split over two tokens
        appears once it is complete)."""
        cursor = self.output.textCursor()
        cursor.setPosition(self._generated_from)
        cursor.movePosition(QTextCursor.End, QTextCursor.KeepAnchor)
        cursor.insertText(text, QTextCharFormat())  # plain: only the prompt is muted
        self.output.setTextCursor(cursor)
        self.output.ensureCursorVisible()

    def generation_finished(self, message: str = "") -> None:
        self.generate.setEnabled(True)
        self.stop.setEnabled(False)
        if message:
            self.source.setText(message)

    def generated_text(self) -> str:
        return self.output.toPlainText()
