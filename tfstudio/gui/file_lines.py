"""What the File menu says and remembers (no Qt): the line for a save the disk refused, and
the recent-files list after a file is opened or saved. gui/file_menu.py asks these."""
from __future__ import annotations

from pathlib import Path

from ..runs.disk import disk_line

MAX_RECENT = 8


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
