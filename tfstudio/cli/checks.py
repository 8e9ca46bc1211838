"""Checks of option values that several commands share, raising :class:`UsageError`."""
from __future__ import annotations

from .errors import UsageError


def check_device(name: str):
    """The torch device for ``--device``; a name torch does not know, or a device this machine
    lacks, is a usage error."""
    import torch
    from ..train.device import pick_device
    try:
        if name != "auto":
            torch.device(name)
    except RuntimeError:
        raise UsageError(f"unknown --device '{name}'; use cpu, cuda, cuda:N, mps or auto") \
            from None
    try:
        return pick_device(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
