"""What a training run reports, as plain data (floats, lists, strings; never live tensors).

The trainer emits these to its listeners (the CLI's progress bar, the GUI's views) and appends
each as one JSON line to ``metrics.jsonl`` in the run folder, so a past run can be replayed.
"""
from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Event:
    step: int

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class Started(Event):
    total_steps: int
    params: int
    device: str
    precision: str
    objective: str
    graph_name: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. a damaged checkpoint passed over


@dataclass
class StepMetrics(Event):
    loss: float
    lr: float
    grad_norm: float
    layer_grad_norms: dict[str, float]
    tokens_per_s: float
    elapsed_s: float
    tokens_seen: int
    mfu: float | None = None  # model FLOPs utilisation, on GPUs with a known peak


@dataclass
class EvalMetrics(Event):
    val_loss: float
    perplexity: float
    accuracy: float | None = None  # token accuracy on the answers of a synthetic task


@dataclass
class RouterMetrics(Event):
    """Mixture-of-experts routing: per MoE layer the fraction of tokens sent to each expert."""
    expert_load: dict[str, list[float]]
    aux_loss: float


@dataclass
class Probe(Event):
    """A look inside the model on the probe text, taken during training (see tfstudio.probes)."""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckpointSaved(Event):
    path: str


@dataclass
class Finished(Event):
    reason: str  # "completed" | "stopped" | "already finished" (a resume with nothing to do)
    final_loss: float | None = None
    elapsed_s: float = 0.0
    note: str = ""  # for "already finished": how to train further


@dataclass
class Failed(Event):
    reason: str   # "refused" (could not start as asked) | "nan" | "oom" | "disk" (a write the
    #               disk refused: full, quota, file-size limit) | "error"
    message: str  # what happened and what to do
    details: str = ""  # an unexpected error's traceback, for the log the command line keeps


EVENT_TYPES = {cls.__name__: cls for cls in
               (Started, StepMetrics, EvalMetrics, RouterMetrics, Probe, CheckpointSaved,
                Finished, Failed)}


def event_from_dict(data: dict[str, Any]) -> Event:
    data = dict(data)
    cls = EVENT_TYPES[data.pop("kind")]
    return cls(**data)


class MetricsLog:
    """Appends events to ``metrics.jsonl``; probes are kept out (they are large)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if isinstance(event, Probe):
            return
        line = json.dumps(event.to_dict(), allow_nan=True)
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def truncate_after(self, step: int) -> None:
        """On resume, forget what a killed run logged after its last checkpoint (and a line
        torn by the kill); the file is replaced atomically."""
        keep = [d for d in _records(self.path)
                if d.get("step", 0) <= step and d.get("kind") not in ("Finished", "Failed")]
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(json.dumps(d) + "\n" for d in keep), encoding="utf-8")
        tmp.replace(self.path)


def _records(path: Path) -> list[dict[str, Any]]:
    """The parsed lines of a metrics file; a line that is not a whole event (torn by a killed
    write, or bytes that are not UTF-8 JSON) is skipped."""
    out = []
    if Path(path).exists():
        for line in Path(path).read_bytes().splitlines():
            try:
                record = json.loads(line.decode("utf-8"))
            except ValueError:  # JSONDecodeError and UnicodeDecodeError
                continue
            if isinstance(record, dict) and record.get("kind") in EVENT_TYPES:
                out.append(record)
    return out


def read_events(path: Path) -> list[Event]:
    events = []
    for record in _records(path):
        try:
            events.append(event_from_dict(record))
        except TypeError:  # a line with the fields of no event (edited by hand)
            continue
    return events
