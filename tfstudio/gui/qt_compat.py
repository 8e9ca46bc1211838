"""A guard against reference-counting bugs in some PySide6 builds on CPython < 3.12.

PySide6 6.12.0's stable-ABI wheels return ``None`` from void Qt methods without taking a
reference to it, and ``SignalInstance.emit`` returns ``True`` the same way. On CPython 3.12+
that is harmless (``None``, ``True`` and ``False`` are immortal, PEP 683); on 3.10 and 3.11 every
such call (``painter.save()``, ``widget.update()``, every signal emitted, ...) drops one
reference, and after a few thousand calls the interpreter aborts with "none_dealloc:
deallocating None" or "bool_dealloc: deallocating True or False". An editor makes thousands of
those calls a second while painting; plots and training views emit signals at the same pace.

:func:`guard_none_refcount` measures whether the installed binding has the bugs and, only where
it does, gives the affected singletons the effectively infinite reference count they have on
3.12.
"""
from __future__ import annotations

import ctypes
import sys

_PROBE_CALLS = 64
_applied = False
_bools_applied = False


def binding_drops_none() -> bool:
    """True when calling a void Qt method loses a reference to None."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(_PROBE_CALLS):
        probe.setObjectName("probe")
    return before - sys.getrefcount(None) >= _PROBE_CALLS // 2


def binding_drops_bools() -> bool:
    """True when emitting a signal loses a reference to True (the value ``emit`` returns)."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        fired = Signal()

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(_PROBE_CALLS):
        probe.fired.emit()
    return before - sys.getrefcount(True) >= _PROBE_CALLS // 2


def _immortalise(obj) -> None:
    # ob_refcnt is the first field of every CPython object; 2**40 lost references is beyond
    # any session's reach, which is what immortality amounts to on 3.12
    ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40


def guard_none_refcount() -> bool:
    """Apply the guards where needed (once per process); True when the None guard applied
    (True and False are guarded as well when signal emission drops them)."""
    global _applied, _bools_applied
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _applied
    if not _applied and binding_drops_none():
        _immortalise(None)
        _applied = True
    if not _bools_applied and binding_drops_bools():
        _immortalise(True)
        _immortalise(False)
        _bools_applied = True
    return _applied
