"""The Compare view: pick a lesson of the course, or a base graph and the switch values to cross
into variants; set the corpus, tokenizer, steps, learning rate and seeds; Run. Every variant
trains over every seed with its loss drawn live, then the view shows what the command line's
page says: a lesson's verdict and sentences, the report's table (answer accuracy on a task) and
its plots. The page itself (report.md, report.html) is written into the comparison's folder, and
each run joins Runs, where it opens like any other ("Open this variant").

Training goes through ``experiments.compare.run_comparison`` on a worker thread
(``compare_job``), the same call as ``tfstudio compare`` and ``tfstudio lesson``; a timer on the
GUI thread drains what it reports, so the view never blocks.
"""
from __future__ import annotations

import queue
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QGroupBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QSpinBox, QVBoxLayout, QWidget)

from ...experiments.seeds import read_seeds
from ...experiments.variants import SWITCHES, expand
from ...graph import Graph
from ...runs import TrainConfig
from ..text import short_name
from .compare_job import ComparisonJob, RunEnd, Shown, stopped_text
from .compare_lines import (done_line, eval_every, eval_lengths, finished_runs, lengths_field,
                            lesson_html, started_line, stopped_runs, varies_of)
from .compare_results import CompareResults
from .setup_lines import corpus_entry
from .setup_view import TOKENIZERS

DRAIN_INTERVAL_MS = 100
# the switches offered as tick boxes (activation and parameter paths: the command line)
TICKED = ("attention", "norm", "positions", "ffn")
OWN = "your own comparison"
FIXED = ("fixed by the lesson: its claim was measured with it (tfstudio compare --vary "
         "chooses everything)")


