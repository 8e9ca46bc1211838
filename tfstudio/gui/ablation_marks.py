"""Which blocks of the level shown Explain's switches mark as off, and the words on them (no
Qt). A switch names a block of the model as trained ("layers.0.attn", a group's copies being
"group.N."), or some of its heads or experts ("layers.1.attn:head=0"): a block shows its own
switches, and an open group those of each block inside it, from every copy. A switch without
":head=" / ":expert=" turns the whole block off ("off"); the others only part ("part off").
gui/scene.py hands each block its marks; node_item.py and block_drawing.py draw them."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True)
class Marks:
    """A block's switches (``own``) and, for an open group, those of each block inside."""

    own: list[str] = field(default_factory=list)
    inner: dict[str, list[str]] = field(default_factory=dict)


def marks_at(switched_off: Iterable[str], path: tuple[str, ...]) -> dict[str, Marks]:
    """The marks of each block of the level ``path`` that a switch names (by block id)."""
    prefix = "".join(rf"{re.escape(group)}\.\d+\." for group in path)
    own = re.compile(prefix + r"([^.:]+)(?::.*)?$")
    inside = re.compile(prefix + r"([^.:]+)\.\d+\.([^.:]+)(?::.*)?$")
    marks: dict[str, Marks] = {}
    for name in switched_off:
        if m := own.match(name):
            marks.setdefault(m[1], Marks()).own.append(name)
        elif m := inside.match(name):
            marks.setdefault(m[1], Marks()).inner.setdefault(m[2], []).append(name)
    return marks


def whole(switched_off: Iterable[str]) -> bool:
    """Whether the switches turn the whole block off (one names no head or expert)."""
    return any(":" not in name for name in switched_off)


def badge_text(switched_off: Iterable[str]) -> str:
    """The pill on a switched-off block's top edge."""
    return "off" if whole(switched_off) else "part off"


def ablated_tip(switched_off: list[str]) -> str:
    """The paragraph a switched-off block's tooltip ends with: the switches, and how to
    switch it back on."""
    return ("<p style='color:#c98210'><b>Switched off in Explain (ablated):</b> "
            f"{html.escape(', '.join(switched_off))}. Right-click the block, <i>Switch off in "
            "Explain</i>, to switch it back on (or untick it in Explain's Ablation tab).</p>")
