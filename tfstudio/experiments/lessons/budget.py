"""``--budget 4x``: a multiple of a lesson's own steps (and of its lr sweep's)."""
from __future__ import annotations


def parse_budget(text: str) -> float:
    """"4x", "4" or "0.5x" -> 4.0 / 4.0 / 0.5; ValueError naming the form otherwise."""
    raw = str(text).strip().lower().removesuffix("x")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"--budget takes a multiple of the lesson's steps such as 4x; got "
                         f"'{text}'") from None
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(f"--budget must be a multiple above 0 such as 4x; got '{text}'")
    return value
