"""Which problem mark a block shows (no Qt): its worst problem ("error" over "warning"), and,
in an open group's frame, the worst problem of each small block inside, a problem deeper down
counting for the group block that holds it. gui/scene.py hands these to node_item.py, which
draws the red or amber outline and badge."""
from __future__ import annotations


def worst(diagnostics) -> str | None:
    """"error", "warning" or None: the worst of ``diagnostics``."""
    if any(d.severity == "error" for d in diagnostics):
        return "error"
    return "warning" if diagnostics else None


def worst_by_inner_block(diagnostics, prefix: tuple[str, ...]) -> dict[str, str]:
    """The worst severity per block of a group's inside (``prefix``: the inside's path): a
    problem deeper down counts for the group block that holds it."""
    marks: dict[str, str] = {}
    for d in diagnostics:
        path = tuple(d.path or ())
        if path == prefix:
            key = d.node_id
        else:
            key = path[len(prefix)] if len(path) > len(prefix) else None
        if key and marks.get(key) != "error":
            marks[key] = "error" if d.severity == "error" else "warning"
    return marks
