"""What the File menu says and remembers (no Qt): its questions (unsaved changes, a recovered
autosave), the words a saved graph carries, the line for a save the disk refused, the
recent-files list after a file is opened, saved or found gone, and where a Save dialog starts
and the suffix its answer gets. gui/file_menu.py and gui/session.py ask these."""
from __future__ import annotations

from pathlib import Path

from ..graph import Graph
from ..graph.switches import describe_model
from ..runs.disk import disk_line
from .text import short_name

MAX_RECENT = 8


def unsaved_question(display_name: str) -> str:
    """What closing (or opening another graph) asks while there are unsaved changes."""
    return f"Save the changes to {short_name(display_name)} before closing it?"


def recovery_question(file: Path | None) -> str:
    """What the editor asks on opening after a crash left an autosave (naming the file the
    work belonged to, when it had one)."""
    where = f" (from {file})" if file else ""
    return (f"tfstudio did not close normally last time. An autosave of your unsaved graph"
            f"{where} was found. Recover it?")


def save_start(folder: str, display_name: str, suffix: str) -> str:
    """Where a Save dialog starts: in ``folder``, the graph's name with ``suffix`` in place of
    the name's own ("model.json" exported as PNG starts at "model.png")."""
    return str(Path(folder) / (display_name.rsplit(".", 1)[0] + suffix))


def with_suffix(path: str, suffix: str) -> str:
    """The file a Save dialog's answer names: ``suffix`` added to a name typed without one;
    an answer with its own suffix, or none (cancelled: ""), as it is."""
    return path + suffix if path and not Path(path).suffix else path


def saved_meta(graph: Graph, name: str, edited: bool) -> dict:
    """The words ``graph`` is saved with as ``name``: edited since it was opened, its name is
    the file's, its description is read from the graph as it is now, and where it came from
    is kept ("from": the preset or file it was first opened as); unedited, as they were."""
    meta = dict(graph.meta)
    if edited:
        origin = meta.get("from") or meta.get("name")
        if origin and origin != name:
            meta["from"] = str(origin)
        meta["name"] = name
        meta["description"] = describe_model(graph)
    return meta


def save_failure(exc: OSError, path: Path) -> str:
    """One line for a save of ``path`` that failed: what the disk refused and whether the file
    there is as it was (it exists) or none was written, and what to do."""
    kept = f"{path.name} is as it was" if path.exists() else "no file was written"
    line = disk_line(exc, path.parent, f"while saving {path.name}", kept, "save again")
    return line or (f"Could not save {path}: {exc.strerror or exc}. Choose another folder or "
                    "file name.")


def recent_paths(value) -> list[str]:
    """The recent files as settings hold them (a list, one string, or nothing)."""
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in (value or [])]


def with_recent(recent: list[str], path: Path) -> list[str]:
    """``recent`` with ``path`` (resolved) first, once, and at most MAX_RECENT files."""
    path = Path(path).resolve()
    return [str(path)] + [p for p in recent if Path(p) != path][:MAX_RECENT - 1]


def without_gone(recent: list[str], path: str) -> tuple[list[str], str]:
    """A recent file that no longer exists: the list without it, and the line saying so."""
    return ([p for p in recent if p != path],
            f"{path} no longer exists; it was removed from the recent files.")
