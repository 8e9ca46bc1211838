"""What the Costs panel says, from the report and the memory estimate (no Qt): the model's
rows, the per-block table, the memory rows and the verdict on whether a step fits this
machine. gui/cost_panel.py only puts these words in its labels."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph.cost import MemoryEstimate, training_memory
from .device_memory import DeviceMemory
from .graph_report import GraphReport
from .text import bytes_label, count_label, flops_label

MEMORY_ROWS = ("weights", "gradients", "optimizer", "activations", "total")


def unavailable_reason(report: GraphReport) -> str:
    """Why no numbers are shown (the graph has errors), else ""."""
    errors = report.errors
    if not errors:
        return ""
    return (f"Unavailable: the graph has {errors} error{'s' * (errors != 1)} (see Problems); "
            "these numbers would describe a model that cannot be built.")


def model_lines(report: GraphReport) -> dict[str, str]:
    """The Model box's four values: total, without embeddings, FLOPs and KV cache per token."""
    cost = None if report.errors else report.cost
    if cost is None:
        missing = "unavailable" if report.errors else "—"
        return dict.fromkeys(("total", "non_embedding", "flops", "kv"), missing)
    full_kv = cost.kv_cache_bytes_per_token * cost.context_length
    return {"total": f"{count_label(cost.total_params)}  ({cost.total_params:,})",
            "non_embedding": count_label(cost.non_embedding_params),
            "flops": f"{flops_label(cost.flops_per_token)} at {cost.context_length} tokens",
            "kv": f"{bytes_label(cost.kv_cache_bytes_per_token)}  "
                  f"(full context: {bytes_label(full_kv)})"}


@dataclass(frozen=True)
class BlockRow:
    path: tuple[str, ...]  # the group it sits in; () at the top level
    node_id: str
    params: int

    @property
    def where(self) -> str:
        return "/".join((*self.path, self.node_id))


def block_rows(report: GraphReport) -> list[BlockRow]:
    """Blocks with parameters, largest first (none for a graph with errors)."""
    if report.errors or report.cost is None:
        return []
    rows = [BlockRow(tuple(path), nid, n) for (path, nid), n in report.cost.node_params.items()
            if n]
    return sorted(rows, key=lambda r: -r.params)


def share_texts(rows: list[BlockRow]) -> list[str]:
    """Each row's share of the top level's parameters; a block inside a group, "one copy"
    (its group's row already counts it × repeat)."""
    total = max(1, sum(r.params for r in rows if not r.path))
    return [f"{100 * r.params / total:.1f}%" if not r.path else "one copy" for r in rows]


def fits(estimate: MemoryEstimate | None, device: DeviceMemory | None) -> bool | None:
    """Whether one step's estimate fits ``device``; None when either is unknown."""
    if estimate is None or device is None:
        return None
    return estimate.total <= device.total


@dataclass(frozen=True)
class MemoryView:
    """The memory box: a value per row of MEMORY_ROWS, the verdict and its role (a style:
    "ok", "error" or "muted"), and the estimate (None when there is none)."""
    rows: dict[str, str]
    verdict: str
    role: str
    estimate: MemoryEstimate | None = None


def memory_view(root, *, batch: int, seq_len: int, dtype: str,
                device: DeviceMemory | None, unavailable: str = "") -> MemoryView:
    """The memory one training step of ``root`` needs, and whether ``device`` holds it."""
    dashes = dict.fromkeys(MEMORY_ROWS, "—")
    if unavailable:  # no confident numbers, no "fits", for a graph that cannot build
        return MemoryView(dashes, unavailable, "error")
    try:
        est = training_memory(root, batch=batch, seq_len=seq_len, dtype=dtype)
    except Exception as exc:  # an invalid graph has no estimate; say why instead
        return MemoryView(dashes, f"No estimate: {exc}", "muted")
    rows = {name: bytes_label(getattr(est, name)) for name in MEMORY_ROWS}
    if device is None:
        return MemoryView(rows, "This machine's memory is unknown.", "muted", est)
    if fits(est, device):
        return MemoryView(rows, f"✔ Fits on this machine: {device.name}, "
                                f"{bytes_label(device.total)} "
                                f"({100 * est.total / device.total:.0f}% used).", "ok", est)
    return MemoryView(rows, f"✘ Does not fit: {device.name} has {bytes_label(device.total)}, "
                            f"this needs {est.total / device.total:.1f}×. Lower the batch or the "
                            "length, or use bfloat16.", "error", est)
