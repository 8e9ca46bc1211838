"""The Explain view: a text, a token picker, and the forward pass as stages, one small picture of
the picked token per step (:mod:`.explain_stages`; its whole matrix on demand) walked with
Previous / Next or the arrow keys, the canvas lighting the block explained
(:func:`follow_canvas`); the logit lens as a shaded table; and ablation switches (a head, an
expert, a sublayer) with what they change. While a run trains it shows the run's latest look
inside (:meth:`ExplainView.show_snapshot`), with its step.

Self-contained: give it a model and its tokenizer (:meth:`ExplainView.set_model`; the model
must not be training at the time, e.g. :class:`~.model_host.ModelHost`'s) and it computes with
:mod:`tfstudio.probes` on a :class:`~.common.Background` worker when one is given, else at once.
``ablations_changed`` reports the switched-off targets (from its own switches or from
:meth:`set_ablations`, which the canvas calls) so the canvas can draw those blocks as off. An
Embeddings tab maps the token embedding table to 2D (PCA) with each token's nearest neighbours
by cosine; for a run folder (``set_model(..., run_dir)``) its step slider replays the map at
every checkpoint the run kept, each projection aligned to the latest one
(:func:`tfstudio.probes.embedding_replay`) so points move as the embeddings learn instead of
jumping when a principal axis flips."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .colours import themed_colour
from .labels import display_token, muted, placeholder
from .explain_stages import StagePicture, probability
from .heatmap import Heatmap
from .plots import layout_widget, styled_plot

MAX_ROWS_SHOWN = 64   # a step's heatmap shows at most this many rows (positions)
MAX_COLS_SHOWN = 256  # ... and columns (features, vocabulary entries)
WHOLE_TABLE = 128     # vocabularies up to this size are mapped whole, larger ones by the text
MAP_MARGIN = 0.08     # the replayed map's fixed axes leave this share of room around the points

NO_MODEL = ("Train or open a run, type a text and press Explain: every step from the token ids "
            "to the probabilities appears here. While a run trains, each look it takes inside "
            "the model shows here, with its step.")
NO_TEXT = ("Type a text and press Explain (or Enter): every step from the token ids to the "
           "probabilities appears here.")
WALK_HINT = ("The forward pass of the picked Token, one stage per step in the order the model "
             "computes it: its vector as a strip, one number per position as bars, its row of "
             "attention, the likeliest next tokens. Next / Previous (or the arrow keys) walk "
             "through it and light the block up on the canvas; click a block to jump to it. "
             "Layer and Head open up one attention head.")
LENS_HINT = ("Each layer's residual stream read through the final norm and the head: the "
             "likeliest next token and its probability at each position, darker the surer "
             "(hover a cell for the top 5). Bold underlined: already the model's answer there; "
             "where it first appears shows where it is computed.")
ABLATION_HINT = ("Tick a block, head or expert to switch it off (no retraining) and see the loss "
                 "and the next-token distribution change; the canvas draws the block off. "
                 "Right-click a block on the canvas does the same.")


def compute_explanation(model, tokenizer, text: str, position: int, head: int,
                        layer: int | None, sampling: tuple[float, int, float],
                        ablate: list[str]) -> dict:
    """Everything the view shows, as plain data (runs on the worker thread)."""
    from ... import probes

    inputs = probes.probe_inputs(model, tokenizer, text)
    temperature, top_k, top_p = sampling
    walk = probes.forward_walk(model, inputs, position=position, head=head, layer=layer,
                               temperature=temperature, top_k=top_k, top_p=top_p)
    lens = probes.logit_lens(model, inputs, tokenizer)
    effect = (probes.ablation_effect(model, inputs, ablate, tokenizer, walk.position)
              if ablate else None)
    return {"text": text, "walk": walk, "lens": lens, "ablation": effect,
            "targets": ablation_targets(model),
            "embeddings": embedding_read_out(model, tokenizer, text)}


def label_offsets(coords: np.ndarray, labels: list[str], ranges,
                  cell: tuple[float, float] = (0.0075, 0.04)) -> np.ndarray:
    """[n, 2] data-space shifts that stack labels which would overlap (untrained tokens often
    sit on one spot) upwards, one line apart, instead of printing them over each other.
    ``cell``: a character's width and a line's height, as shares of the axes' spans."""
    (x0, x1), (y0, y1) = ranges
    span = np.array([max(x1 - x0, 1e-12), max(y1 - y0, 1e-12)])
    char, line = cell
    placed: list[tuple[float, float, float]] = []  # (x, y, half width), in axis shares
    shifts = np.zeros_like(coords, dtype=np.float64)
    for i, ((x, y), label) in enumerate(zip(coords / span, labels)):
        half, lift = char * max(len(display_token(label)), 1) / 2, 0.0
        while any(abs(x - px) < half + ph and abs(y + lift - py) < line
                  for px, py, ph in placed):
            lift += line
        placed.append((x, y + lift, half))
        shifts[i, 1] = lift * span[1]
    return shifts


