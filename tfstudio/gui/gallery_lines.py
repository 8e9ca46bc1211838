"""What the presets gallery ("New from preset") lists and says (no Qt): the presets, tiny ones
first (the ones to start learning with), and a preset's facts. gui/dialogs.py shows these."""
from __future__ import annotations

from typing import Iterable

from ..graph import Graph
from .text import count_label


def gallery_order(names: Iterable[str]) -> list[str]:
    """The presets as the gallery lists them: the tiny ones first, each part by name."""
    return sorted(names, key=lambda n: (not n.startswith("tiny"), n))


def preset_facts(graph: Graph, cost) -> list[str]:
    """A preset's facts: its parameter count (when ``cost``, its cost report, is known), its
    family and its context length (a "?" for one the file does not give)."""
    facts = [f"Family: {graph.meta.get('family', '?')}",
             f"Context length: {graph.meta.get('context_length', '?')}"]
    if cost is not None:
        facts.insert(0, f"Parameters: {count_label(cost.total_params)}")
    return facts
