"""Where the Train workspace's strip puts things, without Qt, from sizes as numbers: how tall the
strip is (:func:`views_height`: the views take the rest), the telemetry legend's box beside the
canvas (and the margin the canvas leaves it), and the zoom that fits the strip's blocks.
strip.py and workspace.py measure the text, the view and the window, and place them."""
from __future__ import annotations

from dataclasses import dataclass

BAR_W, BAR_H = 120, 10  # the legend's colour bar, pixels
GAP = 4          # pixels between the canvas, the legend and the view's edge
MAX_SHARE = 3    # the legend takes at most a third of the view's width; longer lines elide
STRIP_MARGIN = 10.0  # scene units kept around the fitted blocks
STRIP_HEIGHT = 98      # the canvas strip in Train mode (at least; STRIP_SHARE of a tall window)
# of the window's height: more would cost the six curves their room on a 1366x768 screen
STRIP_SHARE = 14
MIN_VIEWS_HEIGHT = 300


def views_height(window_height: int, chrome: int) -> int:
    """The training views' height in a window ``window_height`` tall whose menus, tool bars
    and status bar take ``chrome``: all but the strip, STRIP_HEIGHT or STRIP_SHARE percent of
    the window, whichever is more; never under MIN_VIEWS_HEIGHT."""
    strip = max(STRIP_HEIGHT, window_height * STRIP_SHARE // 100)
    return max(MIN_VIEWS_HEIGHT, window_height - chrome - strip)


@dataclass(frozen=True)
class LegendBox:
    kept: int                            # the width it keeps for the next look
    margin: int                          # pixels the canvas leaves at its right
    rect: tuple[int, int, int, int] | None  # (x, y, width, height) in the view; None: hidden


def legend_box(line_widths: list[float], line_spacing: float, kept: int,
               view: tuple[int, int], frame: int) -> LegendBox:
    """The legend of lines ``line_widths`` wide, in a ``view`` (width, height) with a
    ``frame``: at the top right, as wide as its widest line (never narrower than it was,
    ``kept``: each change of width resized the canvas, which refitted and repainted every
    block) but at most a third of the view; no lines: hidden, its margin given back."""
    if not line_widths:
        return LegendBox(0, 0, None)
    kept = max(kept, int(max([BAR_W, *line_widths]) + 24))
    width = min(kept, max(BAR_W + 16, view[0] // MAX_SHARE))
    height = int(BAR_H + 8 + line_spacing * len(line_widths) + 8)
    return LegendBox(kept, width + 2 * GAP,
                     (view[0] - frame - GAP - width, frame + GAP, width,
                      min(height, view[1] - 2 * (frame + GAP))))


def strip_zoom(focus: tuple[float, float], port: tuple[float, float]) -> float:
    """The zoom at which the ``focus`` (width, height, scene units), with STRIP_MARGIN around
    it, is whole in the ``port`` (pixels): never past 100%."""
    return min(1.0, port[0] / (focus[0] + 2 * STRIP_MARGIN),
               port[1] / (focus[1] + 2 * STRIP_MARGIN))


def topmost(positions: list[tuple[float, float]]) -> int | None:
    """Which of the open frames at ``positions`` (x, y) is the main layer the strip shows: the
    topmost, then the leftmost (None: no open frame)."""
    if not positions:
        return None
    return min(range(len(positions)), key=lambda i: (positions[i][1], positions[i][0]))


def title_cut(frame_top: float, shown_top: float, blocks_top: float) -> bool:
    """Whether the view's top edge (``shown_top``) cuts the open frame's title lines, which
    run from ``frame_top`` to its blocks (``blocks_top``): then the blocks go to the top and
    the title out of view, whole or not at all."""
    return frame_top < shown_top < blocks_top
