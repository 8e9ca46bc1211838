"""How much memory this machine offers a training run, for the cost panel's "fits" check.

The CPU figure comes from the operating system. A GPU is asked about only when torch is
already imported (by a compile or a training run): the editor never imports torch to start.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceMemory:
    name: str      # "CPU (system RAM)" or the GPU's name
    total: int     # bytes


def system_ram() -> int | None:
    """Total physical memory in bytes, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    if sys.platform == "win32":
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                        ("ullTotalPageFile", ctypes.c_ulonglong),
                        ("ullAvailPageFile", ctypes.c_ulonglong),
                        ("ullTotalVirtual", ctypes.c_ulonglong),
                        ("ullAvailVirtual", ctypes.c_ulonglong),
                        ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]
        status = _Status()
        status.dwLength = ctypes.sizeof(_Status)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return int(status.ullTotalPhys)
    return None


def training_device() -> DeviceMemory | None:
    """The GPU when torch is loaded and sees one, else system RAM."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                props = torch.cuda.get_device_properties(0)
                return DeviceMemory(f"GPU {props.name}", int(props.total_memory))
        except Exception:  # a broken CUDA setup still leaves the CPU to train on
            pass
    ram = system_ram()
    return DeviceMemory("CPU (system RAM)", ram) if ram else None
