"""Where the data layer keeps its caches, and how it writes files so readers never see half of one.

The cache lives in ``~/.cache/tfstudio`` unless the environment variable ``TFSTUDIO_CACHE``
names another folder. Everything in it can be deleted at any time; it is rebuilt on demand.
"""
from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

CACHE_ENV = "TFSTUDIO_CACHE"


def cache_dir(sub: str = "") -> Path:
    """The cache folder (or a sub-folder of it), created if missing."""
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tfstudio").expanduser()
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` in one step.

    Two processes filling the same cache entry both succeed and the last rename wins; a crash
    leaves only a stray ``.tmp`` file, never a truncated entry.
    """
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_writer(path) as f:
        f.write(data)
