"""The Explain view: a text, a token picker, and the forward pass drawn as a flow of stages
(:mod:`.explain_walk`), each a small picture of the picked token (:mod:`.explain_stages`; its
whole matrix on demand, :mod:`.explain_matrix`); the logit lens as a shaded table; ablation
switches with the span the loss is scored on (:mod:`.explain_ablation`); and the embedding map
(:mod:`.explain_embeddings`). While a run trains it shows the run's latest look inside
(:meth:`ExplainView.show_snapshot`). A caption above it all names, in every state, the run and
the step whose weights it shows. What it shows, and every decision on it, is held in a Qt-free
model (:class:`~.explain_state.ExplainState`); the view draws it.

Self-contained: give it a model and its tokenizer (:meth:`ExplainView.set_model`; the model
must not be training at the time, e.g. :class:`~.model_host.ModelHost`'s) and it computes with
:mod:`tfstudio.probes` (:func:`~.explain_read.compute_explanation`) on a
:class:`~.common.Background` worker when one is given, else at once. ``ablations_changed``
reports the switched-off targets (from its own switches or from :meth:`set_ablations`, which
the canvas calls) so the canvas can draw those blocks as off."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .colours import themed_colour
from .explain_ablation import AblationPage
from .explain_embeddings import EmbeddingsPage
from .explain_matrix import StepCard
from .explain_colours import lens_rgb
from .explain_lines import attention_choices, effect_text, lens_cell, token_choices
from .explain_pictures import stage_tokens, vocab_labels
from .explain_read import ablation_targets, compute_explanation, run_probe_text
from .explain_state import NO_MODEL, ExplainState
from .explain_stages import StagePicture
from .explain_walk import WalkPage, follow_canvas
from .labels import muted, placeholder
from .token_text import display_token

__all__ = ["ExplainView", "compute_explanation", "follow_canvas", "lens_shade"]

LENS_HINT = ("Each layer's residual stream read through the final norm and the head: the "
             "likeliest next token and its probability at each position, darker the surer "
             "(hover a cell for the top 5). Bold underlined: already the model's answer there; "
             "where it first appears shows where it is computed.")


def _with_hint(hint: str, widget: QWidget) -> QWidget:
    page = QWidget()
    column = QVBoxLayout(page)
    column.setContentsMargins(0, 4, 0, 0)
    column.addWidget(muted(hint))
    column.addWidget(widget, 1)
    return page


def _spin(box, low, high, step=None, value=None):
    """A spin box with its range (and step and starting value)."""
    box.setRange(low, high)
    if step is not None:
        box.setSingleStep(step)
    if value is not None:
        box.setValue(value)
    return box


def _row(*widgets) -> QHBoxLayout:
    row = QHBoxLayout()
    for widget in widgets:
        row.addWidget(widget, 1 if isinstance(widget, QLineEdit) else 0)
    return row


def lens_shade(p: float) -> QColor:
    """A lens cell's background: white at probability 0, deep blue at 1."""
    return QColor(*lens_rgb(p))


def fill_lens(table, lens) -> None:
    """A cell per layer and position: the likeliest token there and its probability, the
    cell shaded by that probability; where it is already the model's answer (the last
    layer's likeliest token at that position) the token is bold and underlined."""
    table.clear()
    table.setRowCount(len(lens.layers))
    table.setColumnCount(len(lens.tokens))
    table.setVerticalHeaderLabels(lens.layers)
    table.setHorizontalHeaderLabels([display_token(t) for t in lens.tokens])
    ink = themed_colour("node_text")
    for r in range(len(lens.layers)):
        for c in range(len(lens.tokens)):
            cell = lens_cell(lens, r, c)
            item = QTableWidgetItem(cell.text)
            item.setTextAlignment(Qt.AlignCenter)
            item.setBackground(lens_shade(cell.p))
            item.setForeground(QColor("white") if cell.white_text else ink)
            if cell.answer:
                font = item.font()
                font.setBold(True)
                font.setUnderline(True)
                item.setFont(font)
            item.setToolTip(cell.tooltip)
            table.setItem(r, c, item)


