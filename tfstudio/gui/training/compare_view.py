"""The Compare view: pick a base graph and tick switch values, Run, and watch the variants train
one after another; loss curves fill in live per variant, the table fills as variants finish, the
loss-against-position plot appears at the end when asked, and Export writes report.md and
report.html with their pictures (the same report as ``tfstudio compare``).

Self-contained: ``CompareView(base_graph=None, out_dir=...)``. Training runs on a worker thread
(``tfstudio.experiments.runner.train_in_process``); its listeners only put events on a queue,
which a timer on the GUI thread drains, so the view never blocks and never floods the event loop.
"""
from __future__ import annotations

import queue
import tempfile
import threading
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ...experiments import report, runner
from ...experiments.lengths import check_lengths
from ...experiments.results import measure, read_run
from ...experiments.variants import SWITCHES, expand
from ...graph import Graph
from ...runs import TrainConfig
from ..text import short_name
from .colours import series_colour
from .plots import layout_widget, legend_above, live_plot, pen, styled_plot

DRAIN_INTERVAL_MS = 100
# the switches offered as tick boxes (activation and parameter paths: the command line)
TICKED = ("attention", "norm", "positions", "ffn")
TABLE_COLUMNS = ("variant", "parameters", "KV bytes/token", "training tok/s", "final val loss")


