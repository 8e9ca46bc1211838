"""Reading a model folder given on the command line: only regular files whose real path is
inside it, so a link to ``/etc/passwd`` or to weights elsewhere is refused by name, never read
(issue 24's "folders mean their inside")."""
from __future__ import annotations

import json
from pathlib import Path

from .errors import InteropError

# a tokenizer.json is at most tens of MB (LLaMA 3's: 9 MB); more is not a tokenizer
MAX_TOKENIZER_BYTES = 256 << 20


class NotInside(InteropError):
    """A file of the folder that is not the folder's own: a link out, a device, a FIFO."""


def inside(folder: Path, name: str) -> Path:
    """``folder / name`` if it is a regular file whose real path is inside ``folder``; a link
    out of it is refused, naming it. (A Hugging Face cache snapshot's files are links into its
    repository's ``blobs/``, which counts as inside.)"""
    path = folder / name
    real = path.resolve()
    root = folder.resolve()
    roots = [root]
    if root.parent.name == "snapshots":  # models--org--name/snapshots/REV -> ../../blobs/SHA
        roots.append(root.parent.parent / "blobs")
    if not any(real.is_relative_to(r) for r in roots):
        raise NotInside(f"{path} links outside {folder} (to {real}); copy the file into the "
                           "folder instead of linking it")
    if not real.is_file():
        raise NotInside(f"{path} is not a regular file; a checkpoint folder holds files")
    return path


def read_bytes_inside(folder: Path, name: str, fix: str,
                      max_bytes: int = MAX_TOKENIZER_BYTES) -> bytes:
    """The bytes of ``folder / name`` (checked by :func:`inside`, and at most ``max_bytes``);
    a fault is one InteropError naming the file, ending with ``fix``."""
    path = inside(folder, name)
    size = path.stat().st_size
    if size > max_bytes:
        raise InteropError(f"{path}: {size:,} bytes is too large for a {name} (at most "
                           f"{max_bytes:,}); {fix}")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InteropError(f"{path}: cannot be read ({exc.strerror or exc}); {fix}") from None


def parse_json(raw: bytes, path: Path, fix: str):
    """``raw`` (the bytes of ``path``) as JSON; a fault is one InteropError naming the file."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InteropError(f"{path}: cannot be read (not valid JSON: {exc}); {fix}") from None
    except RecursionError:
        raise InteropError(f"{path}: cannot be read (nested too deeply); {fix}") from None


def read_json_inside(folder: Path, name: str, fix: str,
                     max_bytes: int = MAX_TOKENIZER_BYTES):
    """The JSON in ``folder / name``, read as :func:`read_bytes_inside` reads."""
    return parse_json(read_bytes_inside(folder, name, fix, max_bytes), folder / name, fix)
