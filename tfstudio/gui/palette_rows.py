"""The block palette's rows (no Qt): the families in the catalogue's story order, each under
its plural title, a block's tooltip, and which rows a query leaves shown (a family with no
match hidden whole). palette.py builds the tree and hides what this says."""
from __future__ import annotations

from typing import Iterable, Mapping

FAMILY_TITLES = {
    "input": "Inputs",
    "embedding": "Embeddings",
    "position": "Positions",
    "attention": "Attention",
    "feedforward": "Feed-forward",
    "norm": "Normalisation",
    "residual": "Residual",
    "output": "Output heads",
    "structure": "Structure",
    "recurrent": "Recurrent",
}

# the families in the order a model is read: input to output
FAMILY_ORDER = ("input", "embedding", "position", "attention", "feedforward", "norm",
                "residual", "recurrent", "structure", "output")


def family_order(present: Iterable[str]) -> list[str]:
    """The families present, in the story order (inputs to output heads); any family the order
    does not know comes after them, alphabetically."""
    present = set(present)
    return [f for f in FAMILY_ORDER if f in present] + sorted(present - set(FAMILY_ORDER))


def family_title(family: str) -> str:
    return FAMILY_TITLES.get(family, family.title())


def block_tooltip(title: str, description: str) -> str:
    return (f"<qt><b>{title}</b><br>{description}"
            "<br><i>Drag onto the canvas, or double-click.</i></qt>")


def shown_rows(matches: Iterable[str],
               by_family: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The families left shown for a query's matching block types, each with its matching
    types in catalogue order; a family with no match is left out (its header hidden)."""
    matches = set(matches)
    rows = {family: [t for t in types if t in matches] for family, types in by_family.items()}
    return {family: types for family, types in rows.items() if types}
