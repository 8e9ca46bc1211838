"""What goes wrong when a model crosses into or out of tfstudio, said so a person can act on it."""
from __future__ import annotations

from dataclasses import dataclass


class InteropError(ValueError):
    """An export or import that cannot be done; the message names the problem and the fix."""


@dataclass(frozen=True)
class Problem:
    """One reason a graph does not map: the node (and the groups it sits in), why, and a fix."""

    node_id: str
    path: tuple[str, ...]
    message: str
    fix: str = ""

    @property
    def where(self) -> str:
        return " > ".join((*self.path, self.node_id)) if self.node_id else "graph"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" + (f" (fix: {self.fix})" if self.fix else "")


class ExportRefused(InteropError):
    """The graph does not map losslessly onto a stock architecture; ``problems`` say where."""

    def __init__(self, target: str, problems: list[Problem]):
        self.target = target
        self.problems = _unique(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"this graph cannot be exported as {target}:\n{lines}")

    @property
    def node_ids(self) -> list[str]:
        return [p.node_id for p in self.problems if p.node_id]


def _unique(problems: list[Problem]) -> list[Problem]:
    """Drop repeats (the same node refused once per copy of a repeated group), keeping order."""
    return list(dict.fromkeys(problems))
