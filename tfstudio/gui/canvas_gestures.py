"""The canvas's mouse, key and pointer rules (no Qt): which press starts a pan, what Space and
Escape do, the cursor a pan leaves, where a block added by Tab or Paste lands when the
pointer is off the canvas, and where a block chosen in the search goes.
view.py turns Qt's events into these arguments and applies the answers."""
from __future__ import annotations


def starts_pan(middle: bool, left: bool, space_down: bool) -> bool:
    """The middle button pans; so does the left one while Space is held (a laptop has no
    middle button). A left press without Space selects and drags blocks."""
    return middle or (space_down and left)


def key_action(key: str, pressed: bool, auto_repeat: bool, dragging_wire: bool) -> str | None:
    """What a key does on the canvas (``key``: "space", "escape", or any other name): Space
    pressed readies a pan ("space_down", the open hand) and let go ends it ("space_up", the
    arrow), its auto-repeats ignored; Escape pressed while a wire is drawn lets go of it
    ("cancel_wire"). None leaves the key to the view as Qt has it."""
    if key == "space" and not auto_repeat:
        return "space_down" if pressed else "space_up"
    if key == "escape" and pressed and dragging_wire:
        return "cancel_wire"
    return None


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


def chosen_goes(wire, opened_at, pointer) -> tuple[str, object]:
    """Where a block chosen in the search goes: onto the wire let go in empty space that
    opened the search, when one did ("wire", that wire); else where the search was opened
    (Tab, a double-click), else under the pointer ("at", the point)."""
    if wire is not None:
        return "wire", wire
    return "at", opened_at if opened_at is not None else pointer
