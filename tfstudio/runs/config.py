"""A training run's settings, as one plain dataclass (saved with the run, shown in the GUI)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


# What the data stream and the learning-rate schedule depend on: a resumed run keeps the saved
# values, so it draws the same batches and its learning rate continues without a jump.
KEPT_ON_RESUME = ("corpus", "corpus_errors", "tokenizer", "seq_len", "batch_size", "seed",
                  "val_fraction", "grad_accum", "lr", "warmup_steps", "min_lr_ratio",
                  "lr_decay_steps")


@dataclass
class TrainConfig:
    corpus: str = "sample"           # see tfstudio.data.load_corpus
    corpus_errors: str = "strict"    # strict | replace (invalid UTF-8 in user files)
    tokenizer: str = "byte"          # byte | char | bpe:N | tiktoken:NAME
    steps: int = 500
    batch_size: int = 16
    seq_len: int = 64                # tokens per window (defaults to the graph's context length)
    lr: float = 3e-3
    min_lr_ratio: float = 0.1        # cosine decay ends at lr * min_lr_ratio
    lr_decay_steps: int = 0          # steps the cosine spans (0: all); later ones keep its end
    warmup_steps: int = 50
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0           # 0 disables clipping
    grad_accum: int = 1              # micro-batches per optimizer step
    precision: str = "auto"          # auto | fp32 | bf16 | fp16 (auto: bf16 on CUDA, else fp32)
    compile: bool = False            # torch.compile the model
    device: str = "auto"             # auto | cpu | cuda | cuda:N | mps
    parallel: str = "ddp"            # under torchrun: ddp (replicas) | fsdp (sharded weights)
    seed: int = 1337
    eval_every: int = 100
    eval_batches: int = 8
    checkpoint_every: int = 0        # 0: only at the end (and on stop)
    keep_checkpoints: int = 2
    log_every: int = 1
    probe_every: int = 0             # steps between looks inside the model (0: never)
    probe_text: str = ""
    val_fraction: float = 0.1
    init_from: str = ""              # a run folder whose latest weights start this run
    no_memory_check: bool = False    # skip the pre-flight that refuses runs too big to fit

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object of settings, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown training settings: {', '.join(sorted(unknown))}")
        defaults = cls()
        for name, value in data.items():
            _check_type(name, value, getattr(defaults, name))
        return cls(**data)

    def check(self) -> None:
        """Raise ValueError naming the first setting out of range."""
        positive = ("steps", "batch_size", "seq_len", "grad_accum", "eval_batches", "log_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1; got {getattr(self, name)}")
        # 0 has a meaning for each of these (all steps, never, only at the end, keep all)
        counts = ("lr_decay_steps", "warmup_steps", "eval_every", "checkpoint_every",
                  "keep_checkpoints", "probe_every")
        for name in counts:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more; got {getattr(self, name)}")
        if self.lr <= 0:
            raise ValueError(f"lr must be positive; got {self.lr}")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ValueError(f"precision must be auto, fp32, bf16 or fp16; got {self.precision}")
        if self.parallel not in ("ddp", "fsdp"):
            raise ValueError(f"parallel must be ddp or fsdp; got {self.parallel}")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction must be between 0 and 1; got {self.val_fraction}")


_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _check_type(name: str, value: Any, default: Any) -> None:
    """A saved setting must have its field's type (a float field takes a whole number too)."""
    kind = type(default)
    ok = (isinstance(value, bool) if kind is bool else
          isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else
          isinstance(value, kind) and not isinstance(value, bool))
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise ValueError(f"{name} must be {_TYPE_WORDS[kind]}; got {shown}")
