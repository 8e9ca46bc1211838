"""How the command line reports what went wrong, in one style for every sub-command.

- a mistake the user can fix (a bad option, a missing file): ``raise UsageError("what is wrong;
  what to do")``; it prints as ``tfstudio CMD: what is wrong; what to do`` and exits 2;
- anything else is a bug: one line naming a log file that keeps the traceback, exit 3.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import errno
import re
import sys
import traceback
from pathlib import Path

USAGE_EXIT = 2
INTERNAL_EXIT = 3


class UsageError(Exception):
    """A user's mistake, with what to do about it (no traceback, exit 2)."""


class Parser(argparse.ArgumentParser):
    """argparse, but a bad argument prints one line that points to -h, not the whole usage."""

    def error(self, message: str):
        self.exit(USAGE_EXIT, f"{self.prog}: {message}; see `{self.prog} -h` for the options\n")


def check_out_folder(path: str | Path, flag: str = "--out") -> None:
    """A folder a command writes must be a folder, or not exist yet: a file there is refused
    in one line (not "[Errno 17] File exists" once the work is done)."""
    if Path(path).exists() and not Path(path).is_dir():
        raise UsageError(f"{flag} {path} is a file, not a folder; choose another {flag}")


def check_out_apart(out: str | Path, reads: dict[str, str | Path | None],
                    flag: str = "--out") -> None:
    """A command never writes where it reads: ``out`` must not be, contain or lie inside any
    path in ``reads`` (what it names, e.g. "the run export reads" -> path). Refused in one line,
    --force or not: replacing an input's files would lose what it holds."""
    target = Path(out).expanduser().resolve()
    for what, path in reads.items():
        if not path or not Path(path).exists():
            continue
        source = Path(path).expanduser().resolve()
        if target == source:
            where = "is"
        elif source.is_relative_to(target):
            where = "contains"
        elif target.is_relative_to(source) and source.is_dir():
            where = "lies inside"
        else:
            continue
        raise UsageError(f"{flag} {out} {where} {what} ({path}), and writing there would "
                         f"replace what it reads, --force or not; choose a {flag} outside it")


# what an OS error means for the path it names, and what to do (the raw "[Errno 30] ..." is
# neither); a write the disk refused (full, quota, file-size limit, read-only, permission) is
# said by runs/disk.py, the one home of those; errors outside both are left to the
# internal-error report
_OS_REASONS = {
    errno.EPERM: ("is not open to this user (operation not permitted)",
                  "choose a path you can use"),
    errno.ENOENT: ("does not exist", "check the path"),
    errno.ENOTDIR: ("is not a folder (a part of the path is a file)", "check the path"),
    errno.EISDIR: ("is a folder, not a file", "give a file's path"),
    errno.EEXIST: ("already exists", "choose another path"),
    errno.ENAMETOOLONG: ("is too long a name for the file system", "choose a shorter path"),
}


def os_error_line(exc: OSError) -> str | None:
    """``exc`` as a sentence naming its path and what to do, or None when it is not an error
    of the path (then it is a bug, reported as one)."""
    from ..runs.disk import disk_sentence
    path = exc.filename if exc.filename not in (None, "") else "a file it writes"
    refused = disk_sentence(exc, path)
    if refused:
        return refused
    reason = _OS_REASONS.get(exc.errno)
    if reason is None:
        return None
    what, fix = reason
    return f"{path} {what}; {fix}"


def os_error_from_text(text: str) -> OSError | None:
    """The OSError that ``str(exc)`` (``[Errno 30] Read-only file system: 'PATH'``) came
    from, for errors that reach us only as text (a trainer's Failed event)."""
    match = re.match(r"\[Errno (\d+)\] ([^:]+)(?:: '(.*)')?$", text.strip())
    if not match:
        return None
    return OSError(int(match[1]), match[2], match[3])


def user_message(exc: Exception) -> str:
    """What an error the user can act on says: an OS error as a sentence, else its text."""
    line = os_error_line(exc) if isinstance(exc, OSError) else None
    return line or " ".join(str(exc).split())


def report_usage(command: str, message: str) -> int:
    print(f"{prog(command)}: {message}", file=sys.stderr)
    return USAGE_EXIT


def report_internal(command: str) -> int:
    """Keep the current exception's traceback in a log file and say where, in one line."""
    return report_bug(command, str(sys.exc_info()[1]), traceback.format_exc())


def report_bug(command: str, summary: str, details: str) -> int:
    """One line for a bug, naming the log file that keeps ``details`` (a traceback)."""
    try:
        path = log_dir() / f"{_dt.datetime.now():%Y%m%d-%H%M%S}-{command or 'tfstudio'}.log"
        path.write_text(f"tfstudio {' '.join(sys.argv[1:])}\n\n{details}", encoding="utf-8")
        where = f"the details are in {path}"
    except OSError:  # nowhere to write: the traceback is the only record, so show it
        sys.stderr.write(details)
        where = "the details are above"
    print(f"{prog(command)}: internal error ({summary}); {where}; please report it with that "
          f"file", file=sys.stderr)
    return INTERNAL_EXIT


def log_dir() -> Path:
    """Where internal-error logs go: the cache's ``logs`` folder (~/.cache/tfstudio/logs, or
    under $TFSTUDIO_CACHE), created if missing."""
    from ..data.paths import cache_dir
    return cache_dir("logs")


def prog(command: str | None) -> str:
    return f"tfstudio {command}" if command else "tfstudio"
