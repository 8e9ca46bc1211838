"""A block's title in the room its header gives it: shrunk a little to fit one line, else
wrapped onto two lines at the smallest size rather than cut ("Mixture of expe…")."""
from __future__ import annotations

import math
from functools import lru_cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF


@lru_cache(maxsize=64)
def bold_font(pixels: int) -> QFont:
    font = QFont()
    font.setPixelSize(max(1, pixels))
    font.setBold(True)
    return font


def title_font_fitting(text: str, pixels: float, width: float, floor: float) -> QFont:
    """A bold title font of ``pixels``, shrunk (not below ``floor``) so that ``text`` fits
    ``width``: a long title shrinks a little before it wraps."""
    wide = QFontMetricsF(bold_font(round(pixels))).horizontalAdvance(text)
    if wide > width:
        # whole pixels, rounded down: rounded to nearest, 10.9 became 11 and "Mixture of
        # experts" (114.8 wide at 11) was cut in a 114-wide small block
        pixels = max(floor, math.floor(pixels * width / wide))
        while (pixels > floor and QFontMetricsF(bold_font(round(pixels)))
               .horizontalAdvance(text) > width):
            pixels -= 1
    return bold_font(round(pixels))


def fitted_title(text: str, pixels: float, width: float, floor: float) -> tuple[QFont, list[str]]:
    """The font and the lines to draw ``text`` in ``width``: one line when it fits at
    ``floor`` or more, else two lines at ``floor`` split between words (inside a word only
    when one word alone is too wide), the second elided at its end only when even two lines
    cannot hold it. Line breaks and runs of spaces in ``text`` read as one space."""
    text = " ".join(str(text).split())
    font = title_font_fitting(text, pixels, width, floor)
    metrics = QFontMetricsF(font)
    if metrics.horizontalAdvance(text) <= width:
        return font, [text]
    first, rest = _first_line(text, metrics, width)
    if metrics.horizontalAdvance(rest) > width:
        rest = metrics.elidedText(rest, Qt.ElideRight, width)
    return font, [first, rest]


def _first_line(text: str, metrics: QFontMetricsF, width: float) -> tuple[str, str]:
    """The longest start of ``text`` that fits ``width`` ending at a space (else at any
    character), and what is left."""
    words = text.split(" ")
    best = 0
    for k in range(1, len(words)):
        if metrics.horizontalAdvance(" ".join(words[:k])) > width:
            break
        best = k
    if best:
        return " ".join(words[:best]), " ".join(words[best:])
    cut = 1
    while cut < len(text) and metrics.horizontalAdvance(text[:cut + 1]) <= width:
        cut += 1
    return text[:cut], text[cut:].lstrip()
