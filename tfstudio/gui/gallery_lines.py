"""What the presets gallery ("New from preset") lists and says (no Qt): the presets, tiny ones
first (the ones to start learning with), and a preset's facts. gui/dialogs.py shows these."""
from __future__ import annotations

from typing import Iterable

from ..graph import Graph
from .param_count import short_count


def gallery_order(names: Iterable[str]) -> list[str]:
    """The presets as the gallery lists them: the tiny ones first, each part by name."""
    return sorted(names, key=lambda n: (not n.startswith("tiny"), n))


def preset_facts(graph: Graph, report) -> list[str]:
    """A preset's facts: its parameter count as ``report`` (its GraphReport) has it ("unavailable"
    and why while it has errors, as the status bar says), its family and its context length (a
    "?" for one the file does not give)."""
    facts = [f"Family: {graph.meta.get('family', '?')}",
             f"Context length: {graph.meta.get('context_length', '?')}"]
    count = short_count(report)
    if count:
        facts.insert(0, f"Parameters: {count}")
    return facts
