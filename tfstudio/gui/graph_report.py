"""Everything the editor shows about a graph besides the graph itself, computed in one pass.

Diagnostics, shapes on every wire and the cost report come from the graph layer; this module
only runs them together and keeps one failing check from hiding the others (no Qt, no torch).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..graph import Graph
from ..graph.cost import estimate_cost
from ..graph.shapes import ShapeMap, infer_shapes
from ..graph.validate import validate


@dataclass
class GraphReport:
    diagnostics: list = field(default_factory=list)
    shapes: ShapeMap = field(default_factory=ShapeMap)
    cost: Any = None              # graph.cost.CostReport, or None when it could not be made
    failures: list[str] = field(default_factory=list)  # analyses that raised, with the reason

    def diagnostics_at(self, path: tuple[str, ...]) -> list:
        """Diagnostics of nodes in the graph at ``path`` (not inside its groups)."""
        return [d for d in self.diagnostics if tuple(d.path or ()) == tuple(path)]

    def diagnostics_below(self, path: tuple[str, ...], group_id: str) -> list:
        """Diagnostics anywhere inside group ``group_id`` of the graph at ``path``."""
        prefix = tuple(path) + (group_id,)
        return [d for d in self.diagnostics if tuple(d.path or ())[:len(prefix)] == prefix]

    def node_params(self, path: tuple[str, ...], node_id: str) -> int | None:
        if self.cost is None:
            return None
        return self.cost.node_params.get((tuple(path), node_id))

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity != "error")


def context_length(graph: Graph) -> int | None:
    value = graph.meta.get("context_length")
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def report_on_graph(graph: Graph) -> GraphReport:
    result = GraphReport()
    try:  # the validator reads the graph's own context length (and flags a bad one)
        result.diagnostics = list(validate(graph))
    except Exception as exc:  # a validator bug must not blank the canvas; say it instead
        result.failures.append(f"validation failed: {exc}")
    try:
        result.cost = estimate_cost(graph)
        result.shapes = result.cost.shapes
    except Exception as exc:
        result.failures.append(f"cost model failed: {exc}")
        try:
            result.shapes = infer_shapes(graph)
        except Exception as exc2:
            result.failures.append(f"shape inference failed: {exc2}")
    return result
