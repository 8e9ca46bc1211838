"""How a block is drawn at a zoom, decided without Qt: at a low level of detail its words are
noise and are left out; zoomed out, a title takes its family icon's room and a summary becomes
one enlarged line (its count left for the tooltip); a problem badge stays readable however far
the view zooms out; an open frame is a shade off the canvas. node_paint.py, block_drawing.py,
wire_item.py and the telemetry band draw what this says."""
from __future__ import annotations

WORDS_FROM_LOD = 0.3  # at or below this level of detail even enlarged text is noise
ICON_ROOM = 20.0      # left of a title: the family icon, or a group's chevron


def shows_words(lod: float) -> bool:
    """Whether a block's (or a wire's) words are drawn at level of detail ``lod``."""
    return lod > WORDS_FROM_LOD


def title_icon_room(boost: float, is_group: bool) -> float:
    """The room left of a block's title: a group's chevron always; a block's family icon
    unless zoomed out so far (text boost over 1.1) that the title needs the room more."""
    return ICON_ROOM if is_group or boost <= 1.1 else 0.0


def summary_on_one_line(boost: float) -> bool:
    """Zoomed out (text boost over 1.2), a block's summary is one enlarged line, elided, its
    count left for the tooltip; else it wraps, with the count under it."""
    return boost > 1.2


def badge_size(lod: float, own: bool) -> float:
    """A problem badge's size in canvas units: 20, grown as the view zooms out so that it stays
    about 18 screen pixels (never past 90); four fifths of that for a problem only inside a
    group (``own`` False)."""
    size = max(20.0, 18.0 / max(lod, 1e-3)) if lod < 1 else 20.0
    size = min(size, 90.0)
    return size if own else size * 0.8


def frame_lighter(canvas_lightness: int) -> int:
    """How much lighter than the canvas an open frame is filled (QColor.lighter's percent): a
    shade on a light canvas (lightness over 128), more on a dark one."""
    return 103 if canvas_lightness > 128 else 135


def frame_summary(summary: str, count: str) -> str:
    """An open frame's line under its header: the layer's summary, then its count if any."""
    return summary + (f"  ·  {count}" if count else "")