def run_probe_text(run_dir: str | Path) -> str:
    """A text to start a run's walk on: its own probe text, else an example of its task or
    the opening of its corpus."""
    from ...data import load_corpus
    from ...probes import default_probe_text
    from ...runs.folder import RunFolder

    try:
        config = RunFolder(run_dir).config()
        return config.probe_text or default_probe_text(load_corpus(config.corpus))
    except (OSError, ValueError):  # a corpus that moved: the fallback text still walks
        return default_probe_text()


def _with_hint(hint: str, widget: QWidget) -> QWidget:
    page = QWidget()
    column = QVBoxLayout(page)
    column.setContentsMargins(0, 4, 0, 0)
    column.addWidget(muted(hint))
    column.addWidget(widget, 1)
    return page


def mapped_ids(model, tokenizer, text: str) -> list[int]:
    """The tokens the embedding map shows: the whole table when it is small, else the text's."""
    vocab = int(getattr(model, "vocab_size", 0) or 0)
    return list(range(vocab)) if 0 < vocab <= WHOLE_TABLE else tokenizer.encode(text)


def embedding_read_out(model, tokenizer, text: str) -> dict | None:
    """The 2D map of the token embedding table (see :func:`mapped_ids`); None for a model
    without one."""
    from ... import probes

    try:
        return probes.embedding_map(model, mapped_ids(model, tokenizer, text), tokenizer)
    except (ValueError, LookupError):  # fewer than 2 tokens, or no embedding table
        return None


