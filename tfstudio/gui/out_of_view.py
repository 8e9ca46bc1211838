"""What the canvas shows of a level too big for it, decided without Qt: the part it shows
first (the main layer), and the open layer groups it points at from its edges (a group
mostly out of view gets a pill on the edge towards it, naming it with its copies).
gui/view.py and gui/edge_markers.py measure the view, place the picture and the pills."""
from __future__ import annotations

from .text import with_copies

Rect = tuple[float, float, float, float]  # x, y, width, height (scene units)

# an open layer group with less than this share of its area in view gets a pill at the edge
# (a quarter out of view hides whole blocks: t5-small's decoder at 71% on a 1366x768 laptop)
MARKED_BELOW = 0.75
ARROWS = {"below": "▼", "above": "▲", "right": "▶", "left": "◀"}


def _centre(r: Rect) -> tuple[float, float]:
    return r[0] + r[2] / 2, r[1] + r[3] / 2  # as QRectF.center()


def side_out_of_view(rect: Rect, visible: Rect) -> str | None:
    """The edge of ``visible`` towards ``rect`` when less than MARKED_BELOW of it is in view
    (None: it is in view): the side its centre lies beyond, measured in view widths and
    heights (a wide layer cut at the right but hanging below reads "below")."""
    x, y, w, h = rect
    vx, vy, vw, vh = visible
    shown_w = max(0.0, min(x + w, vx + vw) - max(x, vx))
    shown_h = max(0.0, min(y + h, vy + vh) - max(y, vy))
    area = w * h
    if area <= 0 or shown_w * shown_h >= MARKED_BELOW * area:
        return None
    (cx, cy), (vcx, vcy) = _centre(rect), _centre(visible)
    dx = (cx - vcx) / max(vw, 1.0)
    dy = (cy - vcy) / max(vh, 1.0)
    if abs(dy) >= abs(dx):
        return "below" if dy > 0 else "above"
    return "right" if dx > 0 else "left"


def pill_text(label: str, repeat: int, side: str) -> str:
    """The pill's words: an arrow to the side, the group's name with its copies."""
    return f"{ARROWS[side]} {with_copies(label, repeat)}"


def pill_tip(label: str, repeat: int) -> str:
    return (f"{with_copies(label, repeat)} is out of view: click to show it (or drag with the "
            "middle button, or Space + drag, to pan)")


def focus_rect(frames: list[tuple[tuple[float, float], Rect]], everything: Rect,
               visible: Rect) -> Rect:
    """What to show first when not everything fits: of the open groups (each its position
    and drawn rectangle), the first along the stream (the topmost, then leftmost: tiny-t5's
    decoder starts left of its encoder), its left edge in view when it is wider than the
    view; else the start of the graph."""
    if frames:
        focus = min(frames, key=lambda frame: (frame[0][1], frame[0][0]))[1]
    else:
        focus = (everything[0], everything[1], visible[2], visible[3])
    if focus[2] > visible[2] - 20:
        focus = (focus[0] - 10, focus[1], visible[2], focus[3])
    return focus
