"""Tokens and probabilities as the training views write them, without Qt: whitespace made
visible (:func:`display_token`) and a probability that never reads as a flat zero
(:func:`probability`)."""
from __future__ import annotations

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


def display_token(text: str) -> str:
    """A token as a label: whitespace made visible, nothing invisible left."""
    if text == "":
        return "∅"
    return "".join(_VISIBLE.get(ch, ch if ch.isprintable() else f"\\x{ord(ch):02x}")
                   for ch in text)


def probability(p: float) -> str:
    """0.412, or 3.1e-05 where three decimals would read as a flat 0.000."""
    return f"{p:.3f}" if p >= 1e-3 or p == 0 else f"{p:.1e}"
