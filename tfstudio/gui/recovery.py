"""Crash recovery's rule (no Qt): what the autosave file holds, and whether the editor offers
it back at start. A clean exit deletes the autosave and stamps ``clean-exit``; so an autosave
found at start that is newer than the last clean exit means the previous session died with
unsaved work. gui/autosave.py writes the files on its timer; file_menu.py offers the work."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..graph import Graph, GraphFileError, graph_from_dict, graph_to_dict

AUTOSAVE_NAME = "autosave.json"
CLEAN_EXIT_NAME = "clean-exit"


@dataclass
class Recovery:
    graph: Graph
    saved_at: float
    file: Path | None    # the file the work belonged to, if it had one


def autosave_text(graph: Graph, file: Path | None, now: float) -> str:
    """The autosave file's contents: the graph, when, and the file the work belonged to."""
    return json.dumps({"saved_at": now, "file": str(file) if file else None,
                       "graph": graph_to_dict(graph)})


def clean_exit_text(now: float) -> str:
    """The clean-exit stamp's contents: the time of the exit."""
    return f"{now:.6f}"


def _stamp(path: Path) -> float:
    try:
        return float(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return 0.0


def pending_recovery(directory: Path) -> Recovery | None:
    """The autosave left by a session that did not exit cleanly, if there is one."""
    path = Path(directory) / AUTOSAVE_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        saved_at = float(data["saved_at"])
        graph = graph_from_dict(data["graph"], str(path))
    except (OSError, ValueError, KeyError, TypeError, GraphFileError):
        return None  # unreadable: nothing we could offer
    if saved_at <= _stamp(Path(directory) / CLEAN_EXIT_NAME):
        return None
    return Recovery(graph, saved_at, Path(data["file"]) if data.get("file") else None)
