"""Which ink reads on a coloured strip or block (no Qt): dark on light colours, white on dark,
by the colour's luma. block_drawing gives it a QColor's channels."""
from __future__ import annotations

DARK_INK = "#1d2230"
LIGHT_INK = "white"
LIGHT_FROM = 0.62  # a luma above this reads as a light colour


def readable_ink(red: float, green: float, blue: float) -> str:
    """DARK_INK or LIGHT_INK, whichever reads better on the colour (channels 0..1)."""
    luma = 0.299 * red + 0.587 * green + 0.114 * blue
    return DARK_INK if luma > LIGHT_FROM else LIGHT_INK
