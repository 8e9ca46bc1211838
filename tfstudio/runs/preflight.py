"""Memory pre-flight: refuse a job the device cannot hold, before anything is allocated.

The cost model (tfstudio.graph.cost) says from the graph alone what training or loading a model
needs; this module compares that with what the device has free (``torch.cuda.mem_get_info`` on
a GPU; otherwise the least of the system's available memory, a cgroup limit and the address-space
limit, ``ulimit -v``) and raises :class:`MemoryRefusal` with both numbers and the fix when the
need passes 90% of it (``MARGIN``). Nothing here allocates tensors, so a
175B-parameter preset is refused in milliseconds.

- :func:`check_training_memory`: the trainer, for the CLI and the GUI alike;
- :func:`check_model_memory`: loading weights (generate, export, the GUI's reopen, import-hf).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..graph import Graph
from ..graph import block_types as bt
from ..graph.cost import ADAMW_STATE_BYTES, dtype_bytes, estimate_cost, training_memory

NO_CHECK_HINT = "or pass --no-memory-check to try anyway"
# Calibration against measured peak RSS on CPU (bench/bench_preflight_accuracy.py, the table
# in docs/BENCHMARKS.md). What the cost model's activations leave out:
# - the backward of the cross-entropy holds the gradient of the log-softmax and of the logits
#   next to both (4 vocab-wide tensors at its start, where the cost model counts 2);
# - the allocator's slack and the backward's other transients: about a fifth of the
#   activations (from 0.04 to 0.35 across the presets measured);
# - torch's own working memory, about 25 MB on a CPU between the check and the first step
#   (kernels set up, the data; a run's imports, 80 MB of it, come before the check:
#   train/preload.py): a fixed amount, left to MARGIN's tenth rather than added to the need
#   (which would refuse small runs on small machines).
HEAD_GRADIENT_COPIES = 2
ACTIVATION_SLACK = 0.2
CPU_RUNTIME = 25 * 10**6
# a job is refused above this share of the memory available: the rest is the estimate's margin
# (workspace, allocator slack) and the other programs' (a job admitted at 100% ran out)
MARGIN = 0.9


class MemoryRefusal(ValueError):
    """The job needs more memory than the device has free (the message says both, and the fix)."""


@dataclass
class Need:
    """Bytes a training step needs at its peak, per part (one process's share)."""
    weights: int
    gradients: int
    optimizer: int
    activations: int   # for the whole micro-batch

    @property
    def fixed(self) -> int:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> int:
        return self.fixed + self.activations


def human_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{int(n)} bytes"


def available_memory(device: str) -> tuple[int, str]:
    """(bytes free, where) on ``device`` ("cpu", "cuda", "cuda:1", "mps")."""
    device = str(device)
    if device.startswith("cuda"):
        import torch
        if torch.cuda.is_available():
            free, _total = torch.cuda.mem_get_info(torch.device(device))
            return int(free), device
    import psutil
    room = [(psutil.virtual_memory().available, "this machine")]
    cgroup = _cgroup_room()
    if cgroup is not None:
        room.append((cgroup, "this machine"))
    address_space = _address_space_room()
    if address_space is not None:
        room.append((address_space, "this process's address-space limit (ulimit -v)"))
    return min(room)


def _address_space_room() -> int | None:
    """What an address-space limit (``ulimit -v``, RLIMIT_AS) leaves this process, if set."""
    try:
        import resource
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    import psutil
    return max(0, soft - psutil.Process().memory_info().vms)


CGROUP = Path("/sys/fs/cgroup")  # where cgroup v2 shows this process's memory limit


def _cgroup_room(base: Path = CGROUP) -> int | None:
    """What a cgroup-v2 memory limit (a container) leaves, if one is set."""
    try:
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((base / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def training_need(graph: Graph, *, batch: int, seq_len: int, precision: str,
                  world_size: int = 1, sharded: bool = False) -> Need:
    """One process's peak for an AdamW step on a ``batch`` x ``seq_len`` micro-batch.

    Weights and gradients stay fp32 under autocast (bf16/fp16 only shrink the activations);
    ``sharded`` (FSDP) splits weights, gradients and optimizer state over ``world_size``."""
    full = training_memory(graph, batch=batch, seq_len=seq_len, dtype="float32")
    nbytes = 2 if precision in ("bf16", "fp16") else 4
    activations = batch * nbytes * _values_per_row(graph, seq_len)
    share = world_size if sharded else 1
    return Need(full.weights // share, full.gradients // share, full.optimizer // share,
                activations // max(1, world_size))


def _values_per_row(graph: Graph, seq_len: int) -> int:
    """Values one sequence holds at the step's peak: the cost model's activations, the
    logits' gradients, and the allocator's slack (see the calibration above)."""
    kept = training_memory(graph, batch=1, seq_len=seq_len, dtype="float32").activations // 4
    head = HEAD_GRADIENT_COPIES * _vocab(graph) * seq_len
    return int(kept * (1 + ACTIVATION_SLACK)) + head


def _vocab(graph: Graph) -> int:
    """The widest output head's vocabulary (0 for a graph without one)."""
    sizes = [int(node.resolved_params().get("vocab_size") or 0) for _, node in graph.walk()
             if not node.is_group and node.type != bt.TOKEN_EMBEDDING]
    return max(sizes, default=0)


def estimated_peak_rss(need: Need, resident: int) -> int:
    """Peak resident memory of a CPU training process that holds ``resident`` bytes when
    the check runs: that, torch's working memory, and the step's need."""
    return resident + CPU_RUNTIME + need.total


def check_training_memory(graph: Graph, *, batch: int, seq_len: int, grad_accum: int,
                          precision: str, device: str, world_size: int = 1,
                          sharded: bool = False, available: int | None = None) -> None:
    """Raise MemoryRefusal if one training step cannot fit on ``device``.

    ``available`` (bytes a job may use) replaces ``MARGIN`` of the measured free memory (for
    tests and what-ifs)."""
    need = training_need(graph, batch=batch, seq_len=seq_len, precision=precision,
                         world_size=world_size, sharded=sharded)
    where, free = "this machine", None
    if available is None:
        free, where = available_memory(device)
        available = int(MARGIN * free)
    # processes of one machine share its memory (GPUs each have their own)
    on_host = not str(device).startswith("cuda")
    copies = world_size if on_host else 1
    if need.total * copies <= available:
        return
    name = graph.meta.get("name") or "this graph"
    precision_name = {"bf16": "bf16 activations", "fp16": "fp16 activations"}.get(
        precision, "fp32")
    parts = (f"weights {human_bytes(need.weights)}, gradients {human_bytes(need.gradients)}, "
             f"AdamW state {human_bytes(need.optimizer)}, activations "
             f"{human_bytes(need.activations)} for {batch} x {seq_len} tokens; {precision_name}")
    per = f" per process x {copies}" if copies > 1 else ""
    raise MemoryRefusal(
        f"training {name} needs about {human_bytes(need.total)}{per} ({parts}) but {where} "
        f"has {_free_words(available, free, need.total * copies)}; "
        f"{_training_fix(need, batch, grad_accum, available // copies, on_host)}"
        f", {NO_CHECK_HINT}")


def _free_words(usable: int, free: int | None, need: int) -> str:
    """What is free; when the need fits in it but not in the share a job may use, that share
    too (else the refusal would read as a contradiction)."""
    if free is None:
        return f"{human_bytes(usable)} free"
    if need > free:
        return f"{human_bytes(free)} free"
    return f"{human_bytes(free)} free (a job may use {MARGIN:.0%} of it, {human_bytes(usable)})"


def _training_fix(need: Need, batch: int, grad_accum: int, room: int, on_host: bool) -> str:
    if need.fixed >= room:
        shard = "" if on_host else " or shard it over several GPUs (torchrun ... --parallel fsdp)"
        return (f"the model alone (weights, gradients and AdamW state: "
                f"{human_bytes(need.fixed)}) does not fit: pick a smaller preset or fewer or "
                f"narrower layers{shard}")
    # leave a fifth for what the estimate leaves out (workspace, allocator slack)
    usable = 0.8 * room
    if need.fixed >= usable:  # no batch or length helps: the model itself is the problem
        return (f"the model alone (weights, gradients and AdamW state: "
                f"{human_bytes(need.fixed)}) leaves too little of it for activations and "
                f"working space: pick a smaller preset or fewer or narrower layers")
    per_row = need.activations / batch
    fits = int((usable - need.fixed) // per_row) if per_row else batch
    if fits < 1:
        return "even one sequence does not fit: use a shorter --seq-len or a smaller preset"
    accum = math.ceil(batch / fits) * grad_accum
    return (f"use --batch-size {fits} or less (with --grad-accum {accum} to keep the effective "
            f"batch of {batch * grad_accum}), a shorter --seq-len or a smaller preset")


def check_model_memory(graph: Graph, *, device: str = "cpu", dtype: str = "float32",
                       copies: int = 2, what: str = "loading this model", hint: str = "",
                       available: int | None = None) -> None:
    """Raise MemoryRefusal if ``copies`` copies of the weights cannot fit on ``device``.

    Loading a checkpoint holds two at its peak (the compiled model and the file's tensors), as
    does an import (the checkpoint's tensors and the model they are copied into). ``hint`` is
    appended to the fix (e.g. ``NO_CHECK_HINT`` where the command has that flag)."""
    params = estimate_cost(graph).total_params
    need = params * dtype_bytes(dtype) * copies
    where, free = "this machine", None
    if available is None:
        free, where = available_memory(device)
        available = int(MARGIN * free)
    if need <= available:
        return
    extra = f", {hint}" if hint else ""
    raise MemoryRefusal(
        f"{what} needs about {human_bytes(need)} ({params:,} parameters x "
        f"{dtype_bytes(dtype)} bytes x {copies} copies while loading) but {where} has "
        f"{_free_words(available, free, need)}; use a machine (or --device) with more "
        f"memory, or a smaller model{extra}")


__all__ = ["MemoryRefusal", "Need", "available_memory", "check_model_memory",
           "check_training_memory", "estimated_peak_rss", "human_bytes", "training_need", "ADAMW_STATE_BYTES"]
