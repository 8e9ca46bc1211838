"""One writer per run folder: an exclusive lock held for the life of a training run.

``RUN_DIR/.lock`` is locked with ``fcntl.flock`` and holds the writer's PID, so a second writer
is refused with the holder's PID. The kernel drops the lock when its process ends however it
ends (a SIGKILL too), so a lock left by a killed run is taken over; a clean end empties the file,
so a PID still in it names a writer that died mid-run (``previous_holder``, for the run to say so).
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs are then not protected
    fcntl = None

LOCK_FILE = ".lock"


class RunLocked(RuntimeError):
    """Another live process is writing this run folder."""


class RunLock:
    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None
        self._made_folder = False  # a refused run leaves no empty folder behind
        self.previous_holder: int | None = None  # a writer that died holding the lock

    def acquire(self) -> None:
        """Take the lock, or raise RunLocked naming the holder's PID."""
        if self._fd is not None:
            return
        self._made_folder = not self.path.parent.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_pid(fd)
                os.close(fd)
                who = f"process {holder}" if holder else "another process"
                raise RunLocked(
                    f"{self.path.parent} is being written by another training run ({who}); "
                    "wait for it to end, stop it, or choose another --out") from None
        holder = _read_pid(fd)
        self.previous_holder = holder if holder not in (None, os.getpid()) else None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        except OSError:
            pass
        os.close(self._fd)  # closing drops the flock
        self._fd = None
        folder = self.path.parent
        if self._made_folder and [p.name for p in folder.iterdir()] == [LOCK_FILE]:
            self.path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                folder.rmdir()

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
