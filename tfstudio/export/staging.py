"""An export or an import is written into a temporary folder beside its destination and moved
into place only once every file is whole, so a half-written model never exists under its final
name. A write the disk refuses (full, quota, ``ulimit -f``, read-only) ends in one line naming
the folder, with the temporary folder removed and the destination as it was."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, TypeVar

from .errors import InteropError

T = TypeVar("T")


def write_staged(out_dir, overwrite: bool, what: str, write: Callable[[Path, Path], T]) -> T:
    """``write(staging, out)`` fills ``staging`` (``out`` is the name to show); then its files
    become ``out``'s. ``what`` names the work in the refusal ("export", "import"). An existing
    folder with files is written into only with ``overwrite`` (its other files are kept)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InteropError(f"{out} exists and is not a folder; choose another --out")
    held = out.is_dir() and any(out.iterdir())
    if held and not overwrite:
        raise InteropError(f"{out} already has files in it; choose an empty folder or pass "
                           "--force to overwrite")
    staging = out.parent / f".{out.name}.{what}-{os.getpid()}.partial"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        result = write(staging, out)
        _move_into_place(staging, out)
    except Exception as exc:
        from ..runs.disk import disk_line
        kept = f"{out} is as it was" if held else f"nothing was left in {out}"
        line = disk_line(exc, out, f"while writing the {what}", kept, f"{what} again")
        if line is None:
            if isinstance(exc, OSError) and exc.filename:  # named by the folder the user gave
                exc.filename = str(exc.filename).replace(str(staging), str(out))
            raise
        raise InteropError(line) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


def _move_into_place(staging: Path, out: Path) -> None:
    """``staging`` becomes ``out`` in one rename when ``out`` is new or empty; into a folder
    that holds files, each new file replaces its namesake (other files stay)."""
    if not out.exists() or not any(out.iterdir()):
        if out.is_dir():
            out.rmdir()
        os.replace(staging, out)
        return
    for item in sorted(staging.iterdir()):
        target = out / item.name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(item, target)
