"""The one exception the compiler raises for a graph it cannot turn into a model."""
from __future__ import annotations


class CompileError(ValueError):
    """A graph that cannot be compiled; the message names the node, the problem and the fix."""


def where(node_id: str, path: tuple[str, ...] = ()) -> str:
    """'node 'attn' in group 'layers'': how messages point at a node."""
    inside = "".join(f" in group '{g}'" for g in reversed(path))
    return f"node '{node_id}'{inside}"
