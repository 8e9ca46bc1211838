"""Run setup: what to train on, how to cut it into tokens (with a live preview of the probe text
as coloured tokens and their ids), and the hyper-parameters, with defaults for the graph and the
device (see defaults.py)."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...graph import Graph
from ...runs.config import TrainConfig
from .. import theme
from .background import Background
from .labels import muted
from .defaults import checkpoint_schedule, graph_params, suggested_config
from .setup_lines import (building_line, corpus_entry, devices, has_gpu, preview_line,
                          token_preview_html)

TOKENIZERS = [("byte", "Bytes (256 ids; any text)"),
              ("char", "Characters seen in the corpus"),
              ("word:2000", "Words: the 2,000 commonest of the corpus (others read as <|unk|>)"),
              ("bpe:512", "BPE, 512 ids (trained on the corpus)"),
              ("bpe:2048", "BPE, 2048 ids (trained on the corpus)"),
              ("tiktoken:gpt2", "GPT-2's BPE (50,257 ids)"),
              ("tiktoken:cl100k_base", "cl100k_base (GPT-4's BPE)")]
FILE_ITEM, FOLDER_ITEM = "__file__", "__folder__"
PREVIEW_TOKENS = 120


def _choose_file(parent) -> str:
    path, _ = QFileDialog.getOpenFileName(parent, "Train on a text file", "",
                                          "Text (*.txt *.md *.jsonl);;All files (*)")
    return path


def _choose_folder(parent) -> str:
    return QFileDialog.getExistingDirectory(parent, "Train on a folder of text files")


# tests replace these with functions that return a path without a dialog
OPEN_FILE = [_choose_file]
OPEN_FOLDER = [_choose_folder]


class SetupView(QWidget):
    probe_text_edited = Signal(str)

    def __init__(self, background: Background, parent: QWidget | None = None):
        super().__init__(parent)
        self.background = background
        self._tokenizers: dict[tuple[str, str], object] = {}  # (spec, corpus) -> tokenizer
        self._graph_name: str | None = None
        self.graph: Graph | None = None
        self._last_corpus = 0
        self.corpus = QComboBox()
        self.tokenizer = QComboBox()
        self.probe_text = QLineEdit()
        self.preview = QLabel()
        self.preview_info = muted()
        self.steps = _int_box(1, 10_000_000, 400)
        self.batch = _int_box(1, 65_536, 16)
        self.seq_len = _int_box(2, 1_048_576, 64)
        self.lr = QDoubleSpinBox()
        self.warmup = _int_box(0, 1_000_000, 40)
        self.eval_every = _int_box(0, 1_000_000, 40)
        self.probe_every = _int_box(0, 1_000_000, 10)
        self.seed = _int_box(0, 2**31 - 1, 1337)
        self.device = QComboBox()
        self.precision = QComboBox()
        self.compile = QCheckBox("torch.compile")
        self._preview_timer = QTimer(self, singleShot=True, interval=250)
        self._preview_timer.timeout.connect(self.refresh_preview)
        self._set_up_data_choices()
        self._set_up_training_choices()
        self._lay_out()
        # the opened run's settings the form shows, until the user edits one of them
        self.run_config: TrainConfig | None = None
        self._filling = False  # the form is being filled (defaults, a run): not an edit
        for box in (self.steps, self.batch, self.seq_len, self.lr, self.warmup,
                    self.eval_every, self.probe_every, self.seed):
            box.valueChanged.connect(self._edited)
        self.corpus.currentIndexChanged.connect(self._edited)
        self.tokenizer.currentTextChanged.connect(self._edited)

    def _edited(self, *_) -> None:
        if not self._filling:
            self.run_config = None

    def _set_up_data_choices(self) -> None:
        """Corpus, tokenizer and probe text, with the live tokenizer preview."""
        from ...data import list_corpora
        for info in list_corpora():
            self.corpus.addItem(info.title, info.spec)
            self.corpus.setItemData(self.corpus.count() - 1, info.description, Qt.ToolTipRole)
        self.corpus.insertSeparator(self.corpus.count())
        self.corpus.addItem("Text file…", FILE_ITEM)
        self.corpus.addItem("Folder of text files…", FOLDER_ITEM)
        self.corpus.activated.connect(self._corpus_activated)
        self.corpus.currentIndexChanged.connect(lambda _: self._schedule_preview())
        self.tokenizer.setEditable(True)
        for spec, title in TOKENIZERS:
            self.tokenizer.addItem(spec, spec)
            self.tokenizer.setItemData(self.tokenizer.count() - 1, title, Qt.ToolTipRole)
        self.tokenizer.setToolTip("byte, char, word:N, bpe:N or tiktoken:NAME")
        self.tokenizer.currentTextChanged.connect(lambda _: self._schedule_preview())
        self.probe_text.setPlaceholderText("Probe text (empty: an example of the task)")
        self.probe_text.setToolTip("What the attention, positions, next-token and expert views "
                                   "read during training")
        self.probe_text.textChanged.connect(lambda _: self._schedule_preview())
        self.probe_text.editingFinished.connect(
            lambda: self.probe_text_edited.emit(self.probe_text.text()))
        self.preview.setTextFormat(Qt.RichText)
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.preview.setMinimumHeight(40)

    def _set_up_training_choices(self) -> None:
        self.lr.setDecimals(6)
        self.lr.setRange(1e-6, 10.0)
        self.lr.setSingleStep(1e-4)
        for device in devices():
            self.device.addItem(device)
        self.precision.addItems(["auto", "fp32", "bf16", "fp16"])
        self.compile.setToolTip("Compile the model first: faster steps on a GPU after a "
                                "warm-up of a minute or so")

    def _lay_out(self) -> None:
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignRight)
        for label, widget in (("Corpus", self.corpus), ("Tokenizer", self.tokenizer),
                              ("Probe text", self.probe_text), (None, self.preview),
                              (None, self.preview_info), ("Steps", self.steps),
                              ("Batch size", self.batch), ("Sequence length", self.seq_len),
                              ("Learning rate", self.lr), ("Warm-up steps", self.warmup),
                              ("Evaluate every", self.eval_every),
                              ("Look inside every", self.probe_every), ("Seed", self.seed),
                              ("Device", self.device), ("Precision", self.precision),
                              ("", self.compile)):
            form.addRow(widget) if label is None else form.addRow(label, widget)
        defaults = QPushButton("Defaults for this graph")
        defaults.clicked.connect(lambda: self.apply_defaults(force=True))
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(form)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(defaults)
        column.addLayout(row)

    # ------------------------------------------------------------------ graph and defaults
    def set_graph(self, graph: Graph) -> None:
        """Called when the editor's graph changes: new defaults for a different graph."""
        self.graph = graph
        name = str(graph.meta.get("name") or "")
        if name != self._graph_name:
            self._graph_name = name
            if self.run_config is None:  # an opened run's settings stay until edited
                self.apply_defaults()

    def apply_defaults(self, force: bool = False) -> None:
        if self.graph is None:
            return
        self._filling = True
        try:
            self._fill_defaults()
        finally:
            self._filling = False
        if force:
            self.run_config = None

    def _fill_defaults(self) -> None:
        cfg = suggested_config(self.graph, gpu=has_gpu(devices()))
        self.select_corpus(cfg.corpus)
        self.tokenizer.setCurrentText(cfg.tokenizer)
        self.steps.setValue(cfg.steps)
        self.batch.setValue(cfg.batch_size)
        self.seq_len.setValue(cfg.seq_len)
        self.lr.setValue(cfg.lr)
        self.warmup.setValue(cfg.warmup_steps)
        self.eval_every.setValue(cfg.eval_every)
        self.probe_every.setValue(cfg.probe_every)
        self.device.setCurrentText(cfg.device)
        self.precision.setCurrentText(cfg.precision)
        self.compile.setChecked(cfg.compile)

    def select_corpus(self, spec: str) -> None:
        spec, label = corpus_entry(spec, [self.corpus.itemData(i)
                                          for i in range(self.corpus.count())])
        index = self.corpus.findData(spec)
        if label is not None:
            index = self.corpus.count()
            self.corpus.addItem(label, spec)
            self.corpus.setItemData(index, spec, Qt.ToolTipRole)
        self.corpus.setCurrentIndex(index)
        self._last_corpus = index

    def _corpus_activated(self, index: int) -> None:
        choice = self.corpus.itemData(index)
        if choice in (FILE_ITEM, FOLDER_ITEM):
            path = (OPEN_FILE if choice == FILE_ITEM else OPEN_FOLDER)[0](self)
            if path:
                self.select_corpus(path)
            else:
                self.corpus.setCurrentIndex(self._last_corpus)
            return
        self._last_corpus = index

    def show_run(self, config: TrainConfig, tokenizer=None, graph: Graph | None = None) -> None:
        """An opened run's setup replaces the form's: its corpus, tokenizer, steps and
        hyper-parameters, and its probe text previewed by the tokenizer it saved (``tokenizer``;
        None: rebuilt from the spec). Train then trains that recipe again. The form belongs
        to the run's ``graph`` from now on: its graph arriving on the canvas (at once or
        later) keeps these settings instead of putting that graph's defaults over them."""
        if graph is not None:
            self.graph = graph
            self._graph_name = str(graph.meta.get("name") or "")
        self._filling = True
        try:
            self._fill_run(config, tokenizer)
        finally:
            self._filling = False
        self.run_config = config
        self._preview_timer.stop()
        self.refresh_preview()  # now: a cached tokenizer answers at once

    def _fill_run(self, config: TrainConfig, tokenizer) -> None:
        if tokenizer is not None:
            self._tokenizers[(config.tokenizer, config.corpus)] = tokenizer
        self.select_corpus(config.corpus)
        self.tokenizer.setCurrentText(config.tokenizer)
        for box, value in ((self.steps, config.steps), (self.batch, config.batch_size),
                           (self.seq_len, config.seq_len), (self.warmup, config.warmup_steps),
                           (self.eval_every, config.eval_every),
                           (self.probe_every, config.probe_every), (self.seed, config.seed)):
            box.setValue(int(value))
        self.lr.setValue(float(config.lr))

    # ------------------------------------------------------------------ the configuration
    def corpus_spec(self) -> str:
        return str(self.corpus.currentData())

    def config(self) -> TrainConfig:
        checkpoint_every, keep = checkpoint_schedule(
            self.steps.value(), graph_params(self.graph) if self.graph is not None else None)
        cfg = TrainConfig(corpus=self.corpus_spec(), tokenizer=self.tokenizer.currentText().strip(),
                          steps=self.steps.value(), batch_size=self.batch.value(),
                          seq_len=self.seq_len.value(), lr=self.lr.value(),
                          warmup_steps=self.warmup.value(),
                          eval_every=self.eval_every.value(),
                          probe_every=self.probe_every.value(),
                          probe_text=self.probe_text.text(), seed=self.seed.value(),
                          device=self.device.currentText(),
                          precision=self.precision.currentText(),
                          compile=self.compile.isChecked(),
                          checkpoint_every=checkpoint_every, keep_checkpoints=keep)
        cfg.check()
        return cfg

    def built_tokenizer(self):
        """The tokenizer the preview built for the current choice (None if not built yet)."""
        return self._tokenizers.get((self.tokenizer.currentText().strip(), self.corpus_spec()))

    # ------------------------------------------------------------------ preview
    def _schedule_preview(self) -> None:
        self._preview_timer.start()

    def refresh_preview(self) -> None:
        spec, corpus = self.tokenizer.currentText().strip(), self.corpus_spec()
        if corpus in (FILE_ITEM, FOLDER_ITEM) or not spec:
            return
        key = (spec, corpus)
        if key in self._tokenizers:
            self._show_preview(self._tokenizers[key])
            return
        self.preview_info.setText(building_line(spec, corpus))

        def build():
            from ...data import build_tokenizer, load_corpus
            from ...data.tokenizer_factory import learned_from_corpus
            return build_tokenizer(spec, load_corpus(corpus) if learned_from_corpus(spec)
                                   else None)

        def done(tokenizer):
            self._tokenizers[key] = tokenizer
            if key == (self.tokenizer.currentText().strip(), self.corpus_spec()):
                self._show_preview(tokenizer)

        def failed(exc):
            self.preview.setText("")
            self.preview_info.setText(f"<span style='color:#e0403a'>{html.escape(str(exc))}"
                                      "</span>")

        self.background.submit(build, done, key="tokenizer-preview", error=failed)

    def _show_preview(self, tokenizer) -> None:
        """The probe text as the tokenizer cuts it (the one the trainer will read: yours, else
        its default for this corpus), and how many characters it does not know."""
        own = self.probe_text.text()
        text = own or self._example_text()
        all_ids = tokenizer.encode(text)
        ids = all_ids[:PREVIEW_TOKENS]
        self.preview.setText(token_preview_html(tokenizer.token_strings(ids), ids,
                                                  theme.current().muted_text))
        self.preview_info.setText(preview_line(tokenizer, text, all_ids, default=not own))

    def _example_text(self) -> str:
        """What the trainer reads when the probe text is left empty."""
        from ...data import load_corpus
        from ...probes import default_probe_text
        try:
            corpus = load_corpus(self.corpus_spec())
        except (ValueError, OSError):
            return default_probe_text()
        return default_probe_text(corpus)


def _int_box(low: int, high: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setGroupSeparatorShown(True)
    return box
