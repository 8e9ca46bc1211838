"""How a block's title fits its header (no Qt): the size it shrinks to (a little, before it
wraps), and its lines: one when it fits, else two split between words (inside a word only when
one word alone is too wide), the second elided only when even two lines cannot hold it.
gui/title_fit.py measures with the real font; these rules take the measure as a function."""
from __future__ import annotations

import math
from typing import Callable

Advance = Callable[[str], float]  # how wide a text is drawn


def one_spaced(text) -> str:
    """Line breaks and runs of spaces in a title read as one space."""
    return " ".join(str(text).split())


def fitting_pixels(text: str, pixels: float, width: float, floor: float,
                   advance_at: Callable[[int], Advance]) -> int:
    """The bold size (whole pixels) of ``text``: ``pixels``, shrunk (not below ``floor``) until
    it fits ``width``; ``advance_at(px)`` measures at ``px`` pixels."""
    wide = advance_at(round(pixels))(text)
    if wide > width:
        # whole pixels, rounded down: rounded to nearest, 10.9 became 11 and "Mixture of
        # experts" (114.8 wide at 11) was cut in a 114-wide small block
        pixels = max(floor, math.floor(pixels * width / wide))
        while pixels > floor and advance_at(round(pixels))(text) > width:
            pixels -= 1
    return round(pixels)


def title_lines(text: str, width: float, advance: Advance,
                elide: Callable[[str], str]) -> list[str]:
    """The lines to draw ``text`` (one-spaced) in ``width``; ``elide`` shortens a line that
    still does not fit, ending it with "…"."""
    if advance(text) <= width:
        return [text]
    first, rest = first_line(text, advance, width)
    if advance(rest) > width:
        rest = elide(rest)
    return [first, rest]


def first_line(text: str, advance: Advance, width: float) -> tuple[str, str]:
    """The longest start of ``text`` that fits ``width`` ending at a space (else at any
    character), and what is left."""
    words = text.split(" ")
    best = 0
    for k in range(1, len(words)):
        if advance(" ".join(words[:k])) > width:
            break
        best = k
    if best:
        return " ".join(words[:best]), " ".join(words[best:])
    cut = 1
    while cut < len(text) and advance(text[:cut + 1]) <= width:
        cut += 1
    return text[:cut], text[cut:].lstrip()
