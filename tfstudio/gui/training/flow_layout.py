"""The Explain walk's flow as plain data, without Qt: the stages grouped into stretches of the
residual stream and boxes per block (:func:`flow_columns`), where each box, square and stretch
is drawn (:func:`flow_geometry`), and which stages are one stage in every copy of a layer
(:func:`across_layers`, :func:`same_copy`). explain_flow.py paints it; explain_walk.py walks
it."""
from __future__ import annotations

from dataclasses import dataclass, field

CELL = 11          # a stage's square
GAP = 3            # between squares
PER_LINE = 4       # squares per line in a block's box
COLUMN = PER_LINE * (CELL + GAP) + 14   # a box's width
TITLE = 14         # a box's title line
SPINE_Y = 22       # the spine's height from the top (the column titles sit above it)


@dataclass
class FlowBlock:
    name: str                  # "attn", or the block itself at the top level ("embed")
    kind: str
    stages: list[int] = field(default_factory=list)   # indices into the walk's stages


@dataclass
class FlowColumn:
    title: str                 # "embed", "layer 0", "sampling"
    section: str               # "layers.0", "embed", "" for sampling
    blocks: list[FlowBlock] = field(default_factory=list)


def section_of(block: str) -> tuple[str, str]:
    """(the stretch of the stream a step's block belongs to, the block's name inside it):
    "layers.0.attn" -> ("layers.0", "attn"); "layers.0" (the stream a layer hands on) ->
    ("layers.0", "stream"); "embed" -> ("embed", "embed"); "" (sampling) -> ("", "sampling")."""
    if not block:
        return "", "sampling"
    parts = block.split(".")
    copy = next((i for i, p in enumerate(parts) if p.isdigit()), None)
    if copy is None:
        return block, block
    section = ".".join(parts[:copy + 1])
    return section, ".".join(parts[copy + 1:]) or "stream"


def column_title(section: str) -> str:
    if not section:
        return "sampling"
    group, _, copy = section.rpartition(".")
    if copy.isdigit():
        return f"layer {copy}" if group == "layers" else f"{group} {copy}"
    return section


def flow_columns(summaries: list[dict]) -> list[FlowColumn]:
    """The stages grouped as drawn: consecutive stages of one stretch of the stream make a
    column, consecutive stages of one block a box in it. Top-level blocks in a row (embed,
    pos) share a column, so the stream's start and end stay narrow."""
    columns: list[FlowColumn] = []
    for index, summary in enumerate(summaries):
        section, name = section_of(summary.get("block", ""))
        kind = "sampling" if not section else summary.get("kind", "")
        top = section == name and section != ""
        last = columns[-1] if columns else None
        same = last is not None and (last.section == section or
                                     (top and last.section.startswith("top:")))
        if not same:
            last = FlowColumn(section if top else column_title(section),
                              f"top:{section}" if top else section)
            columns.append(last)
        elif top and last.title != section and section not in last.title.split(" · "):
            last.title += f" · {section}"
        if not last.blocks or last.blocks[-1].name != name:
            last.blocks.append(FlowBlock(name, kind))
        last.blocks[-1].stages.append(index)
    return columns


Rect = tuple[float, float, float, float]   # x, y, width, height


@dataclass
class FlowGeometry:
    boxes: list[tuple[Rect, FlowBlock]]       # a box per block
    spans: list[tuple[float, float, str]]     # each stretch: x from, x to, its title
    squares: list[tuple[Rect, int]]           # a square per stage, with its index
    size: tuple[int, int]                     # the whole picture's width and height


def flow_geometry(columns: list[FlowColumn]) -> FlowGeometry:
    """Where the flow draws each part: the columns left to right along the spine, a box per
    block under it (as tall as its lines of PER_LINE squares), a square per stage."""
    boxes: list[tuple[Rect, FlowBlock]] = []
    spans: list[tuple[float, float, str]] = []
    squares: list[tuple[Rect, int]] = []
    x, height = 8.0, SPINE_Y + 12
    for column in columns:
        start = x
        for block in column.blocks:
            lines = -(-len(block.stages) // PER_LINE)
            top = SPINE_Y + 10
            box = (x, top, COLUMN, TITLE + lines * (CELL + GAP) + 4)
            boxes.append((box, block))
            for k, index in enumerate(block.stages):
                row, col = divmod(k, PER_LINE)
                squares.append(((x + 7 + col * (CELL + GAP), top + TITLE + row * (CELL + GAP),
                                 CELL, CELL), index))
            x += COLUMN + 6
            height = max(height, top + box[3] + 6)
        spans.append((start, x - 6, column.title))
        x += 12
    return FlowGeometry(boxes, spans, squares, (int(x + 12), int(height)))


def same_copy(block: str, other: str) -> bool:
    """Whether two blocks sit in the same copy of their groups ("layers.1.attn", "layers.1.ffn")."""
    copies = [p for p in block.split(".") if p.isdigit()]
    return bool(copies) and copies == [p for p in other.split(".") if p.isdigit()]


def across_layers(names: list[str], index: int) -> list[int]:
    """The stages that are stage ``index`` in each copy of its group, in order ("layers.0.attn:
    head 0: softmax", "layers.1.attn: head 0: softmax", ...); [] for a stage outside a group."""
    section, _ = section_of(names[index].split(": ", 1)[0])
    group, _, copy = section.rpartition(".")
    if not copy.isdigit():
        return []
    rest = names[index][len(section):]
    return [i for i, name in enumerate(names)
            if name.startswith(group + ".") and name.endswith(rest)
            and name[len(group) + 1:len(name) - len(rest)].isdigit()]