class CompareView(QWidget):
    finished = Signal(str)           # the comparison folder, once its results are shown
    runs_ready = Signal(list)        # [(run folder, name for Runs)] of every finished run
    open_requested = Signal(str, str)  # "Open this variant": its run folder and its name

    def __init__(self, base_graph: Graph | None = None, out_dir: str | Path | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.base_graph = base_graph
        self.out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="compare-"))
        self.folder: Path | None = None          # the comparison being trained or shown
        self.job = ComparisonJob()
        self._tips: dict[QWidget, str] = {}  # the form's own tooltips, while a lesson fixes it
        self.boxes: dict[tuple[str, str], QCheckBox] = {}
        self.lesson = QComboBox()
        self.base_choice = QComboBox()
        self.corpus = QComboBox()
        self.tokenizer = QComboBox()
        self.steps = QSpinBox()
        self.lr = QDoubleSpinBox()
        self.seeds = QLineEdit("1,2,3")
        self.lengths = QLineEdit("")
        self.claim = QLabel()
        self.switches = self._variant_switches()
        self.run_button = QPushButton("Run")
        self.stop_button = QPushButton("Stop")
        self.export_button = QPushButton("Export report")
        self.open_folder_button = QPushButton("Open folder…")
        self.progress = QProgressBar()
        self.status = QLabel("Pick a lesson, or tick the values to compare; then Run.")
        self.results = CompareResults()
        self.timer = QTimer(self)
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        from ...data.corpus import list_corpora
        from ...presets import preset_names
        self.lesson.addItem(OWN, "")   # the course joins it when first needed (_fill_lessons)
        if self.base_graph is not None:
            self.base_choice.addItem("current graph")
        self.base_choice.addItems(preset_names())
        for info in list_corpora():
            self.corpus.addItem(info.title, info.spec)
            self.corpus.setItemData(self.corpus.count() - 1, info.description, Qt.ToolTipRole)
        self.corpus.setEditable(True)   # any corpus the command line takes: a file, a folder
        self.corpus.setToolTip("a built-in corpus or task, or a path to a text file or folder")
        for spec, title in TOKENIZERS:
            self.tokenizer.addItem(spec, spec)
            self.tokenizer.setItemData(self.tokenizer.count() - 1, title, Qt.ToolTipRole)
        self.tokenizer.setEditable(True)
        self.tokenizer.setToolTip("byte, char, bpe:N or tiktoken:NAME")
        self.steps.setRange(1, 1_000_000)
        self.lr.setDecimals(5)
        self.lr.setRange(1e-5, 1.0)
        self.lr.setSingleStep(1e-4)
        self.seeds.setToolTip("comma-separated; a verdict needs two or more, since only the "
                              "spread over seeds says whether a difference counts")
        self.lengths.setPlaceholderText("e.g. 64,128,256 (text corpora)")
        self.claim.setWordWrap(True)
        self.claim.setTextFormat(Qt.RichText)
        self.claim.hide()
        self.status.setWordWrap(True)
        self.progress.setFormat("%v / %m steps")
        self.progress.hide()
        self._fill_form(TrainConfig(corpus="sample", tokenizer="char", steps=400, lr=3e-3))
        choices = QVBoxLayout()
        choices.addLayout(self._settings_form())
        choices.addWidget(self.claim)
        choices.addWidget(self.switches)
        buttons = QHBoxLayout()
        for button in (self.run_button, self.stop_button, self.export_button,
                       self.open_folder_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        choices.addLayout(buttons)
        choices.addWidget(self.progress)
        choices.addWidget(self.status)
        choices.addStretch(1)
        left = QWidget()
        left.setLayout(choices)
        left.setMaximumWidth(430)
        layout = QHBoxLayout(self)
        layout.addWidget(left, 0)
        layout.addWidget(self.results, 1)
        self.export_button.setEnabled(False)
        self.stop_button.setEnabled(False)
        self.stop_button.setToolTip("stop the run training now after its current step (what "
                                    "it wrote is kept) and start no other")
        self.open_folder_button.setToolTip("show a comparison trained before, here or by "
                                           "tfstudio compare / tfstudio lesson")
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.export_button.clicked.connect(self.export)
        self.open_folder_button.clicked.connect(self._choose_folder)
        self.lesson.currentIndexChanged.connect(lambda _: self.choose_lesson(
            self.lesson.currentData() or None))
        self.corpus.currentIndexChanged.connect(lambda _: self._lengths_for_corpus())
        self.results.open_requested.connect(self.open_requested)
        self.timer.setInterval(DRAIN_INTERVAL_MS)
        self.timer.timeout.connect(self.drain)

    def _settings_form(self) -> QFormLayout:
        form = QFormLayout()
        for label, widget in (("Lesson", self.lesson), ("Base", self.base_choice),
                              ("Corpus", self.corpus), ("Tokenizer", self.tokenizer),
                              ("Steps", self.steps), ("Learning rate", self.lr),
                              ("Seeds", self.seeds), ("Eval lengths", self.lengths)):
            form.addRow(label, widget)
        return form

    def _variant_switches(self) -> QGroupBox:
        """A row of tick boxes per switch; the ticked values are crossed into variants."""
        switches = QGroupBox("Variants (every combination of the ticked values)")
        grid = QVBoxLayout(switches)
        for key in TICKED:
            row = QHBoxLayout()
            row.addWidget(QLabel(key))
            for value in SWITCHES[key]:
                box = QCheckBox(value)
                self.boxes[(key, value)] = box
                row.addWidget(box)
            row.addStretch(1)
            grid.addLayout(row)
        return switches

    def _fill_form(self, config: TrainConfig) -> None:
        spec, new = corpus_entry(config.corpus, [self.corpus.itemData(i)
                                                 for i in range(self.corpus.count())])
        if new is None:
            self.corpus.setCurrentIndex(self.corpus.findData(spec))
        else:   # a corpus of its own (a file, a folder): typed in
            self.corpus.setEditText(config.corpus)
        self.tokenizer.setCurrentText(config.tokenizer)
        self.steps.setValue(config.steps)
        self.lr.setValue(config.lr)

    def _corpus_spec(self) -> str:
        index = self.corpus.currentIndex()
        if index >= 0 and self.corpus.itemText(index) == self.corpus.currentText():
            return self.corpus.itemData(index)
        return self.corpus.currentText().strip() or "sample"

    def _lengths_for_corpus(self) -> None:
        enabled, tip = lengths_field(self._corpus_spec(), self.lesson.currentData())
        self.lengths.setEnabled(enabled)
        self.lengths.setToolTip(tip)

    # ------------------------------------------------------------------ lessons
    def showEvent(self, event) -> None:
        self._fill_lessons()
        super().showEvent(event)

    def _fill_lessons(self) -> None:
        """The course's comparisons in the Lesson picker, once: importing the lessons takes
        1.6 s, which the Train workspace does not pay until Compare is shown or used."""
        if self.lesson.count() > 1:
            return
        from ...experiments.lessons.course import course
        for lesson in course():
            if lesson.run is None:  # a lesson on its own schedule is no comparison
                self.lesson.addItem(f"{lesson.name}: {lesson.title.removeprefix('Lesson: ')}",
                                    lesson.name)

    def choose_lesson(self, name: str | None) -> None:
        """Lesson ``name`` in the form (its training shown, steps and seeds editable, the rest
        fixed), or None: a comparison of your own."""
        from ...experiments.lessons import LESSONS
        self._fill_lessons()
        lesson = LESSONS.get(name) if name else None
        index = self.lesson.findData(name or "")
        if index >= 0 and index != self.lesson.currentIndex():
            self.lesson.setCurrentIndex(index)  # comes back here through the signal
            return
        for widget in (self.base_choice, self.corpus, self.tokenizer, self.lr, self.lengths):
            widget.setEnabled(lesson is None)
            own = self._tips.setdefault(widget, widget.toolTip())
            widget.setToolTip(FIXED if lesson is not None else own)
        self.switches.setVisible(lesson is None)
        self.claim.setVisible(lesson is not None)
        if lesson is None:
            self._lengths_for_corpus()
            return
        self._fill_form(lesson.config())
        self.seeds.setText(",".join(map(str, lesson.seeds)))
        self.lengths.setText(",".join(map(str, lesson.eval_lengths)))
        self.base_choice.setCurrentText(lesson.base)
        self.claim.setText(lesson_html(lesson.title, lesson.base, lesson.base_edits,
                                       lesson.varies, lesson.claim))

    def run_lesson(self, name: str) -> bool:
        """Lesson ``name`` at its own settings (its steps and seeds), started at once."""
        self.choose_lesson(name)
        return self.run()

    # ------------------------------------------------------------------ running
    def varies(self) -> list[tuple[str, list[str]]]:
        return varies_of(pair for pair, box in self.boxes.items() if box.isChecked())

    def _base(self) -> tuple[str, Graph]:
        from ... import load_graph
        name = self.base_choice.currentText()
        if name == "current graph" and self.base_graph is not None:
            return short_name(self.base_graph.meta.get("name") or "current graph"), self.base_graph
        return name, load_graph(name)

    def _plan(self) -> tuple:
        """(label, base, varies, seeds, config, eval lengths, lesson) from the form, as the
        command line builds them; ValueError naming what to fix."""
        seeds = read_seeds(self.seeds.text(), "Seeds")
        name = self.lesson.currentData()
        if name:
            from ...experiments.lessons import prepare
            lesson = prepare(name, seeds=seeds, steps=self.steps.value())
            return (lesson.label, lesson.base, lesson.varies, lesson.seeds, lesson.config,
                    lesson.eval_lengths, name)
        varies = self.varies()
        if not varies:
            raise ValueError("tick at least one value to compare, or pick a lesson")
        lengths = eval_lengths(self.lengths.text(), self.lengths.isEnabled())
        label, base = self._base()
        config = TrainConfig(corpus=self._corpus_spec(), tokenizer=self.tokenizer.currentText(),
                             steps=self.steps.value(), lr=self.lr.value(), seed=seeds[0],
                             eval_every=eval_every(self.steps.value()))
        config.check()
        return label, base, varies, seeds, config, lengths, ""

    def busy(self) -> bool:
        return self.job.busy()

    def run(self) -> bool:
        """Start training the comparison the form describes; False (the reason shown) when it
        cannot start."""
        try:
            if self.busy():
                raise ValueError("a comparison is training; wait for it to finish, or Stop it")
            label, base, varies, seeds, config, lengths, lesson = self._plan()
            names = [v.name for v in expand(base, varies)]
            folder = self.out_dir / (time.strftime("%Y%m%d-%H%M%S-") + (lesson or "compare"))
            self.job.train(label, base, varies, seeds, config, lengths, folder, lesson)
        except (ValueError, OSError) as exc:
            self.status.setText(f"Cannot run: {exc}")
            return False
        self.folder = folder
        self.results.reset(names, config.steps,
                           f"Claim: {self._lesson_claim(lesson)}" if lesson else "")
        self.results.tabs.setCurrentIndex(0)
        self.progress.setRange(0, len(names) * len(seeds) * config.steps)
        self.progress.setValue(0)
        self.progress.show()
        self._started(started_line(len(names), len(seeds), folder))
        self.stop_button.setEnabled(True)
        return True

    def stop(self) -> bool:
        """Stop the comparison training now (the view says how each run ended once the worker
        is done); False when none is training."""
        if not self.job.stop():
            return False
        self.stop_button.setEnabled(False)
        self.status.setText("Stopping after the current step ...")
        return True

    @staticmethod
    def _lesson_claim(name: str) -> str:
        from ...experiments.lessons import LESSONS
        return LESSONS[name].claim if name in LESSONS else ""

    def open_comparison(self, folder: str | Path) -> bool:
        """Show a comparison trained before (its page written again from its folders)."""
        try:
            self.job.read(Path(folder))
        except ValueError as exc:
            self.status.setText(f"Cannot open: {exc}")
            return False
        self.folder = Path(folder)
        self.results.reset([], 0, "")
        self.progress.hide()
        self._started(f"Reading {folder} ...")
        return True

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a comparison folder",
                                                  str(self.out_dir))
        if folder:
            self.open_comparison(folder)

    def _started(self, text: str) -> None:
        self.timer.start()
        self.run_button.setEnabled(False)
        self.open_folder_button.setEnabled(False)
        self.export_button.setEnabled(False)
        self.status.setText(text)

    def drain(self) -> None:
        """On the GUI thread: apply what the worker reported since the last drain."""
        from ..report_plots import draw_report
        stepped = False
        while True:
            try:
                kind, payload = self.job.events.get_nowait()
            except queue.Empty:
                break
            if kind == "step":
                self.results.add_step(*payload)
                stepped = True
            elif kind == "say":
                self.status.setText(payload)
            elif kind == "draw":
                payload.answer(draw_report)
            elif kind == "shown":
                self._show(payload)
            elif kind == "stopped":
                self._show_stopped(payload)
            elif kind == "failed":
                self.status.setText(f"Compare failed: {payload}")
            elif kind == "done":
                self.timer.stop()
                self.results.ended()
                self.run_button.setEnabled(True)
                self.stop_button.setEnabled(False)
                self.open_folder_button.setEnabled(True)
                self.progress.hide()
                if self.results.shown is not None:
                    self.finished.emit(str(self.folder))
        if stepped:
            self.results.redraw()
            self.progress.setValue(self.results.steps_done())

    def _show(self, shown: Shown) -> None:
        self.results.show(shown)
        self.export_button.setEnabled(True)
        self.status.setText(done_line(shown))
        self.runs_ready.emit(finished_runs(shown))

    def _show_stopped(self, ends: list[RunEnd]) -> None:
        """A stopped comparison: how each run ended, and the runs with steps to look at
        (finished or stopped) join Runs."""
        self.status.setText(stopped_text(ends))
        self.runs_ready.emit(stopped_runs(ends))

    # ------------------------------------------------------------------ export
    def export(self) -> Path | None:
        """Write report.md and report.html (with PNG plots) into the comparison folder, as
        ``tfstudio compare --report`` does; the HTML page's path, or None (the reason shown)."""
        from ...experiments import report
        from ..report_plots import draw_report
        if self.folder is None:
            self.status.setText("Cannot export: nothing compared yet; Run first")
            return None
        try:
            page, _ = report.write_page(self.folder, draw_report)
        except (ValueError, OSError, RuntimeError) as exc:
            self.status.setText(f"Cannot export: {exc}")
            return None
        self.status.setText(f"Report written: {page}")
        return page


def join_runs(panel, runs: list[tuple[str, str]]) -> list:
    """Every finished run of a comparison in ``panel``'s Runs, named "VARIANT seed S" (a
    folder that cannot be read is left out); their records, in order."""
    records = []
    for path, name in runs:
        try:
            record = panel.history.record_for_folder(path)
        except (ValueError, OSError):
            continue
        record.architecture = name
        panel.history.add(record)
        records.append(record)
    panel.opened_runs.refresh()
    return records


def open_variant(panel, path: str, name: str) -> None:
    """"Open this variant": the run in Runs and opened there, its graph on the canvas, so
    every view of the Train workspace looks inside it."""
    records = join_runs(panel, [(path, name)])
    if not records:
        panel.show_error(f"{path} is no longer a readable run folder", "Cannot open the variant")
        return
    panel.open_run(records[0])
    runs = next((i for i in range(panel.tabs.count()) if panel.tabs.tabText(i) == "Runs"), None)
    if runs is not None:
        panel.tabs.setCurrentIndex(runs)
