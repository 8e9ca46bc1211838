"""What the generated-code window says above the code (no Qt): that it is compiling, how many
lines the compiler made, or, for a graph that does not compile, where to look.
gui/dialogs.py's CodeDialog shows it."""
from __future__ import annotations

COMPILING = "Compiling in the background (the first time imports torch)…"
REFUSED = ("This graph does not compile yet; fix the problems listed in the problems panel.")


def code_status(source: str, error: str) -> tuple[str, str]:
    """The line over the code and its role ("error" for a graph that does not compile, else
    "muted")."""
    if error:
        return REFUSED, "error"
    return (f"{source.count(chr(10)) + 1} lines, generated from the graph. Select it all and "
            "copy (Ctrl+A, Ctrl+C) to use it elsewhere."), "muted"