class ExplainView(QWidget):
    ablations_changed = Signal(list)
    stage_changed = Signal(str)   # the block of the stage now explained ("" for sampling)

    def __init__(self, background=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.background = background
        self.state = ExplainState()  # what is shown and every decision on it
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setToolTip("The run and the step whose weights every Explain tab reads")

        self.text = QLineEdit()
        self.text.setPlaceholderText("A text to follow through the model")
        self.text.returnPressed.connect(self.refresh)
        self.token = QComboBox()
        self.token.setToolTip("The token whose next-token prediction the walk ends with")
        self.token.activated.connect(lambda _: self.refresh())
        self.layer = QComboBox()
        self.layer.addItem("every layer", None)
        self.layer.activated.connect(lambda _: self.refresh())
        self.head = _spin(QSpinBox(), 0, 0)
        self.temperature = _spin(QDoubleSpinBox(), 0.0, 5.0, step=0.1, value=1.0)
        self.top_k = _spin(QSpinBox(), 0, 100_000)
        self.top_p = _spin(QDoubleSpinBox(), 0.01, 1.0, step=0.05, value=1.0)
        for box in (self.head, self.temperature, self.top_k, self.top_p):
            box.valueChanged.connect(lambda _: self.refresh())

        self.ablation = self.ablation_page = AblationPage()
        self.switches, self.ablation_report = self.ablation.switches, self.ablation.report
        self.ablation.changed.connect(self._switch_toggled)
        self.walk = WalkPage()
        self.walk.stage_changed.connect(self.stage_changed)
        self.walk.failed.connect(self._failed)
        # the walk's parts, by the names the rest of the app and its tests use
        self.steps_column, self.scroll, self.flow = (self.walk.steps_column, self.walk.scroll,
                                                     self.walk.flow)
        self.previous_button, self.next_button = self.walk.previous_button, self.walk.next_button
        self.stage_label = self.walk.stage_label
        self.lens = QTableWidget()
        self.lens.setEditTriggers(QTableWidget.NoEditTriggers)
        # the columns share the width (a 17-token text fits at 1366 px without a scroll bar)
        self.lens.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.lens.horizontalHeader().setMinimumSectionSize(24)
        self.lens.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.embeddings = self.embedding_page = EmbeddingsPage(background)
        self.embeddings.failed.connect(self._failed)
        for name in ("embedding_plot", "embedding_note", "step_slider", "step_label",
                     "replay_hint"):
            setattr(self, name, getattr(self.embeddings, name))

        self.tabs = QTabWidget()
        self.tabs.addTab(self.walk, "Walk")
        self.tabs.addTab(_with_hint(LENS_HINT, self.lens), "Logit lens")
        self.tabs.addTab(self.ablation, "Ablation")
        self.tabs.addTab(self.embeddings, "Embeddings")
        self.status = placeholder(NO_MODEL)
        self._lay_out()
        self._show_state()

    # the parts whose values change, read where they live
    model = property(lambda self: self.state.model)
    tokenizer = property(lambda self: self.state.tokenizer)
    run_dir = property(lambda self: self.state.run_dir)
    result = property(lambda self: self.state.result)
    error = property(lambda self: self.state.error)
    snapshot_step = property(lambda self: self.state.snapshot_step)
    stage = property(lambda self: self.walk.stage)
    replay = property(lambda self: self.embeddings.replay)
    embedding_points = property(lambda self: self.embeddings.embedding_points)

    def _lay_out(self) -> None:
        look = QPushButton("Explain")
        look.clicked.connect(self.refresh)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.caption)
        column.addLayout(_row(QLabel("Text"), self.text, look))
        # what is looked at, then how the next token is sampled: two rows, so that the view
        # (and the training dock holding it) stays narrow enough for a 1280-wide window
        for pairs in ((("Token", self.token), ("Layer", self.layer), ("Head", self.head)),
                      (("Temperature", self.temperature), ("Top-k", self.top_k),
                       ("Top-p", self.top_p))):
            row = _row(*(w for label, widget in pairs for w in (QLabel(label), widget)))
            row.addStretch(1)
            column.addLayout(row)
        column.addWidget(self.status)
        column.addWidget(self.tabs, 1)

    # ------------------------------------------------------------------ input
    def set_model(self, model, tokenizer, run_dir: str | Path | None = None, *, run: str = "",
                  step: int | None = None, caption: str = "") -> None:
        """The model to explain; ``run_dir``, the run folder its weights come from, lets the
        embedding map replay the run's checkpoints; ``run`` names that run and ``step`` the
        step of the weights, for the caption (``caption``: the whole caption, as the Train
        workspace's shown state writes it)."""
        had_ablations = bool(self.ablations())
        self.state.set_model(model, tokenizer, run_dir, run=run, step=step, caption=caption)
        # a run change leaves nothing of the last run: its text (another tokenizer may not
        # even have its tokens), its stages, its lens, its map
        self.text.clear()
        self._clear_views()
        self.embeddings.set_source(model, tokenizer, self.run_dir)
        self.ablation.set_targets(ablation_targets(model) if model is not None else [])
        if model is not None:
            top_head, layers = attention_choices(model.attention_modules())
            self.head.setRange(0, top_head)
            self.layer.clear()
            for label, index in layers:
                self.layer.addItem(label, index)
        if had_ablations:  # the old model's switches are gone: the canvas shows none off
            self.ablations_changed.emit([])
        self._show_state()

    def set_weights_caption(self, caption: str) -> None:
        """The Train workspace's caption for the weights loaded (another step asked for
        may have the same nearest checkpoint: the weights stay, the caption says so)."""
        if self.model is not None and caption != self.state.weights_caption:
            self.state.weights_caption = caption
            self._show_state()

    def _show_state(self) -> None:
        """The caption and the status line the state gives (hidden where they say nothing)."""
        caption, status = self.state.caption(), self.state.status()
        self.caption.setText(caption)
        self.caption.setVisible(bool(caption))
        if status:
            self.status.setText(status)
        self.status.setVisible(bool(status))

    def show_snapshot(self, snapshot: dict, run: str = "") -> None:
        """While a run trains (its weights are not in the app yet): the walk of its latest look
        inside, a picture per step of the probe text's last token, and which step it is (of
        the run named ``run``)."""
        try:
            if not self.state.takes_look():
                return
            walk = snapshot.get("walk")
            if not walk:   # a look whose file kept no walk: the one shown stays, named
                if self.snapshot_step is not None:
                    self.status.setText(self.state.training_status(
                        look_without_walk=int(snapshot.get("step", 0))))
                return
            self._clear_views()
            role = walk.get("stream_role", "tokens")
            tokens = list(snapshot["tokens"][role])
            position, step = int(walk["position"]), int(snapshot.get("step", 0))
            summaries = [walk["steps"][key] for key in sorted(walk["steps"])]

            def picture(i: int) -> StagePicture:
                return StagePicture(summaries[i], tokens, position)
            self.walk.show_stages(summaries, [picture(i) for i in range(len(summaries))],
                                  picture, 0)
            self.state.show_look(step, tokens[position], run)
            self._show_state()
            self.tabs.setCurrentIndex(0)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _clear_views(self) -> None:
        """Every view back to empty: nothing shown belongs to a state the user has left."""
        self.state.clear()
        self.walk.clear()
        self.lens.clear()
        self.lens.setRowCount(0)
        self.lens.setColumnCount(0)
        self.token.clear()
        self.ablation_report.setText("")
        self.embeddings.clear()

    def start_on(self, text: str = "") -> None:
        """Explain ``text`` unless the user typed one; with none, the run's own probe text or
        task example (read off the GUI thread)."""
        if self.model is None or self.text.text().strip():
            return
        if text.strip() or self.run_dir is None:
            self.text.setText(text)
            self.refresh()
            return
        run_dir, model = self.run_dir, self.model

        def chosen(found: str) -> None:
            if self.state.accepts(model) and not self.text.text().strip():
                self.text.setText(found)
                self.refresh()

        if self.background is None:
            chosen(run_probe_text(run_dir))
        else:
            self.background.submit(lambda: run_probe_text(run_dir), chosen, key="explain-text",
                                   error=lambda exc: None)

    def set_text(self, text: str) -> None:
        self.text.setText(text)

    def ablations(self) -> list[str]:
        return self.ablation.ablations()

    def set_ablations(self, targets: list[str]) -> None:
        """Switch exactly ``targets`` off (names as :func:`ablation_targets` lists them)."""
        self.ablation.set_ablations(targets)
        self.ablations_changed.emit(self.ablations())
        self.refresh()

    def _switch_toggled(self) -> None:
        self.ablations_changed.emit(self.ablations())
        self.refresh()

    # ------------------------------------------------------------------ the walk's stages
    def pictures(self) -> list[StagePicture]:
        return self.walk.pictures()

    def move_stage(self, step: int) -> None:
        self.walk.move_stage(step)

    def set_stage(self, index: int) -> None:
        self.walk.set_stage(index)

    def show_block(self, path: tuple, node_ids: list[str]) -> None:
        self.walk.show_block(path, node_ids)

    def show_embedding_step(self, step: int) -> None:
        self.embeddings.show_embedding_step(step)

    # ------------------------------------------------------------------ computing
    def refresh(self) -> None:
        """Recompute for the current choices (never raises: problems show in the view)."""
        if self.model is None or not self.text.text().strip():
            return
        text = self.text.text()
        model = self.model
        # the picked token belongs to the text it was picked in: a new text starts at its last
        args = (model, self.tokenizer, text, self.state.position(text, self.token.currentData()),
                self.head.value(), self.layer.currentData(),
                (self.temperature.value(), self.top_k.value(), self.top_p.value()),
                self.ablations(), self.ablation.span_choice())
        def shown(result: dict) -> None:
            if self.state.accepts(model):   # not the answer for a run that has since changed
                self._show(result)

        def failed(exc: Exception) -> None:
            if self.state.accepts(model):
                self._failed(exc)

        if self.background is None:
            try:
                shown(compute_explanation(*args))
            except (ValueError, RuntimeError) as exc:
                failed(exc)
        else:
            self.background.submit(lambda: compute_explanation(*args), shown,
                                   key="explain", error=failed)

    def _failed(self, exc: Exception) -> None:
        self._clear_views()   # no card of an earlier text stays under the message
        self.state.failed(exc)
        self._show_state()

    def _show(self, result: dict) -> None:
        try:
            self.state.shown(result)
            walk = result["walk"]
            self._show_state()
            self._fill_tokens(walk)
            self._fill_steps(walk)
            fill_lens(self.lens, result["lens"])
            self.ablation_report.setText(effect_text(result["ablation"],
                                                     result.get("span_note", "")))
            self.embeddings.fill(result["embeddings"],
                                 walk.tokens[walk.stream_role][walk.position])
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _fill_tokens(self, walk) -> None:
        tokens = walk.tokens[walk.stream_role]
        self.token.blockSignals(True)
        self.token.clear()
        for label, i in token_choices(tokens):
            self.token.addItem(label, i)
        self.token.setCurrentIndex(walk.position)
        self.token.blockSignals(False)

    def _fill_steps(self, walk) -> None:
        tokens = {role: list(t) for role, t in walk.tokens.items()}
        names = self.tokenizer.token_strings if self.tokenizer is not None else None
        vocab = vocab_labels(names, np.asarray(walk.logits).shape[-1])
        summaries = walk.summaries()

        def picture(i: int) -> StagePicture:
            step = walk.steps[i]
            labels, position = stage_tokens(step.block, tokens, walk.stream_role, walk.position)

            def matrix() -> StepCard:
                return StepCard(step, labels, vocab_labels=vocab, token_names=names,
                                position=position if position >= 0 else None)
            return StagePicture(summaries[i], labels, position, names, matrix=matrix)
        self.ablation.set_length(len(tokens.get(walk.stream_role, [])))
        self.walk.show_stages(summaries, [picture(i) for i in range(len(summaries))], picture,
                              self.walk.stage)
