"""A block's title in the room its header gives it, measured with the real bold font: shrunk a
little to fit one line, else wrapped onto two lines at the smallest size rather than cut
("Mixture of expe…"). The rules are gui/title_lines.py's."""
from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from .title_lines import fitting_pixels, one_spaced, title_lines


@lru_cache(maxsize=64)
def bold_font(pixels: int) -> QFont:
    font = QFont()
    font.setPixelSize(max(1, pixels))
    font.setBold(True)
    return font


def _advance_at(pixels: int):
    return QFontMetricsF(bold_font(pixels)).horizontalAdvance


def title_font_fitting(text: str, pixels: float, width: float, floor: float) -> QFont:
    """A bold title font of ``pixels``, shrunk (not below ``floor``) so that ``text`` fits
    ``width``: a long title shrinks a little before it wraps."""
    return bold_font(fitting_pixels(text, pixels, width, floor, _advance_at))


def fitted_title(text: str, pixels: float, width: float, floor: float) -> tuple[QFont, list[str]]:
    """The font and the lines to draw ``text`` in ``width`` (title_lines.title_lines)."""
    text = one_spaced(text)
    font = title_font_fitting(text, pixels, width, floor)
    metrics = QFontMetricsF(font)
    return font, title_lines(text, width, metrics.horizontalAdvance,
                             lambda line: metrics.elidedText(line, Qt.ElideRight, width))
