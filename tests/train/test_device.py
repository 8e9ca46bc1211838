"""Devices and precision (tfstudio/train/device.py): auto's choice, explicit devices checked,
autocast, peak FLOPs of known GPUs."""
from types import SimpleNamespace

import pytest
import torch


def test_auto_takes_cuda_then_mps_then_the_cpu(monkeypatch):
    from tfstudio.train.device import pick_device
    mps = SimpleNamespace(is_available=lambda: False)
    monkeypatch.setattr(torch.backends, "mps", mps)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("cpu") and pick_device() == torch.device("cpu")
    mps.is_available = lambda: True
    assert pick_device("auto") == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device("auto") == torch.device("cuda")


def test_an_explicit_device_is_checked(monkeypatch):
    from tfstudio.train.device import pick_device
    mps = SimpleNamespace(is_available=lambda: False)
    monkeypatch.setattr(torch.backends, "mps", mps)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError) as cuda:
        pick_device("cuda:1")
    assert str(cuda.value) == ("device 'cuda' was asked for but no CUDA GPU is available; use "
                               "--device cpu (or auto)")
    with pytest.raises(ValueError) as apple:
        pick_device("mps")
    assert str(apple.value) == ("device 'mps' was asked for but Apple's MPS is not available; "
                                "use --device cpu (or auto)")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    mps.is_available = lambda: True
    assert pick_device("cuda:1") == torch.device("cuda", 1)
    assert pick_device("mps") == torch.device("mps")


def test_precision_auto_is_bf16_only_on_a_gpu_that_has_it(monkeypatch):
    from tfstudio.train.device import pick_precision
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert pick_precision("auto", cuda) == "bf16" and pick_precision("auto", cpu) == "fp32"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert pick_precision("auto", cuda) == "fp32"
    assert pick_precision("fp16", cuda) == "fp16" and pick_precision("bf16", cpu) == "bf16"
    with pytest.raises(ValueError) as refused:
        pick_precision("fp16", cpu)
    assert str(refused.value) == "fp16 training needs a GPU; use bf16 or fp32 on the CPU"


def test_autocast_lowers_to_the_precision_asked_for():
    from tfstudio.train.device import autocast
    cpu = torch.device("cpu")
    with autocast(cpu, "fp32"):
        assert not torch.is_autocast_enabled("cpu")
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    with autocast(cpu, "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    half = autocast(cpu, "fp16")
    assert (half.device, half.fast_dtype) == ("cpu", torch.float16)


@pytest.mark.parametrize("name, peak", [  # dense bf16 tensor FLOP/s from the datasheets
    ("NVIDIA H200", 989e12), ("NVIDIA H100 80GB HBM3", 989e12), ("NVIDIA A100-SXM4-80GB", 312e12),
    ("NVIDIA L40S", 362e12), ("NVIDIA A10", 125e12), ("NVIDIA GeForce RTX 4090", 165e12),
    ("NVIDIA GeForce RTX 3090", 71e12), ("Tesla V100-SXM2-16GB", 125e12), ("Tesla T4", 65e12),
    ("NVIDIA GeForce GTX 1080", None)])
def test_peak_flops_of_known_gpus(name, peak, monkeypatch):
    from tfstudio.train.device import peak_flops
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: asked.append(d) or name)
    assert peak_flops(torch.device("cuda", 1)) == peak
    assert asked == [torch.device("cuda", 1)]
    assert peak_flops(torch.device("cpu")) is None
