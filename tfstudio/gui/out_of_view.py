"""What the canvas shows of a level too big for it, decided without Qt: the part it shows
first (the main layer), and the open layer groups it points at from its edges (a group
mostly out of view gets a pill on the edge towards it, naming it with its copies).
gui/view.py and gui/edge_markers.py measure the view, place the picture and the pills."""
from __future__ import annotations

from ..graph.layout import rects_meet
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


PILL_MARGIN = 8   # a pill's distance from the canvas's edge and from the pill before it
PILL_STEP = 16    # how far a pill slides along its edge at a time, off a block's title


def pill_spot(side: str, size: tuple[int, int], view: tuple[int, int], offset: float,
              titles: list[Rect]) -> tuple[int, int, float]:
    """Where a pill of ``size`` goes in a canvas of ``view`` pixels, and the offset of the next
    pill on that edge: along its edge after the pills already there (``offset``; from the
    middle of a horizontal edge, from the top of a vertical one), slid along the edge off any
    block's title (``titles``, in canvas pixels) when a free stretch of the edge has room."""
    (w, h), (width, height) = size, view
    if side in ("below", "above"):
        x = (width - 1) // 2 - w / 2 + offset
        y = height - 1 - h - PILL_MARGIN if side == "below" else PILL_MARGIN
        steps = [(dx, 0) for k in range(0, width, PILL_STEP) for dx in (k, -k)]
        after = offset + w + PILL_MARGIN
    else:
        x = width - 1 - w - PILL_MARGIN if side == "right" else PILL_MARGIN
        y = PILL_MARGIN + 30 + offset
        steps = [(0, dy) for k in range(0, height, PILL_STEP) for dy in (k, -k)]
        after = offset + h + PILL_MARGIN
    for dx, dy in steps:
        spot = (x + dx, y + dy, w, h)
        if _inside(spot, width, height) and not any(rects_meet(spot, t) for t in titles):
            x, y = x + dx, y + dy
            break
    return int(x), int(y), after


def _round(v: float) -> int:
    """Qt's qRound: halves away from zero."""
    return int(v + 0.5) if v >= 0 else int(v - 0.5)


def _inside(spot: Rect, width: int, height: int) -> bool:
    """Whether ``spot``, on whole pixels as Qt rounds it, lies within the canvas."""
    x, y, w, h = spot
    nx, ny = _round(x), _round(y)
    nw, nh = _round(w + (x - nx) / 2), _round(h + (y - ny) / 2)
    return nx >= 0 and ny >= 0 and nx + nw <= width and ny + nh <= height