class CompareView(QWidget):
    finished = Signal(str)   # the comparison folder, when every variant has trained

    def __init__(self, base_graph: Graph | None = None, out_dir: str | Path | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.base_graph = base_graph
        self.out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="compare-"))
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._points: dict[str, list[tuple[int, float]]] = {}
        self._rows: dict[str, int] = {}
        self.boxes: dict[tuple[str, str], QCheckBox] = {}
        self.lesson_buttons: dict[str, QPushButton] = {}
        self.status = QLabel("Tick the values to compare, then Run.")
        self.status.setWordWrap(True)
        self.base_choice = QComboBox()
        self.corpus = QLineEdit("sample")
        self.steps = QSpinBox()
        self.lengths = QLineEdit("")
        self.run_button = QPushButton("Run")
        self.export_button = QPushButton("Export report")
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.plots = layout_widget()
        self.loss_plot = styled_plot(live_plot(self.plots.ci, 1, 0), "Loss", "loss")
        self.position_plot = styled_plot(self.plots.addPlot(row=1, col=1),
                                         "Loss against position", "loss", "position")
        self.timer = QTimer(self)
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        from ...presets import preset_names
        if self.base_graph is not None:
            self.base_choice.addItem("current graph")
        self.base_choice.addItems(preset_names())
        self.steps.setRange(10, 100_000)
        self.steps.setValue(400)
        self.lengths.setPlaceholderText("e.g. 64,128,192,256 (empty: no length plot)")
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        legend_above(self.plots.ci, self.loss_plot, 0, 0, columns=2)
        legend_above(self.plots.ci, self.position_plot, 0, 1, columns=2)
        # the choices in a column on the left, so the curves and the table get the height
        choices = QVBoxLayout()
        choices.addLayout(self._settings_form())
        choices.addWidget(self._variant_switches())
        choices.addLayout(self._buttons_row())
        choices.addLayout(self._lessons_row())
        choices.addWidget(self.status)
        choices.addStretch(1)
        results = QVBoxLayout()
        results.addWidget(self.plots, 3)
        results.addWidget(self.table, 1)
        layout = QHBoxLayout(self)
        layout.addLayout(choices, 0)
        layout.addLayout(results, 1)
        self.export_button.setEnabled(False)
        self.run_button.clicked.connect(self.run)
        self.export_button.clicked.connect(self.export)
        self.timer.setInterval(DRAIN_INTERVAL_MS)
        self.timer.timeout.connect(self.drain)

    def _settings_form(self) -> QFormLayout:
        form = QFormLayout()
        form.addRow("Base", self.base_choice)
        form.addRow("Corpus", self.corpus)
        form.addRow("Steps", self.steps)
        form.addRow("Eval lengths", self.lengths)
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

    def _buttons_row(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        return buttons

    def _lessons_row(self) -> QHBoxLayout:
        lessons = QHBoxLayout()
        lessons.addWidget(QLabel("Lessons:"))
        for name in ("positions", "attention", "norm"):
            button = QPushButton(name)
            button.setToolTip(f"train the {name} lesson (a few minutes on a CPU); Export "
                              "writes its page")
            button.clicked.connect(lambda _=False, n=name: self.run_lesson(n))
            self.lesson_buttons[name] = button
            lessons.addWidget(button)
        return lessons

    # ------------------------------------------------------------------ running
    def varies(self) -> list[tuple[str, list[str]]]:
        chosen = {}
        for (key, value), box in self.boxes.items():
            if box.isChecked():
                chosen.setdefault(key, []).append(value)
        return list(chosen.items())

    def _base(self) -> tuple[str, Graph]:
        from ... import load_graph
        name = self.base_choice.currentText()
        if name == "current graph" and self.base_graph is not None:
            return short_name(self.base_graph.meta.get("name") or "current graph"), self.base_graph
        return name, load_graph(name)

    def run(self) -> bool:
        """Start training the ticked variants; False (with the reason shown) when it cannot."""
        try:
            varies = self.varies()
            if not varies:
                raise ValueError("tick at least one value to compare")
            lengths = [int(x) for x in self.lengths.text().split(",") if x.strip()]
            name, base = self._base()
            config = TrainConfig(corpus=self.corpus.text().strip() or "sample", tokenizer="char",
                                 steps=self.steps.value(), lr=3e-3,
                                 eval_every=max(1, self.steps.value() // 10))
        except ValueError as exc:
            self.status.setText(f"Cannot run: {exc}")
            return False
        return self._start(name, base, varies, config, lengths)

    def run_lesson(self, name: str) -> bool:
        """Start built-in lesson ``name`` (positions, attention, norm): one click, and Export
        afterwards writes its page with its plot and two sentences."""
        from ... import load_graph
        from ...experiments.lessons import LESSONS
        from ...experiments.variants import apply_setting
        lesson = LESSONS[name]
        base = load_graph(lesson.base)
        for key, value in lesson.base_edits:
            base = apply_setting(base, key, value)
        return self._start(lesson.base, base, lesson.varies, lesson.config(),
                           lesson.eval_lengths, lesson=name)

    def _start(self, name: str, base: Graph, varies, config: TrainConfig, lengths: list[int],
               lesson: str = "") -> bool:
        if self._thread is not None and self._thread.is_alive():
            self.status.setText("A comparison is already training.")
            return False
        try:
            if lengths:
                check_lengths(lengths)
            variants = expand(base, varies)
            plan = runner.Plan(name, varies, [config.seed], config, lengths,
                               [{"name": v.name, "slug": v.slug, "settings": list(v.settings)}
                                for v in variants], lesson)
            specs = runner.write_plan(self.out_dir, plan, variants)
        except (ValueError, OSError) as exc:
            self.status.setText(f"Cannot run: {exc}")
            return False
        self._reset([v.name for v in variants])
        self.loss_plot.getViewBox().final_step = config.steps
        self._thread = threading.Thread(target=self._train, args=(specs, lengths),
                                        name="tfstudio-compare", daemon=True)
        self._thread.start()
        self.timer.start()
        self.run_button.setEnabled(False)
        self.status.setText(f"Training {len(specs)} variant(s) in {self.out_dir} ...")
        return True

    def _reset(self, names: list[str]) -> None:
        self.loss_plot.clear()
        self.position_plot.clear()
        self._curves, self._points, self._rows = {}, {}, {}
        self.table.setRowCount(0)
        for i, name in enumerate(names):
            self._points[name] = []
            self._curves[name] = self.loss_plot.plot([], [], pen=pen(series_colour(i)),
                                                     name=name)

    def _train(self, specs: list[runner.RunSpec], lengths: list[int]) -> None:
        """On the worker thread: train, then measure each finished run; everything the GUI
        needs goes on the queue."""
        def listeners(spec):
            return [lambda event: self._events.put(("event", spec.variant, event))]
        try:
            for spec in specs:
                failures = runner.train_in_process([spec], listeners_for=listeners)
                if failures:
                    self._events.put(("failed", spec.variant, failures[0][1]))
                    continue
                result = read_run(spec)
                measure(result, lengths, with_inference=True)
                self._events.put(("row", spec.variant, result))
        except Exception as exc:  # noqa: BLE001 - shown in the view, never kills the GUI
            self._events.put(("failed", "", f"{type(exc).__name__}: {exc}"))
        self._events.put(("done", "", None))

    def drain(self) -> None:
        """On the GUI thread: apply what the worker reported since the last drain."""
        changed = set()
        while True:
            try:
                kind, name, payload = self._events.get_nowait()
            except queue.Empty:
                break
            if kind == "event" and payload.kind == "StepMetrics" and name in self._points:
                self._points[name].append((payload.step, payload.loss))
                changed.add(name)
            elif kind == "row":
                self._add_row(name, payload)
            elif kind == "failed":
                self.status.setText(f"{name or 'Compare'} failed: {payload}")
            elif kind == "done":
                self.timer.stop()
                self.run_button.setEnabled(True)
                self.export_button.setEnabled(True)
                self.status.setText(f"Done: {self.out_dir}")
                self.finished.emit(str(self.out_dir))
        for name in changed:
            steps, losses = zip(*self._points[name])
            self._curves[name].setData(list(steps), list(losses))

    def _add_row(self, name: str, result) -> None:
        from ...graph.cost import estimate_cost
        from ...runs import RunFolder
        graph = RunFolder(result.run_dir).graph()
        kv = estimate_cost(graph, dtype="float32").kv_cache_bytes_per_token
        loss = result.final_val_loss
        cells = (name, f"{result.params:,}", f"{kv:,}", f"{result.tokens_per_s:,.0f}",
                 "n/a" if loss is None else f"{loss:.3f}")
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate(cells):
            self.table.setItem(row, col, QTableWidgetItem(text))
        self._rows[name] = row
        if result.lengths is not None:
            index = list(self._curves).index(name) if name in self._curves else row
            curve = result.lengths.per_position
            self.position_plot.plot(list(range(len(curve))), curve,
                                    pen=pen(series_colour(index)), name=name)
            if row == 0:
                self.position_plot.addItem(pg.InfiniteLine(result.lengths.train_length,
                                                           angle=90, pen=pen("#888888", 1.5,
                                                                             dashed=True)))

    # ------------------------------------------------------------------ export
    def export(self) -> Path | None:
        """Write report.md and report.html (with PNG plots) into the comparison folder, as
        ``tfstudio compare`` does; the HTML page's path, or None (with the reason shown)."""
        from ..report_plots import draw_report
        try:
            page, _ = report.write_page(self.out_dir, draw_report)
        except (ValueError, OSError, RuntimeError) as exc:
            self.status.setText(f"Cannot export: {exc}")
            return None
        self.status.setText(f"Report written: {page}")
        return page
