"""The Explain view's Embeddings tab: the token embedding table mapped to 2D (PCA) with the picked
token's nearest neighbours by cosine; for a run folder its step slider replays the map at every
checkpoint the run kept, each projection aligned to the latest one
(:func:`tfstudio.probes.embedding_replay`) so points move as the embeddings learn instead of
jumping when a principal axis flips."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from .colours import themed_colour
from .embedding_map import (FRESH_HINT, LABEL_ROOM, label_offsets, map_range, neighbours,
                            replay_action, step_caption)
from .explain_lines import embedding_note, orthogonality_text, replay_hint, replay_index
from .labels import muted
from .token_text import display_token
from .plots import layout_widget, menu_later_plot, styled_plot

def _replay_slider(chosen) -> QSlider:
    slider = QSlider(Qt.Horizontal)
    slider.setRange(0, 0)
    slider.setPageStep(1)
    slider.setToolTip("Replay the map over training: one position per checkpoint the run kept")
    slider.valueChanged.connect(chosen)
    return slider



class EmbeddingsPage(QWidget):
    """The tab (see the module docstring); ``failed(exc)`` when a slot caught an exception."""

    failed = Signal(object)

    def __init__(self, background=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.background = background
        self.model = self.tokenizer = None
        self.run_dir: Path | None = None
        self.replay: list[dict] = []      # the map at each kept checkpoint, oldest first
        self._replay_key: tuple | None = None  # (model, run, ids) the replay was asked for
        self._picked = ""                 # the picked token, whose neighbours the map names
        self.embedding_plots = layout_widget()
        self.embedding_plot = styled_plot(menu_later_plot(self.embedding_plots),
                                          "Token embeddings", "second principal component",
                                          "first principal component")
        self.embedding_points = None  # the scatter of the map shown (its data: the coordinates)
        self.embedding_note = muted()
        self.embedding_note.setWordWrap(True)
        self.orthogonality = muted()   # tokens against positions, in numbers and words
        self.orthogonality.setWordWrap(True)
        self.step_slider = _replay_slider(self._replay_step_chosen)
        self.step_label = QLabel("step –")
        self.replay_hint = muted()
        row = QHBoxLayout()
        row.addWidget(QLabel("Step"))
        row.addWidget(self.step_slider, 1)
        row.addWidget(self.step_label)
        column = QVBoxLayout(self)
        column.addLayout(row)
        column.addWidget(self.replay_hint)
        column.addWidget(self.embedding_plots, 1)
        column.addWidget(self.embedding_note)
        column.addWidget(self.orthogonality)

    def set_source(self, model, tokenizer, run_dir: Path | None) -> None:
        """The model mapped, and the run whose checkpoints the slider replays; clears."""
        self.model, self.tokenizer, self.run_dir = model, tokenizer, run_dir
        self.clear()

    def clear(self) -> None:
        self.replay, self._replay_key = [], None
        self.embedding_plot.clear()
        self.embedding_points = None
        self.embedding_note.setText("")
        self.orthogonality.setText("")
        self._set_replay([], "")

    def fill(self, read_out: dict | None, picked: str) -> None:
        """The map of ``read_out`` (:func:`embedding_read_out`; None: the model has none), the
        ``picked`` token marked with its neighbours; a run's replay asked for once per text."""
        if read_out is None:
            self.embedding_plot.clear()
            self.embedding_points = None
            self.embedding_note.setText("This model has no token embedding table to map.")
            self.orthogonality.setText("")
            self._set_replay([], "")
            return
        self.orthogonality.setText(orthogonality_text(read_out.get("angles")))
        self._picked = picked
        key = (id(self.model), self.run_dir, tuple(int(i) for i in read_out["ids"]))
        action = replay_action(self.run_dir, key, self._replay_key, bool(self.replay))
        if action == "fresh":
            self._set_replay([read_out], FRESH_HINT)
        elif action == "ask":
            self._replay_key = key
            self._draw_map(read_out, [read_out])  # the loaded weights now, the replay after
            self._request_replay(key)
        elif action == "show":
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
            self._set_replay(maps, replay_hint([m.get("step") for m in maps]))
        except Exception as exc:  # a slot must never take the app down
            self.failed.emit(exc)

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
        self.step_slider.setValue(replay_index([m.get("step", 0) for m in self.replay], step))

    def _replay_step_chosen(self, index: int) -> None:
        try:
            if 0 <= index < len(self.replay):
                self._draw_map(self.replay[index], self.replay)
        except Exception as exc:  # a slot must never take the app down
            self.failed.emit(exc)

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
        # room above the highest point for its label (drawn 1.2 lines over it)
        plot.setYRange(y0, y1 + (y1 - y0) * cell[1] * LABEL_ROOM, padding=0)
        step = entry.get("step")
        self.step_label.setText(step_caption(step))
        picked = self._picked
        picked_ids = self.tokenizer.encode(picked) if self.tokenizer is not None and picked \
            else []
        row, nearest = neighbours(entry, picked_ids)
        if row is not None:
            plot.addItem(pg.ScatterPlotItem([coords[row, 0]], [coords[row, 1]], size=12,
                                            brush=pg.mkBrush(themed_colour("accent")),
                                            pen=pg.mkPen(ink, width=1)))
        self.embedding_note.setText(embedding_note(len(labels), step, entry["explained"],
                                                   picked, nearest))