def map_range(maps: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    """((x0, x1), (y0, y1)) holding every map's points with a margin: fixed axes, so a replay
    shows the points move rather than the axes rescale."""
    points = np.concatenate([m["coords"] for m in maps])
    low, high = points.min(axis=0), points.max(axis=0)
    pad = np.maximum(high - low, 1e-6) * MAP_MARGIN
    return ((low[0] - pad[0], high[0] + pad[0]), (low[1] - pad[1], high[1] + pad[1]))


def ablation_targets(model) -> list[str]:
    """Every switch the model offers: each sublayer, each head, each expert."""
    from ...nn import CrossAttention, MixtureOfExperts, SelfAttention
    from ...probes._util import key_name

    out = []
    for key, module in model.blocks():
        if not getattr(module, "residual_branch", False):
            continue
        name = key_name(key)
        out.append(name)
        if isinstance(module, (SelfAttention, CrossAttention)):
            out += [f"{name}:head={h}" for h in range(module.heads)]
        if isinstance(module, MixtureOfExperts):
            out += [f"{name}:expert={e}" for e in range(module.num_experts)]
    return out


class StepCard(QFrame):
    """One step: its name and shape, its formula, the picked token's numbers in a line, and
    the tensor as a heatmap (a row per position; the vocabulary's tokens name the columns of
    the logits and probabilities)."""

    def __init__(self, step, row_labels: list[str], parent: QWidget | None = None, *,
                 vocab_labels: list[str] | None = None, position: int | None = None,
                 token_names: Callable[[list[int]], list[str]] | None = None):
        super().__init__(parent)
        self.name = step.name
        self.setFrameShape(QFrame.StyledPanel)
        value = np.asarray(step.value)
        shape = " x ".join(map(str, value.shape)) or "scalar"
        title = QLabel(f"<b>{step.name}</b>  [{shape}]")
        title.setTextFormat(Qt.RichText)
        formula = muted(step.formula)
        formula.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.picked = QLabel(picked_line(value, step.kind, row_labels, position, token_names))
        self.picked.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.picked.setWordWrap(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.addWidget(title)
        column.addWidget(formula)
        if self.picked.text():
            column.addWidget(self.picked)
        matrix = value.reshape(1, -1) if value.ndim <= 1 else value.reshape(value.shape[0], -1)
        matrix = matrix[:MAX_ROWS_SHOWN, :MAX_COLS_SHOWN].astype(np.float64)
        allowed = np.isfinite(matrix)
        kind = "sequential" if step.kind == "sampling" or "softmax" in step.name or \
            value.dtype == bool or np.issubdtype(value.dtype, np.integer) else "diverging"
        rows, cols = card_labels(step, matrix.shape, row_labels, vocab_labels)
        square = rows is not None and cols is not None and cols == rows  # an attention map
        self.heatmap = Heatmap(self, kind=kind, labels=cols is not None, min_size=60,
                               square=square)
        self.heatmap.set_data(np.where(allowed, matrix, 0.0), rows, cols, allowed)
        # a card as tall as its rows need, not as the view: the walk is a column to scroll
        self.heatmap.setFixedHeight(min(220, 60 + 8 * matrix.shape[0]))
        column.addWidget(self.heatmap)


def card_labels(step, shape: tuple[int, int], row_labels: list[str],
                vocab_labels: list[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """(rows, columns) naming a step's heatmap: positions down, and across the keys of an
    attention map, the vocabulary of logits and probabilities, else feature numbers."""
    n_rows, n_cols = shape
    rows = row_labels[:n_rows] if len(row_labels) >= n_rows else None
    if n_rows == 1 and len(row_labels) == n_cols:
        return ["id" if step.name.endswith("token ids") else "value"], row_labels
    over_vocab = step.kind == "sampling" or step.name.endswith(": logits")
    if vocab_labels is not None and over_vocab and len(vocab_labels) >= n_cols:
        return (rows if n_rows > 1 else ["p"]), vocab_labels[:n_cols]
    if rows is None:
        return None, None
    if step.name.endswith((": scores", ": mask", ": softmax")) and n_cols == len(rows):
        return rows, rows
    return rows, [str(j) for j in range(n_cols)]


def picked_line(value: np.ndarray, kind: str, row_labels: list[str], position: int | None,
                token_names: Callable[[list[int]], list[str]] | None = None) -> str:
    """The picked token's numbers at this step, as one line of text (the heatmap shows every
    position; hover a cell for any other value); for probabilities, the likeliest tokens."""
    if position is None or not 0 <= position < len(row_labels):
        return ""
    token = display_token(row_labels[position])
    if kind == "sampling" and value.ndim == 1 and token_names is not None:
        top = [int(i) for i in np.argsort(-value, kind="stable")[:5] if value[i] > 0]
        return "likeliest next: " + " · ".join(
            f"{display_token(name)} {probability(value[i])}"
            for i, name in zip(top, token_names(top)))
    if value.ndim == 1 and value.shape[0] == len(row_labels):
        return f"at {token} (position {position}): {value[position]:.4g}"
    if value.ndim < 2 or value.shape[0] != len(row_labels):
        return ""
    row = value[position].reshape(-1).astype(np.float64)
    shown = ", ".join(f"{v:.3g}" for v in row[:8])
    more = f", … ({row.size} values)" if row.size > 8 else ""
    return f"at {token} (position {position}): {shown}{more}"


def _spin(box, low, high, step=None, value=None):
    """A spin box with its range (and step and starting value)."""
    box.setRange(low, high)
    if step is not None:
        box.setSingleStep(step)
    if value is not None:
        box.setValue(value)
    return box


def _replay_slider(chosen) -> QSlider:
    slider = QSlider(Qt.Horizontal)
    slider.setRange(0, 0)
    slider.setPageStep(1)
    slider.setToolTip("Replay the map over training: one position per checkpoint the run kept")
    slider.valueChanged.connect(chosen)
    return slider


def _row(*items, stretch: bool = False) -> QHBoxLayout:
    """Widgets side by side; an item ``(widget, n)`` takes stretch n."""
    row = QHBoxLayout()
    for item in items:
        widget, factor = item if isinstance(item, tuple) else (item, 0)
        row.addWidget(widget, factor)
    if stretch:
        row.addStretch(1)
    return row


def _column(*items) -> QWidget:
    """A widget holding widgets and layouts top to bottom; ``(widget, n)`` takes stretch n."""
    page = QWidget()
    column = QVBoxLayout(page)
    for item in items:
        widget, factor = item if isinstance(item, tuple) else (item, 0)
        if isinstance(widget, QHBoxLayout | QVBoxLayout):
            column.addLayout(widget, factor)
        else:
            column.addWidget(widget, factor)
    return page


def lens_shade(p: float) -> QColor:
    """A lens cell's background: white at probability 0, deep blue at 1."""
    t = min(max(float(p), 0.0), 1.0)
    return QColor(int(255 - 215 * t), int(255 - 175 * t), int(255 - 75 * t))


def _same_copy(block: str, other: str) -> bool:
    """Whether two blocks sit in the same copy of their groups ("layers.1.attn", "layers.1.ffn")."""
    copies = [p for p in block.split(".") if p.isdigit()]
    return bool(copies) and copies == [p for p in other.split(".") if p.isdigit()]


def block_node(block: str) -> tuple[tuple[str, ...], str]:
    """"layers.0.attn" -> (("layers",), "attn"): the group path on the canvas and the node a
    step's block is (copy indices dropped: every copy is the same node on the canvas)."""
    parts = [p for p in block.split(".") if not p.isdigit()]
    return tuple(parts[:-1]), parts[-1] if parts else ""


def light_block(scene, block: str) -> None:
    """Select ``block`` ("layers.0.attn") on the canvas, or the group holding it when the
    canvas shows a level above it."""
    path, node = block_node(block)
    here = tuple(scene.path)
    if node and path[:len(here)] == here:
        scene.select_nodes([path[len(here)] if len(path) > len(here) else node])


def follow_canvas(explain, scene) -> None:
    """Link ``explain``'s stages and the canvas ``scene`` both ways: the stage's block lit,
    a block selected there explained."""
    def lit(block: str) -> None:
        try:
            light_block(scene, block)
        except RuntimeError:   # the canvas is gone (the window is closing)
            pass

    def picked() -> None:
        try:
            explain.show_block(scene.path, scene.selected_node_ids())
        except RuntimeError:
            pass
    explain.stage_changed.connect(lit)
    scene.selectionChanged.connect(picked)


class ExplainView(QWidget):
    ablations_changed = Signal(list)
    stage_changed = Signal(str)   # the block of the stage now explained ("" for sampling)

    def __init__(self, background=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.background = background
        self.model = None
        self.tokenizer = None
        self.run_dir: Path | None = None  # the run whose checkpoints the embedding map replays
        self.result: dict | None = None
        self.error = ""
        self.replay: list[dict] = []      # the map at each kept checkpoint, oldest first
        self._replay_key: tuple | None = None  # (run, ids) the replay was asked for
        self._picked = ""                 # the picked token, whose neighbours the map names
        self._walked_text: str | None = None  # the text the shown walk is of
        self.snapshot_step: int | None = None  # the training step whose look is shown

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

        self.switches = QListWidget()
        self.switches.setToolTip("Tick a block, head or expert to switch it off (no "
                                 "retraining) and see what changes")
        self.switches.itemChanged.connect(self._switch_toggled)
        self.ablation_report = muted()
        self.ablation_report.setWordWrap(True)
        self.ablation_page = _column(muted(ABLATION_HINT), (self.switches, 1),
                                     self.ablation_report)

        self.steps_column = QVBoxLayout()  # the walk's cards, top to bottom
        self.steps_column.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(_column(self.steps_column))
        self.stage = -1                   # the stage explained (an index into the pictures)
        self.previous_button = QPushButton("◀ Previous")
        self.next_button = QPushButton("Next ▶")
        self.previous_button.clicked.connect(lambda: self.move_stage(-1))
        self.next_button.clicked.connect(lambda: self.move_stage(1))
        self.stage_label = QLabel("")
        self.walk_page = _column(_row(self.previous_button, self.next_button,
                                      (self.stage_label, 1)),
                                 muted(WALK_HINT), (self.scroll, 1))
        for key, step in ((Qt.Key_Right, 1), (Qt.Key_Down, 1), (Qt.Key_Left, -1),
                          (Qt.Key_Up, -1)):
            shortcut = QShortcut(QKeySequence(key), self.walk_page)
            shortcut.setContext(Qt.WidgetWithChildrenShortcut)
            shortcut.activated.connect(lambda step=step: self.move_stage(step))
        self.lens = QTableWidget()
        self.lens.setEditTriggers(QTableWidget.NoEditTriggers)
        # the columns share the width (a 17-token text fits at 1366 px without a scroll bar)
        self.lens.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.lens.horizontalHeader().setMinimumSectionSize(24)
        self.lens.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)

        self.embedding_plots = layout_widget()
        self.embedding_plot = styled_plot(self.embedding_plots.addPlot(), "Token embeddings",
                                          "second principal component",
                                          "first principal component")
        self.embedding_points = None  # the scatter of the map shown (its data: the coordinates)
        self.embedding_note = muted()
        self.embedding_note.setWordWrap(True)
        self.step_slider = _replay_slider(self._replay_step_chosen)
        self.step_label = QLabel("step –")
        self.replay_hint = muted()
        self.embedding_page = _column(
            _row(QLabel("Step"), (self.step_slider, 1), self.step_label), self.replay_hint,
            (self.embedding_plots, 1), self.embedding_note)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.walk_page, "Walk")
        self.tabs.addTab(_with_hint(LENS_HINT, self.lens), "Logit lens")
        self.tabs.addTab(self.ablation_page, "Ablation")
        self.tabs.addTab(self.embedding_page, "Embeddings")
        self.status = placeholder(NO_MODEL)
        self._lay_out()

    def _lay_out(self) -> None:
        look = QPushButton("Explain")
        look.clicked.connect(self.refresh)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addLayout(_row(QLabel("Text"), (self.text, 1), look))
        # what is looked at, then how the next token is sampled: two rows, so that the view
        # (and the training dock holding it) stays narrow enough for a 1280-wide window
        for pairs in ((("Token", self.token), ("Layer", self.layer), ("Head", self.head)),
                      (("Temperature", self.temperature), ("Top-k", self.top_k),
                       ("Top-p", self.top_p))):
            column.addLayout(_row(*(w for label, widget in pairs
                                    for w in (QLabel(label), widget)), stretch=True))
        column.addWidget(self.status)
        column.addWidget(self.tabs, 1)

    # ------------------------------------------------------------------ input
    def set_model(self, model, tokenizer, run_dir: str | Path | None = None) -> None:
        """The model to explain; ``run_dir``, the run folder its weights come from, lets the
        embedding map replay the run's checkpoints."""
        had_ablations = bool(self.ablations())
        self.model, self.tokenizer = model, tokenizer
        self.run_dir = Path(run_dir) if run_dir is not None and model is not None else None
        # a run change leaves nothing of the last run: its text (another tokenizer may not
        # even have its tokens), its cards, its lens, its map
        self.text.clear()
        self._clear_views()
        self.switches.blockSignals(True)
        self.switches.clear()
        if model is not None:
            heads = [m.heads for _, m in model.attention_modules()]
            self.head.setRange(0, max(0, min(heads) - 1) if heads else 0)
            layers = sorted({k for key, _ in model.attention_modules() for k in key
                             if isinstance(k, int)})
            self.layer.clear()
            self.layer.addItem("every layer", None)
            for index in layers:
                self.layer.addItem(f"layer {index}", index)
            for target in ablation_targets(model):
                item = QListWidgetItem(target)
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(Qt.Unchecked)
                self.switches.addItem(item)
        self.switches.blockSignals(False)
        if had_ablations:  # the old model's switches are gone: the canvas shows none off
            self.ablations_changed.emit([])
        self.status.setText(NO_TEXT if model is not None else NO_MODEL)
        self.status.show()

    def show_snapshot(self, snapshot: dict) -> None:
        """While a run trains (its weights are not in the app yet): the walk of its latest look
        inside, a picture per step of the probe text's last token, and which step it is."""
        try:
            walk = snapshot.get("walk") if self.model is None else None
            if not walk:
                return
            self._clear_views()
            role = walk.get("stream_role", "tokens")
            tokens = list(snapshot["tokens"][role])
            position, step = int(walk["position"]), int(snapshot.get("step", 0))
            for key in sorted(walk["steps"]):
                picture = StagePicture(walk["steps"][key], tokens, position)
                self.steps_column.insertWidget(self.steps_column.count() - 1, picture)
            # shown now, not when the event loop next runs (a layout's queued show): the
            # stage scrolled to below must have its place in the column already
            picture.show()
            self.set_stage(0)
            self.snapshot_step = step
            self.status.setText(
                f"Training, step {step:,}: the run's latest look inside, the forward pass of "
                f"its probe text at its last token {display_token(tokens[position])}. Your own "
                "text, the logit lens and the embedding map come when the weights load (when "
                "the run ends or stops).")
            self.status.show()
            self.tabs.setCurrentIndex(0)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _clear_views(self) -> None:
        """Every view back to empty: nothing shown belongs to a state the user has left."""
        self.result, self._walked_text, self.snapshot_step = None, None, None
        self.replay, self._replay_key = [], None
        while self.steps_column.count() > 1:
            widget = self.steps_column.takeAt(0).widget()
            if widget is not None:   # hidden now: a picture waiting for deletion paints no more
                widget.hide()
                widget.deleteLater()
        self.lens.clear()
        self.lens.setRowCount(0)
        self.lens.setColumnCount(0)
        self.token.clear()
        self.ablation_report.setText("")
        self.embedding_plot.clear()
        self.embedding_points = None
        self.embedding_note.setText("")
        self._set_replay([], "")
        self.set_stage(-1)

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
            if self.model is model and not self.text.text().strip():
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
        return [self.switches.item(i).text() for i in range(self.switches.count())
                if self.switches.item(i).checkState() == Qt.Checked]

    def set_ablations(self, targets: list[str]) -> None:
        """Switch exactly ``targets`` off (names as :func:`ablation_targets` lists them)."""
        wanted = set(targets)
        self.switches.blockSignals(True)
        for i in range(self.switches.count()):
            item = self.switches.item(i)
            item.setCheckState(Qt.Checked if item.text() in wanted else Qt.Unchecked)
        self.switches.blockSignals(False)
        self.ablations_changed.emit(self.ablations())
        self.refresh()

    def _switch_toggled(self, _item) -> None:
        self.ablations_changed.emit(self.ablations())
        self.refresh()

    # ------------------------------------------------------------------ computing
    def refresh(self) -> None:
        """Recompute for the current choices (never raises: problems show in the view)."""
        if self.model is None or not self.text.text().strip():
            return
        text = self.text.text()
        # the picked token belongs to the text it was picked in: a new text starts at its last
        position = self.token.currentData() if text == self._walked_text else None
        model = self.model
        args = (model, self.tokenizer, text,
                -1 if position is None else int(position), self.head.value(),
                self.layer.currentData(),
                (self.temperature.value(), self.top_k.value(), self.top_p.value()),
                self.ablations())
        def shown(result: dict) -> None:
            if self.model is model:   # not the answer for a run that has since changed
                self._show(result)

        def failed(exc: Exception) -> None:
            if self.model is model:
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
        self.error = str(exc)
        self.status.setText(f"Cannot explain this: {exc}")
        self.status.show()

    def _show(self, result: dict) -> None:
        try:
            self.result, self.error = result, ""
            walk = result["walk"]
            self._walked_text = result["text"]
            self.status.hide()
            self._fill_tokens(walk)
            self._fill_steps(walk)
            self._fill_lens(result["lens"])
            self._fill_ablation(result["ablation"])
            self._fill_embeddings(result["embeddings"], walk)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _fill_embeddings(self, read_out: dict | None, walk) -> None:
        if read_out is None:
            self.embedding_plot.clear()
            self.embedding_points = None
            self.embedding_note.setText("This model has no token embedding table to map.")
            self._set_replay([], "")
            return
        self._picked = walk.tokens[walk.stream_role][walk.position]
        key = (id(self.model), self.run_dir, tuple(int(i) for i in read_out["ids"]))
        if self.run_dir is None:
            self._set_replay([read_out], "Fresh weights: train or open a run to replay the "
                                         "map over its training.")
        elif key != self._replay_key:
            self._replay_key = key
            self._draw_map(read_out, [read_out])  # the loaded weights now, the replay after
            self._request_replay(key)
        elif self.replay:
            self._replay_step_chosen(self.step_slider.value())
        else:  # the replay is still loading
            self._draw_map(read_out, [read_out])

    def _request_replay(self, key: tuple) -> None:
        """The map at every checkpoint of the run, loaded off the GUI thread when there is a
        worker (the model's weights are put back afterwards)."""
        from ...probes import embedding_replay

        model, tokenizer, run_dir, ids = self.model, self.tokenizer, self.run_dir, list(key[2])

        def job() -> list[dict]:
            return embedding_replay(model, run_dir, ids, tokenizer)

        def done(maps: list[dict]) -> None:
            if key == self._replay_key:  # not a replay of an older text or run
                self._replay_ready(maps)

        def failed(exc: Exception) -> None:
            self.replay_hint.setText(f"Cannot replay this run's checkpoints: {exc}")

        self.replay_hint.setText("Loading the run's checkpoints…")
        if self.background is None:
            try:
                done(job())
            except (ValueError, OSError, RuntimeError) as exc:
                failed(exc)
        else:
            self.background.submit(job, done, key="embedding-replay", error=failed)

    def _replay_ready(self, maps: list[dict]) -> None:
        try:
            if not maps:
                hint = "This run kept no checkpoint to replay."
            elif len(maps) == 1:
                hint = (f"The run kept one checkpoint (step {maps[0]['step']:,}): train with "
                        "`tfstudio train ... --checkpoint-every N --keep-checkpoints K` to "
                        "replay the map over training.")
            else:
                hint = (f"{len(maps)} checkpoints: drag the slider to watch the embeddings "
                        "learn; the axes are the latest step's, each step's map rotated onto "
                        "them.")
            self._set_replay(maps, hint)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _set_replay(self, maps: list[dict], hint: str) -> None:
        """Offer ``maps`` on the slider (at the latest) with fixed axes, and show it."""
        self.replay = maps
        self.replay_hint.setText(hint)
        self.replay_hint.setVisible(bool(hint))
        self.step_slider.blockSignals(True)
        self.step_slider.setRange(0, max(0, len(maps) - 1))
        self.step_slider.setValue(max(0, len(maps) - 1))
        self.step_slider.blockSignals(False)
        self.step_slider.setEnabled(len(maps) > 1)
        if maps:
            self._replay_step_chosen(self.step_slider.value())
        else:
            self.step_label.setText("step –")

    def show_embedding_step(self, step: int) -> None:
        """Move the replay to the newest kept checkpoint at or before training step ``step``."""
        steps = [m.get("step", 0) for m in self.replay]
        earlier = [i for i, s in enumerate(steps) if s <= step]
        self.step_slider.setValue(earlier[-1] if earlier else 0)

    def _replay_step_chosen(self, index: int) -> None:
        try:
            if 0 <= index < len(self.replay):
                self._draw_map(self.replay[index], self.replay)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def _draw_map(self, entry: dict, axes_of: list[dict]) -> None:
        """One map: its points with their labels on axes holding every map of ``axes_of``,
        and the picked token's nearest neighbours by cosine."""
        import pyqtgraph as pg

        plot = self.embedding_plot
        plot.clear()
        coords, labels = entry["coords"], entry["labels"]
        self.embedding_points = pg.ScatterPlotItem(
            coords[:, 0], coords[:, 1], size=7, brush=pg.mkBrush(70, 110, 190, 170), pen=None)
        plot.addItem(self.embedding_points)
        ink = themed_colour("node_text")
        ranges = map_range(axes_of)
        metrics = self.fontMetrics()  # the labels' size as shares of the plot's (in pixels)
        box = plot.getViewBox().size()
        cell = (metrics.averageCharWidth() / max(box.width(), 200.0),
                metrics.height() / max(box.height(), 150.0))
        leader = pg.mkPen(themed_colour("node_border"), width=1)
        for (x, y), (_, lift), label in zip(coords, label_offsets(coords, labels, ranges, cell),
                                            labels):
            text = pg.TextItem(display_token(label), anchor=(0.5, 1.2), color=ink)
            text.setPos(float(x), float(y + lift))
            plot.addItem(text)
            if lift:  # a label stacked above its neighbours points back at its dot
                plot.addItem(pg.PlotCurveItem([x, x], [y, y + lift], pen=leader))
        (x0, x1), (y0, y1) = ranges
        plot.setXRange(x0, x1, padding=0)
        plot.setYRange(y0, y1, padding=0)
        step = entry.get("step")
        where = "the loaded weights" if step is None else f"step {step:,}"
        self.step_label.setText("now" if step is None else f"step {step:,}")
        note = (f"PCA of {len(labels)} rows of the token embedding table at {where}: the axes "
                f"keep {entry['explained'][0]:.0%} and {entry['explained'][1]:.0%} of their "
                "variance. Tokens used alike during training end up close.")
        ids = [int(i) for i in entry["ids"]]
        picked = self._picked
        picked_ids = self.tokenizer.encode(picked) if self.tokenizer is not None and picked \
            else []
        if len(picked_ids) == 1 and picked_ids[0] in ids:
            row = ids.index(picked_ids[0])
            plot.addItem(pg.ScatterPlotItem([coords[row, 0]], [coords[row, 1]], size=12,
                                            brush=pg.mkBrush(themed_colour("accent")),
                                            pen=pg.mkPen(ink, width=1)))
            names = dict(zip(ids, labels))
            near = ", ".join(f"{display_token(names[int(i)])} ({c:.2f})" for i, c in
                             zip(entry["neighbours"][row], entry["neighbour_cosines"][row]))
            shown = display_token(picked)
            note += (f" Nearest to {shown} by cosine: {near} ({shown} is the larger point; "
                     "pick another Token above to follow it).")
        self.embedding_note.setText(note)

    def _fill_tokens(self, walk) -> None:
        tokens = walk.tokens[walk.stream_role]
        self.token.blockSignals(True)
        self.token.clear()
        for i, tok in enumerate(tokens):
            self.token.addItem(f"{i}: {display_token(tok)}", i)
        self.token.setCurrentIndex(walk.position)
        self.token.blockSignals(False)

    def _fill_steps(self, walk) -> None:
        while self.steps_column.count() > 1:
            widget = self.steps_column.takeAt(0).widget()
            if widget is not None:   # hidden now: a picture waiting for deletion paints no more
                widget.hide()
                widget.deleteLater()
        tokens = {role: list(t) for role, t in walk.tokens.items()}
        vocab = self._vocab_labels(np.asarray(walk.logits).shape[-1])
        names = self.tokenizer.token_strings if self.tokenizer is not None else None
        for step, summary in zip(walk.steps, walk.summaries()):
            role = "source" if step.block.startswith(("src_", "encoder")) and \
                "source" in tokens else walk.stream_role
            labels = tokens.get(role, [])
            position = walk.position if role == walk.stream_role else -1

            def matrix(step=step, labels=labels, position=position) -> StepCard:
                return StepCard(step, labels, vocab_labels=vocab, token_names=names,
                                position=position if position >= 0 else None)
            picture = StagePicture(summary, labels, position, names, matrix=matrix)
            self.steps_column.insertWidget(self.steps_column.count() - 1, picture)
            # shown now, not when the event loop next runs (a layout's queued show): the
            # stage scrolled to below must have its place in the column already
            picture.show()
        self.set_stage(min(max(self.stage, 0), len(walk.steps) - 1))

    def pictures(self) -> list[StagePicture]:
        return [self.steps_column.itemAt(i).widget()
                for i in range(self.steps_column.count() - 1)]

    def move_stage(self, step: int) -> None:
        """Next (+1) or previous (-1) stage of the walk (none past either end)."""
        if 0 <= self.stage + step < len(self.pictures()):
            self.set_stage(self.stage + step)

    def set_stage(self, index: int) -> None:
        """Explain stage ``index``: its picture framed and scrolled to, its block lit on the
        canvas (``stage_changed``)."""
        try:
            pictures = self.pictures()
            if not pictures:
                self.stage = -1
                self.stage_label.setText("")
                self.previous_button.setEnabled(False)
                self.next_button.setEnabled(False)
                return
            self.stage = min(max(index, 0), len(pictures) - 1)
            for i, picture in enumerate(pictures):
                picture.set_current(i == self.stage)
            current = pictures[self.stage]
            # lay out pictures this walk just made, so the scroll knows where they are
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
            self.scroll.ensureWidgetVisible(current, 0, 0)
            self.stage_label.setText(f"Stage {self.stage + 1} of {len(pictures)}: "
                                     f"{current.name}")
            self.previous_button.setEnabled(self.stage > 0)
            self.next_button.setEnabled(self.stage < len(pictures) - 1)
            self.stage_changed.emit(current.block)
        except Exception as exc:  # a slot must never take the app down
            self._failed(exc)

    def show_block(self, path: tuple, node_ids: list[str]) -> None:
        """Jump to the first stage of the block clicked on the canvas (in the layer of the
        stage shown, when the block is repeated); stays if that block is already shown."""
        pictures = self.pictures()
        if len(node_ids) != 1 or not pictures:
            return
        wanted = (tuple(path), node_ids[0])
        group = wanted[0] + (wanted[1],)   # the path inside it, should it be a group

        def shows(block: str) -> bool:
            where, node = block_node(block)
            return bool(block) and ((where, node) == wanted or where[:len(group)] == group)
        current = pictures[self.stage].block if 0 <= self.stage < len(pictures) else ""
        if shows(current):
            return
        matches = [i for i, p in enumerate(pictures) if shows(p.block)]
        if matches:
            layer = [i for i in matches if _same_copy(pictures[i].block, current)]
            self.set_stage((layer or matches)[0])

    def _vocab_labels(self, size: int) -> list[str] | None:
        """The vocabulary's tokens, to name the columns of the logits (small vocabularies:
        a large one's columns cannot be read anyway)."""
        if self.tokenizer is None or size > MAX_COLS_SHOWN:
            return None
        try:
            return self.tokenizer.token_strings(list(range(size)))
        except (ValueError, KeyError, IndexError):
            return None

    def _fill_lens(self, lens) -> None:
        """A cell per layer and position: the likeliest token there and its probability, the
        cell shaded by that probability; where it is already the model's answer (the last
        layer's likeliest token at that position) the token is bold and underlined."""
        self.lens.clear()
        self.lens.setRowCount(len(lens.layers))
        self.lens.setColumnCount(len(lens.tokens))
        self.lens.setVerticalHeaderLabels(lens.layers)
        self.lens.setHorizontalHeaderLabels([display_token(t) for t in lens.tokens])
        answers = lens.top_ids[-1, :, 0]
        ink = themed_colour("node_text")
        for r in range(len(lens.layers)):
            for c in range(len(lens.tokens)):
                top, p = lens.top_tokens[r][c], float(lens.top_probs[r, c, 0])
                item = QTableWidgetItem(f"{display_token(top[0])} {p:.2f}")
                item.setTextAlignment(Qt.AlignCenter)
                item.setBackground(lens_shade(p))
                item.setForeground(QColor("white") if p > 0.6 else ink)
                answer = int(lens.top_ids[r, c, 0]) == int(answers[c])
                if answer:
                    font = item.font()
                    font.setBold(True)
                    font.setUnderline(True)
                    item.setFont(font)
                item.setToolTip("\n".join(f"{display_token(t)}  {q:.3f}" for t, q in
                                          zip(top, lens.top_probs[r, c]))
                                + ("\n(the model's answer here)" if answer else ""))
                self.lens.setItem(r, c, item)

    def _fill_ablation(self, effect) -> None:
        if effect is None:
            self.ablation_report.setText("Nothing is switched off.")
            return
        def top(tops) -> str:
            return ", ".join(f"{display_token(t)} {probability(p)}" for t, p in tops)

        self.ablation_report.setText(
            f"Switched off: {', '.join(effect.targets)}. Loss on the text "
            f"{effect.loss_before:.4f} → {effect.loss_after:.4f}; KL at position "
            f"{effect.position}: {effect.kl:.4f} nats.\nBefore: {top(effect.top_before)}\n"
            f"After: {top(effect.top_after)}")
