"""The canvas's zoom rules (no Qt): how far it zooms, what a wheel notch does, what fit-to-view
settles on and centres, how much height the fitted picture can spare, and what part of a block
"show it" brings into view. gui/view.py applies them to its transform; rectangles are
(x, y, w, h) tuples in scene units."""
from __future__ import annotations

import math

Rect = tuple[float, float, float, float]

MIN_ZOOM, MAX_ZOOM = 0.08, 3.0
# fit-to-view stops here: below it titles and wire shapes are no longer legible, so a graph
# that does not fit is shown from its main layer and the rest is a pan away
LEGIBLE_ZOOM = 0.7
STEP = 1.15          # one wheel notch or one Zoom In
NOTCH = 120.0        # a wheel notch in Qt's angle units (a trackpad sends parts of one)


def clamped(factor: float) -> float:
    """A zoom the canvas can show: between MIN_ZOOM and MAX_ZOOM."""
    return max(MIN_ZOOM, min(MAX_ZOOM, factor))


def stepped(zoom: float, steps: float) -> float:
    """The zoom ``steps`` notches (or Zoom In presses; negative: out) from ``zoom``."""
    return clamped(zoom * STEP ** steps)


def wheel_steps(angle_y: float) -> float:
    """How many notches a wheel turn of ``angle_y`` is."""
    return angle_y / NOTCH


def text_boost(lod: float) -> float:
    """How much to enlarge text when zoomed out (``lod``: the zoom it is drawn at), so a fitted
    overview stays readable (semantic zoom, as map applications do): 1 at 80% zoom and above,
    at most 1.5."""
    return min(1.5, max(1.0, 0.8 / max(lod, 1e-3)))


SMALL_TEXT = 10  # a wire's shape label and a block's band, in scene pixels at 80% zoom and up


def small_text_pixels(lod: float) -> float:
    """The canvas's small text (wire labels, blocks' bands) in scene pixels at zoom ``lod``:
    SMALL_TEXT, enlarged when zoomed out (text_boost)."""
    return SMALL_TEXT * text_boost(lod)


MIN_LABEL_PIXELS = 7.5  # a wire's shape label on screen: smaller than this nobody reads it


def wire_label_pixels(lod: float, room: float, width: float) -> float:
    """A wire label's size in scene pixels at zoom ``lod``: small_text_pixels, shrunk to fit
    the ``room`` between the two blocks (``width``: the label's width at that size) but never
    below MIN_LABEL_PIXELS on screen, so a short wire keeps its shape too."""
    pixels = small_text_pixels(lod)
    if width > room - 14:
        pixels *= max(room - 14, 1.0) / width
    # (fonts come in whole pixels: the floor rounds up, or 10.4 px at 72% drew 7.2 on screen)
    return max(pixels, math.ceil(MIN_LABEL_PIXELS / max(lod, 1e-3)))


def fit_zoom(fitted: float) -> float:
    """Fit-to-view's zoom for the zoom that shows everything (``fitted``): never magnified past
    100%, never shrunk below LEGIBLE_ZOOM."""
    return min(1.0, max(LEGIBLE_ZOOM, fitted))


def fit_centre(tight: Rect, shown: Rect, focus: Rect) -> tuple[float, float]:
    """Where a fit at the legible zoom centres: the whole picture (``tight``, without margins)
    when the view (``shown``) holds it, else ``focus`` (the main layer: out_of_view.focus_rect)."""
    fits = shown[2] >= tight[2] and shown[3] >= tight[3]
    x, y, w, h = tight if fits else focus
    return x + w / 2, y + h / 2


def spare_height(drawn_height: float, viewport_height: float) -> int:
    """Pixels of height the canvas can give up and still show ``drawn_height`` of picture at the
    legible zoom (what a panel opening below it may take); a few are kept for the fit's
    rounding."""
    return max(0, int(viewport_height - (drawn_height * LEGIBLE_ZOOM + 4)))


def shown_part(block: Rect, visible: Rect) -> Rect:
    """The part of ``block`` "show it" centres: the whole block with a little room when it fits
    the ``visible`` area, else as much as fits from its top-left corner (a layer's stream starts
    there)."""
    x, y, w, h = block
    return x - 10, y - 10, min(w + 20, visible[2]), min(h + 20, visible[3])
