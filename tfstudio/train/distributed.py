"""Multi-process training on PyTorch's own engine (torch.distributed + DistributedDataParallel).

``torchrun --nproc_per_node N -m tfstudio train ...`` sets RANK, WORLD_SIZE and LOCAL_RANK; we join
the process group (NCCL on GPUs, gloo on CPUs), each rank trains on its slice of the same global
batch, DDP averages the gradients, and only rank 0 writes logs and checkpoints.

Models larger than one GPU: ``--parallel fsdp`` wraps with FSDP2 (``fully_shard``) instead of DDP:
each layer copy and then the whole model are sharded, so parameters, gradients and optimizer
state are split across ranks; see docs/DISTRIBUTED.md.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def from_environment() -> DistInfo:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistInfo()
    return DistInfo(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))


def init(info: DistInfo, device: torch.device) -> torch.device:
    """Join the process group; returns the device this rank trains on."""
    if not info.enabled or dist.is_initialized():
        return device
    if device.type == "cuda":
        device = torch.device("cuda", info.local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        backend = "gloo"
    dist.init_process_group(backend=backend, rank=info.rank, world_size=info.world_size)
    return device


def shutdown(info: DistInfo, wait_for_peers: bool = False) -> None:
    """Leave the process group; ``wait_for_peers`` first meets every rank at a barrier (only
    safe when all of them got this far, i.e. after a clean end)."""
    if info.enabled and dist.is_initialized():
        if wait_for_peers:
            dist.barrier()
        dist.destroy_process_group()


def mean_across_ranks(value: float, info: DistInfo, device: torch.device) -> float:
    if not info.enabled:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return float(t.item()) / info.world_size


def all_ranks_agree(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """True when ``flag`` holds on every rank (a collective: every rank must call it)."""
    if not info.enabled:
        return flag
    t = torch.tensor([1 if flag else 0], dtype=torch.int32, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return bool(t.item())


def local_rows(global_batch: int, info: DistInfo) -> tuple[int, int]:
    """This rank's slice [start, stop) of a global batch of ``global_batch`` rows."""
    if global_batch % info.world_size:
        raise ValueError(f"batch size {global_batch} does not split evenly over "
                         f"{info.world_size} processes; pick a multiple of {info.world_size}")
    per = global_batch // info.world_size
    return info.rank * per, (info.rank + 1) * per


def wrap_for_training(model: torch.nn.Module, info: DistInfo, parallel: str,
                      device: torch.device) -> torch.nn.Module:
    """The module to train: DDP around ``model``, or ``model`` itself sharded in place by FSDP2
    (one unit per layer copy, then the root). Build the optimizer after this call."""
    if not info.enabled:
        return model
    if parallel == "fsdp":
        from torch.distributed.fsdp import fully_shard
        for key, module in model.blocks():
            if len(key) == 2 and isinstance(key[1], int):  # one copy of a repeated layer group
                fully_shard(module)
        fully_shard(model)
        return model
    from torch.nn.parallel import DistributedDataParallel
    ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids)


def full_weights(model: torch.nn.Module, info: DistInfo, parallel: str) -> dict | None:
    """Every rank must call this; under FSDP it gathers the whole state dict onto rank 0 (on the
    CPU). Returns None when the model already holds whole weights (single process, DDP)."""
    if not (info.enabled and parallel == "fsdp"):
        return None
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True,
                                                                cpu_offload=True))


def as_local(value: torch.Tensor) -> torch.Tensor:
    """A sharded (DTensor) scalar such as a gradient norm, as an ordinary tensor."""
    return value.full_tensor() if hasattr(value, "full_tensor") else value
