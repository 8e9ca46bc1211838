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


def say_what_is_used(prog: str, folder, asked_device: str | None = None, device=None) -> None:
    """One line for each thing used that is not the one asked for: an older checkpoint than
    the newest (each damaged newer one passed over, with the one used instead) and a device
    other than the name given (``auto``, resolved). Nothing when both are as asked."""
    import sys
    folder.checkpoint()  # fills folder.notes
    for note in folder.notes:
        print(f"{prog}: note: {note}", file=sys.stderr)
    if asked_device is not None and str(device) != asked_device:
        print(f"{prog}: note: --device {asked_device}: using {device}", file=sys.stderr)
