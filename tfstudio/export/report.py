"""What an export or import did, and what it left behind, as plain data and printable lines."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Report:
    action: str                          # "export hf", "export pytorch", "import-hf", ...
    out_dir: Path
    family: str | None = None            # the Hugging Face architecture, when there is one
    files: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)          # what went along
    left_out: list[str] = field(default_factory=list)      # what did not, and why
    approximations: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = f"{self.action}: {self.out_dir}" + (f" ({self.family})" if self.family else "")
        out = [head]
        out += [f"  wrote {name}" for name in self.files]
        out += [f"  + {item}" for item in self.done]
        out += [f"  - not carried: {item}" for item in self.left_out]
        out += [f"  ~ approximate: {item}" for item in self.approximations]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

