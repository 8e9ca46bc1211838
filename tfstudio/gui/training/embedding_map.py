"""The Embeddings tab's map, without Qt: the axes every replayed map shares
(:func:`map_range`), labels that would overlap stacked one line apart (:func:`label_offsets`),
the picked token's place and its nearest neighbours (:func:`neighbours`), which step a map is
(:func:`step_caption`) and what the tab does with a new read-out (:func:`replay_action`).
explain_embeddings.py draws them."""
from __future__ import annotations

import numpy as np

from .token_text import display_token

FRESH_HINT = "Fresh weights: train or open a run to replay the map over its training."
LABEL_ROOM = 1.5      # lines of room above the highest point for its label

MAP_MARGIN = 0.08     # the replayed map's fixed axes leave this share of room around the points


def map_range(maps: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    """((x0, x1), (y0, y1)) holding every map's points with a margin: fixed axes, so a replay
    shows the points move rather than the axes rescale."""
    points = np.concatenate([m["coords"] for m in maps])
    low, high = points.min(axis=0), points.max(axis=0)
    pad = np.maximum(high - low, 1e-6) * MAP_MARGIN
    return ((low[0] - pad[0], high[0] + pad[0]), (low[1] - pad[1], high[1] + pad[1]))


def label_offsets(coords: np.ndarray, labels: list[str], ranges,
                  cell: tuple[float, float] = (0.0075, 0.04)) -> np.ndarray:
    """[n, 2] data-space shifts that stack labels which would overlap (untrained tokens often
    sit on one spot) upwards, one line apart, instead of printing them over each other.
    ``cell``: a character's width and a line's height, as shares of the axes' spans."""
    (x0, x1), (y0, y1) = ranges
    span = np.array([max(x1 - x0, 1e-12), max(y1 - y0, 1e-12)])
    char, line = cell
    placed: list[tuple[float, float, float]] = []  # (x, y, half width), in axis shares
    shifts = np.zeros_like(coords, dtype=np.float64)
    for i, ((x, y), label) in enumerate(zip(coords / span, labels)):
        half, lift = char * max(len(display_token(label)), 1) / 2, 0.0
        # (a line apart is apart: lifts summed in floating point fall short of whole lines)
        while any(abs(x - px) < half + ph and abs(y + lift - py) < line * (1 - 1e-9)
                  for px, py, ph in placed):
            lift += line
        placed.append((x, y + lift, half))
        shifts[i, 1] = lift * span[1]
    return shifts


def neighbours(entry: dict, picked_ids: list[int]) -> tuple[int | None, list | None]:
    """(the row of the picked token in the map ``entry``, its nearest neighbours by cosine as
    (label, cosine)); (None, None) when the picked text is not one token of the map."""
    ids = [int(i) for i in entry["ids"]]
    if len(picked_ids) != 1 or picked_ids[0] not in ids:
        return None, None
    row = ids.index(picked_ids[0])
    names = dict(zip(ids, entry["labels"]))
    return row, [(names[int(i)], c) for i, c in
                 zip(entry["neighbours"][row], entry["neighbour_cosines"][row])]


def step_caption(step: int | None) -> str:
    """The replay slider's label: the loaded weights ("now") or a checkpoint's step."""
    return "now" if step is None else f"step {step:,}"


def replay_action(run_dir, key: tuple, asked: tuple | None, replayed: bool) -> str:
    """What a new read-out does to the replay: "fresh" (weights not from a run: nothing to
    replay), "ask" (a new model, run or text: draw it now, load the replay), "show" (the replay
    of this text is here: show the slider's map), "wait" (it is loading: draw the read-out)."""
    if run_dir is None:
        return "fresh"
    if key != asked:
        return "ask"
    return "show" if replayed else "wait"
