"""Choosing where and in what precision to train."""
from __future__ import annotations

import contextlib

import torch


def pick_device(name: str = "auto") -> torch.device:
    """``auto`` takes CUDA, then Apple's MPS, then the CPU; an explicit name is checked."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but no CUDA GPU is available; "
                         "use --device cpu (or auto)")
    if device.type == "mps" and not (getattr(torch.backends, "mps", None)
                                     and torch.backends.mps.is_available()):
        raise ValueError("device 'mps' was asked for but Apple's MPS is not available; "
                         "use --device cpu (or auto)")
    return device


def pick_precision(name: str, device: torch.device) -> str:
    if name == "auto":
        return "bf16" if device.type == "cuda" and torch.cuda.is_bf16_supported() else "fp32"
    if name == "fp16" and device.type == "cpu":
        raise ValueError("fp16 training needs a GPU; use bf16 or fp32 on the CPU")
    return name


def autocast(device: torch.device, precision: str):
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.type, dtype=dtype)


# Peak dense bf16 FLOP/s of common GPUs, for the MFU estimate (vendor datasheets, no sparsity).
PEAK_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "A10": 125e12,
              "RTX 4090": 165e12, "RTX 3090": 71e12, "V100": 125e12, "T4": 65e12}


def peak_flops(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for key, value in PEAK_FLOPS.items():
        if key in name:
            return value
    return None
