"""Paths a user's machine produces that a command must refuse in words: a folder nothing can be
created in, and a device that is always full."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

FULL_DEVICE = Path("/dev/full")  # every write to it fails with ENOSPC ("no space left")


def read_only_folder(tmp: Path) -> Path:
    """A folder nothing can be created in: mode 555, or for root (whom modes do not stop)
    sysfs, which refuses new entries to everyone."""
    folder = tmp / "read-only"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o555)
    if not os.access(folder, os.W_OK):
        return folder
    if Path("/sys/fs").is_dir():
        return Path("/sys/fs")
    pytest.skip("no read-only folder on this machine (root, and no sysfs)")
