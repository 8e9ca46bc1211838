"""What the attention view writes, without Qt: which query heads share a K/V head in the
graph (:func:`head_groups`, :func:`shared_kv`), each head's title (:func:`head_title`) and the
line under the map (:func:`info_line`); and what it shows: the head scores that belong to the
look on screen (:func:`roles_for`) and the map of the head picked (:func:`head_matrix`).
:class:`~.attention_view.AttentionView` shows them."""
from __future__ import annotations

import numpy as np

from ...graph import block_types as bt

AVERAGE, GRID = "average", "grid"   # the Heads box's two choices besides a head


def head_groups(graph) -> dict[str, tuple[int, int]]:
    """{attention key without copy indices ("layers.attn"): (heads, kv_heads)} of the graph."""
    out: dict[str, tuple[int, int]] = {}
    for path, node in graph.walk():
        if node.type in bt.ATTENTION_TYPES:
            heads = int(node.typed_params().heads or 1)
            out[".".join(path + (node.id,))] = (heads, int(node.typed_params().kv_heads or heads))
    return out


def kv_group(key: str, groups: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """(heads, kv_heads) of the snapshot's attention ``key`` ("layers.0.attn")."""
    return groups.get(".".join(part for part in key.split(".") if not part.isdigit()))


def shared_kv(shape: tuple[int, int] | None, cross: bool) -> tuple[int, int] | None:
    """``shape`` (heads, kv_heads) when query heads share K/V heads (GQA, MQA); None for
    plain multi-head attention, cross-attention, or a block the graph does not name."""
    if shape is None or shape[1] >= shape[0] or cross:
        return None
    return shape


def head_title(h: int, shared: tuple[int, int] | None,
               roles: dict[str, list[float]] | None = None) -> str:
    """"head 2 · K/V 1 · prev 0.93 · ind 0.02": its K/V head where ``shared`` (heads, kv_heads)
    says query heads share them, and its scores where ``roles`` are given (only on the look
    they were measured on)."""
    title = f"head {h}"
    if shared is not None:
        title += f" · K/V {h // (shared[0] // shared[1])}"
    if roles and h < len(roles.get("induction", ())):
        title += f" · prev {roles['previous_token'][h]:.2f} · ind {roles['induction'][h]:.2f}"
    return title


def info_line(*, cross: bool, masked: bool, shared: tuple[int, int] | None, grid: bool,
              roles_shown: bool, roles_step: int | None) -> str:
    """The line under the map: what rows and columns are, how heads share K/V, whether cells
    are masked, and what the head scores are (``roles_shown``: on this look's titles;
    ``roles_step``: the step they were measured at, None when there are none)."""
    kind = "rows: decoder tokens, columns: source tokens" if cross \
        else "rows: queries, columns: the keys they read"
    if shared is not None:
        heads, kv = shared
        what = "MQA: all heads share one K/V head" if kv == 1 else \
            f"GQA: {heads} query heads share {kv} K/V heads, {heads // kv} per group"
        kind = f"{kind} · {what} (same K/V number: same keys)"
    hatched = " · hatched: masked (cannot look there)" if masked else ""
    text = f"Rows sum to 1 · {kind}{hatched} · hover a row; click a head in the grid"
    if roles_shown and grid:
        text += (f" · prev / ind (weights of step {roles_step:,}): how much each head "
                 "attends to the previous token / to the token after its last occurrence, "
                 "on a repeated random sequence")
    elif roles_step is not None:
        text += (f" · head scores (prev / ind) are measured on the weights of step "
                 f"{roles_step:,}: shown at that step only")
    return text


def roles_for(roles: dict, roles_step: int | None, look_step: int | None, layer: str
              ) -> dict[str, list[float]] | None:
    """The head scores of ``layer`` if they were measured on the weights of the look on
    screen (scores of the final weights say nothing about a replayed early step)."""
    if look_step is None or roles_step is None or look_step != roles_step:
        return None
    return roles.get(layer) or None


def head_matrix(weights, choice) -> np.ndarray | None:
    """The single map for the Heads box's ``choice``: the heads' average, one head, or None
    for the grid of all heads."""
    if choice == GRID:
        return None
    weights = np.asarray(weights)
    return weights.mean(0) if choice == AVERAGE else weights[int(choice)]


def head_choices(heads: int) -> list:
    """The Heads box's entries for a layer of ``heads`` heads, in order: the average, the grid,
    then each head (none when the layer has no heads)."""
    return [AVERAGE, GRID, *range(heads)] if heads else []


def head_entries(heads: int, title) -> list[tuple[str, object, str | None]]:
    """The Heads box's (label, choice, tooltip) for a layer of ``heads`` heads (``head_choices``
    in order): "Average of 4", "All heads", then each head by ``title(head, scores)`` (its
    scores in the tooltip only)."""
    entries = []
    for choice in head_choices(heads):
        if choice == AVERAGE:
            entries.append((f"Average of {heads}", AVERAGE, None))
        elif choice == GRID:
            entries.append(("All heads", GRID, None))
        else:
            entries.append((title(choice, False).capitalize(), choice, title(choice, True)))
    return entries


def map_tokens(look: dict | None, entry: dict | None) -> tuple[list[str], list[str]]:
    """(the rows' tokens, the columns') of a layer's maps in ``look``: its queries' stream
    down, its keys' across (an encoder-decoder's cross-attention: target down, source across)."""
    if entry is None:
        return [], []
    tokens = (look or {}).get("tokens") or {}
    return list(tokens.get(entry["query_role"], [])), list(tokens.get(entry["key_role"], []))


def colour_range(contrast: bool) -> tuple[float, float] | None:
    """A map's colour range: (0, 1), that of a probability, or None (each map from 0 to its own
    largest weight) when the user asked for contrast per map."""
    return None if contrast else (0.0, 1.0)


def map_title(layer: str, choice, heads: int, contrast: bool) -> str:
    """The single map's title: the layer, which map (the mean of the heads or one head) and,
    with contrast per map, that its colours run to its own largest weight."""
    which = f"mean of {heads} heads" if choice == AVERAGE else f"head {choice}"
    scale = " · colours 0 to its largest weight" if contrast else ""
    return f"{layer} · {which}{scale}"


NO_ATTENTION = ("This graph has no attention block (a recurrent model reads its input in order "
                "instead).")


def empty_text(has_look: bool) -> str | None:
    """The empty page's text when the layer shown has no attention entry: a look without any
    means the graph has no attention block; with no look, None keeps the reason the page was
    given (no run yet, no look of this run)."""
    return NO_ATTENTION if has_look else None
