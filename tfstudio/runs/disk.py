"""A write the disk refused, said in one line by every write path: full, over the quota, past
the file-size limit (``ulimit -f``), read-only or not ours to write. No torch, no Qt: the app's
save and screenshot use it too."""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path

# a write the disk refused: full, over the quota, past the file-size limit (ulimit -f),
# read-only or not ours to write; each with what to do about it
_DISK_ERRNOS = {errno.ENOSPC: ("the disk of {where} is full", "free space"),
                errno.EDQUOT: ("the disk quota for {where} is used up", "free space"),
                errno.EFBIG: ("a file in {where} would pass the file-size limit (ulimit -f)",
                              "raise the limit"),
                errno.EROFS: ("{where} is on a read-only disk", "choose a writable folder"),
                errno.EACCES: ("{where} may not be written here (permission denied)",
                               "choose a writable folder")}
# how safetensors' Rust side names the OS's error: "(os error 28)", or "Os { code: 28, ..."
_OS_ERROR = re.compile(r"os error (\d+)|Os \{ code: (\d+)")


def _disk_errno(exc: BaseException) -> int | None:
    """The OS error number of a refused write (safetensors says it in its Rust side's words,
    without importing it here), or None for any other error."""
    number = exc.errno if isinstance(exc, OSError) else None
    if number is None and type(exc).__name__ == "SafetensorError":
        match = _OS_ERROR.search(str(exc))
        number = int(match.group(1) or match.group(2)) if match else None
    return number if number in _DISK_ERRNOS else None


def disk_refusal(exc: BaseException) -> str | None:
    """What a failed write says when the disk refused it (full, quota, file-size limit,
    read-only, permission), in words with a ``{where}`` to fill; None for any other error.
    safetensors reports these as SafetensorError text."""
    number = _disk_errno(exc)
    return None if number is None else _DISK_ERRNOS[number][0]


def disk_sentence(exc: BaseException, where) -> str | None:
    """What the disk refused and the fix, for a path: "the disk of X is full; free space";
    None for another error."""
    number = _disk_errno(exc)
    if number is None:
        return None
    refusal, fix = _DISK_ERRNOS[number]
    return f"{refusal.format(where=where)}; {fix}"


def disk_line(exc: BaseException, where, when: str, kept: str, again: str) -> str | None:
    """The one line every write path says when the disk refused a write: what and where,
    when, what was kept, what to do ("free space and import again"); None for another error."""
    number = _disk_errno(exc)
    if number is None:
        return None
    refusal, fix = _DISK_ERRNOS[number]
    return f"{refusal.format(where=where)} {when}; {kept}; {fix} and {again}"


def write_whole(path, text: str) -> None:
    """Write ``text`` to ``path`` beside it first and rename it into place: a write the disk
    refuses leaves the file as it was and nothing half-written beside it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # two writers never share it
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
