"""A guard against a reference-counting bug in some PySide6 builds on CPython < 3.12.

PySide6 6.12.0's stable-ABI wheels return ``None`` from void Qt methods without taking a
reference to it. On CPython 3.12+ that is harmless (``None`` is immortal, PEP 683); on 3.10 and
3.11 every such call (``painter.save()``, ``widget.update()``, ...) drops one reference, and
after a few thousand calls the interpreter aborts with "none_dealloc: deallocating None". An
editor makes thousands of those calls a second while painting.

:func:`guard_none_refcount` measures whether the installed binding has the bug and, only if
it does, gives ``None`` the effectively infinite reference count it has on 3.12.
"""
from __future__ import annotations

import ctypes
import sys

_PROBE_CALLS = 64
_applied = False


def binding_drops_none() -> bool:
    """True when calling a void Qt method loses a reference to None."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(_PROBE_CALLS):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= _PROBE_CALLS // 2


def guard_none_refcount() -> bool:
    """Apply the guard when needed (once per process); True when it was applied."""
    global _applied
    if _applied or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _applied
    if binding_drops_none():
        # ob_refcnt is the first field of every CPython object; 2**40 lost references is
        # beyond any session's reach, which is what immortality amounts to on 3.12
        ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
        _applied = True
    return _applied
