"""How Explain follows the rest of the window, without Qt: the canvas block a stage lights
(:func:`block_node`, :func:`lit_node`) and the stage a block clicked there explains
(:func:`stage_for_block`), the switches that name the blocks selected on the canvas
(:func:`blocks_to_ablate`), what the canvas's ablate action says and switches
(:func:`ablate_text`, :func:`toggled`), the name of the run whose weights it reads
(:func:`run_label`) and the tokens the attention grid's head scores are measured on
(:func:`head_score_pool`). attach.py and explain_walk.py wire them."""
from __future__ import annotations

import re
import string
from pathlib import Path

from .flow_layout import same_copy

ABLATE = "Switch off in Explain (ablate)"
ABLATED = "Switch on again in Explain"


def block_node(block: str) -> tuple[tuple[str, ...], str]:
    """"layers.0.attn" -> (("layers",), "attn"): the group path on the canvas and the node a
    step's block is (copy indices dropped: every copy is the same node on the canvas)."""
    parts = [p for p in block.split(".") if not p.isdigit()]
    return tuple(parts[:-1]), parts[-1] if parts else ""


def lit_node(here: tuple[str, ...], block: str) -> str | None:
    """The node to select on a canvas showing the level ``here`` for a stage of ``block``:
    the block itself, or the group holding it when the canvas shows a level above it; None
    when the canvas shows another group, or for sampling (no block)."""
    path, node = block_node(block)
    if node and path[:len(here)] == here:
        return path[len(here)] if len(path) > len(here) else node
    return None


def stage_for_block(blocks: list[str], current: int, path, node_ids: list[str]) -> int | None:
    """The stage to explain when ``node_ids`` are selected on the canvas at ``path``, the
    stages being of ``blocks`` and stage ``current`` shown: one block selected, its first
    stage (in the layer of the one shown, when the block is repeated; a group: its first
    stage inside it); None to stay (the block is the one shown, or nothing of it is walked)."""
    if len(node_ids) != 1 or not blocks:
        return None
    wanted = (tuple(path), node_ids[0])
    group = wanted[0] + (wanted[1],)   # the path inside it, should it be a group

    def shows(block: str) -> bool:
        where, node = block_node(block)
        return bool(block) and ((where, node) == wanted or where[:len(group)] == group)
    shown = blocks[current] if 0 <= current < len(blocks) else ""
    if shows(shown):
        return None
    matches = [i for i, block in enumerate(blocks) if shows(block)]
    if not matches:
        return None
    layer = [i for i in matches if same_copy(blocks[i], shown)]
    return (layer or matches)[0]


def blocks_to_ablate(offered: list[str], path: tuple[str, ...], node_ids: list[str]) -> list[str]:
    """The Explain switches naming these canvas blocks: ``attn`` inside group ``layers`` is
    every copy, ``layers.0.attn``, ``layers.1.attn``, ..."""
    prefix = "".join(rf"{re.escape(group)}\.\d+\." for group in path)
    wanted = [re.compile(prefix + re.escape(node) + "$") for node in node_ids]
    return [name for name in offered if any(p.match(name) for p in wanted)]


def ablate_text(chosen: list[str], ablated: list[str]) -> str:
    """The canvas action's name for the selection's switches ``chosen``: on again when every
    one of them is off, else off."""
    return ABLATED if chosen and set(chosen) <= set(ablated) else ABLATE


def toggled(ablated: list[str], chosen: list[str]) -> list[str]:
    """The switches off after the action: each chosen one flipped, the others kept."""
    return sorted(set(ablated) ^ set(chosen))


def run_label(viewed, run_dir=None, records=tuple) -> str:
    """The name Runs gives the run in ``run_dir`` (default: the ``viewed`` run, a ShownRun; else
    the one ``records()``, Runs' records, name), else its folder's name; "" for none."""
    if run_dir is None:
        return (viewed.name or viewed.path.name) if viewed is not None else ""
    if viewed is not None and viewed.path == Path(run_dir) and viewed.name:
        return viewed.name
    return next((r.label for r in records() if Path(r.path) == Path(run_dir)),
                Path(run_dir).name)


def head_score_pool(tokenizer) -> list[int] | None:
    """The token ids random sequences for head scores are drawn from: each letter the
    tokenizer writes as one token of its own; None when fewer than 4 (too few distinct tokens
    for a random sequence to repeat)."""
    pool = [ids[0] for ch in string.ascii_letters
            if len(ids := tokenizer.encode(ch)) == 1 and tokenizer.decode(ids) == ch]
    pool = list(dict.fromkeys(pool))
    return pool if len(pool) >= 4 else None
