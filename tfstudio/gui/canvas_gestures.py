"""The canvas's mouse and pointer rules (no Qt): which press starts a pan, the cursor a pan
leaves, and where a block added by Tab or Paste lands when the pointer is off the canvas.
view.py turns Qt's events into these arguments and applies the answers."""
from __future__ import annotations


def starts_pan(middle: bool, left: bool, space_down: bool) -> bool:
    """The middle button pans; so does the left one while Space is held (a laptop has no
    middle button). A left press without Space selects and drags blocks."""
    return middle or (space_down and left)


def cursor_after_pan(space_down: bool) -> str:
    """An open hand while Space is still held (another drag pans again), else the arrow."""
    return "open_hand" if space_down else "arrow"


def landing_point(pointer: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The canvas pixel a block added from the keyboard goes to: under the pointer when it is
    on the canvas (``size`` pixels, from 0), else the canvas's centre pixel (Qt's QRect
    centre: (width - 1) // 2, (height - 1) // 2)."""
    (x, y), (width, height) = pointer, size
    if 0 <= x < width and 0 <= y < height:
        return x, y
    return (width - 1) // 2, (height - 1) // 2
