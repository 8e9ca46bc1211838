"""Runs remembered across sessions: ``DATA_DIR/runs.json`` lists the run folders the app made
or opened, newest first, so a restarted app can reopen a past run's curves, probe snapshots and
weights. The folders themselves live under ``DATA_DIR/runs/`` (any tfstudio run folder, for
instance one the CLI trained, can be added). Pure Python: no Qt, no torch.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ...runs.folder import RunError, RunFolder
from ...train.events import read_events
from ..text import short_name
from .series import RunSeries

HISTORY_FILE = "runs.json"
RUNS_DIR = "runs"
MAX_REMEMBERED = 200


@dataclass
class RunRecord:
    path: str
    architecture: str          # the graph's name (what a legend shows)
    corpus: str = ""
    tokenizer: str = ""
    started: str = ""          # local time, "2026-11-29 09:41:03"
    params: int = 0
    status: str = "running"    # running | completed | stopped | failed | unknown
    steps: int = 0
    final_loss: float | None = None

    @property
    def label(self) -> str:
        """Architecture and start time: "tiny-gpt · 09:41:03", as every view of the Train
        workspace names the run (the Runs list, the caption, legends): one line, the name
        elided in the middle past 48 characters."""
        return f"{short_name(self.architecture)} · {self.started[11:] or Path(self.path).name}"


class RunHistory:
    def __init__(self, data_dir: str | Path):
        self.data_dir = Path(data_dir)
        self.file = self.data_dir / HISTORY_FILE
        self.root = self.data_dir / RUNS_DIR

    # ------------------------------------------------------------------ records
    def records(self) -> list[RunRecord]:
        """Remembered runs whose folder still exists, newest first. A run left "running" by an
        app that was closed or crashed mid-run reads as "stopped"."""
        out = []
        for raw in self._read():
            known = {f.name for f in fields(RunRecord)}
            try:
                record = RunRecord(**{k: v for k, v in raw.items() if k in known})
            except TypeError:
                continue  # an entry missing its path or architecture: skip it, keep the rest
            if RunFolder(record.path).exists():
                out.append(record)
        return out

    def add(self, record: RunRecord) -> None:
        entries = [r for r in self._read() if r.get("path") != record.path]
        self._write([asdict(record)] + entries[:MAX_REMEMBERED - 1])

    def update(self, path: str | Path, **changes) -> None:
        entries = self._read()
        for entry in entries:
            if entry.get("path") == str(path):
                entry.update(changes)
        self._write(entries)

    def forget(self, path: str | Path) -> None:
        """Drop a run from the list (its folder stays on disk)."""
        self._write([r for r in self._read() if r.get("path") != str(path)])

    def mark_interrupted(self) -> None:
        """At start-up: runs still marked running were cut off when the app last closed."""
        entries = self._read()
        changed = False
        for entry in entries:
            if entry.get("status") == "running":
                entry["status"] = "stopped"
                changed = True
        if changed:
            self._write(entries)

    def new_run_dir(self, architecture: str) -> Path:
        """A fresh folder name under ``DATA_DIR/runs``: time stamp and architecture."""
        stem = time.strftime("%Y%m%d-%H%M%S") + "-" + (_safe(architecture) or "graph")
        path, n = self.root / stem, 1
        while path.exists():
            n += 1
            path = self.root / f"{stem}-{n}"
        return path

    def record_for_folder(self, path: str | Path) -> RunRecord:
        """A record describing an existing run folder (one the app did not start itself)."""
        folder = RunFolder(path)
        if not folder.exists():
            raise ValueError(f"{path} is not a tfstudio run folder: it has no config.json and "
                             "graph.json. Choose the folder `tfstudio train --out` wrote")
        try:
            config = folder.config()
        except RunError as exc:  # a damaged config.json: the caller's one clear line
            raise ValueError(str(exc)) from None
        series = RunSeries.from_events("", read_events(folder.metrics_path))
        name = folder.graph().meta.get("name") or Path(path).name
        started = folder_started(path)
        status = series.end.split(" ")[0] if series.end else "unknown"
        return RunRecord(str(Path(path)), str(name), config.corpus, config.tokenizer, started,
                         series.params, status, series.steps[-1] if series.steps else 0,
                         series.loss[-1] if series.loss else None)

    # ------------------------------------------------------------------ file
    def _read(self) -> list[dict]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, json.JSONDecodeError):
            return []  # a damaged list is forgotten; the run folders are untouched
        return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []

    def _write(self, entries: list[dict]) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps(entries, indent=1), encoding="utf-8")
        os.replace(tmp, self.file)


FOLDER_TIME = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})(?:-|$)")


def folder_started(path: str | Path) -> str:
    """When the run started, from its folder's own name ("20261206-043347-tiny-gpt": the
    time ``new_run_dir`` stamped it with, "2026-12-06 04:33:47"); "" for a folder named
    otherwise (its label then shows the folder's name). Never a file's modification time: the
    window that trained a run and one that added it after a restart name it alike."""
    match = FOLDER_TIME.match(Path(path).name)
    if match is None:
        return ""
    y, mo, d, h, mi, s = match.groups()
    return f"{y}-{mo}-{d} {h}:{mi}:{s}"


def corpus_name(spec: str) -> str:
    """One name for one corpus: "sample" is the medium stories, listed as "sample:medium"
    (the app's Train writes the one, ``tfstudio train --corpus sample`` the other)."""
    from ...data.corpus import DEFAULT_SAMPLE_SIZE  # (pure Python, no torch)
    return f"sample:{DEFAULT_SAMPLE_SIZE}" if spec.strip() == "sample" else spec


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:40]


def load_series(record: RunRecord) -> RunSeries:
    """The curves of a past run, read back from its ``metrics.jsonl``."""
    series = RunSeries.from_events(record.label, read_events(Path(record.path) / "metrics.jsonl"))
    series.is_task = record.corpus.startswith("task:") if record.corpus else None
    return series
