"""What each picture of Explain shows, without Qt: a walk stage's pictures of the picked token
(:func:`stage_pictures`: labelled bars or a strip of cells, each with its caption), and a step
card's heatmap of the whole tensor (:func:`card_matrix`, :func:`card_kind`,
:func:`card_labels`), with which tokens and vocabulary they are labelled (:func:`stage_tokens`,
:func:`vocab_labels`). explain_stages.py and explain_matrix.py draw them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .token_text import display_token

MAX_ROWS_SHOWN = 64   # a step's heatmap shows at most this many rows (positions)
MAX_COLS_SHOWN = 256  # ... and columns (features, vocabulary entries)


def shape_title(name: str, shape) -> str:
    """A stage's or card's title: its name in bold and its shape ("[17 x 64]", "[scalar]")."""
    return f"<b>{name}</b>  [{' x '.join(map(str, shape)) or 'scalar'}]"


@dataclass(frozen=True)
class Picture:
    """One picture of a stage: ``bars`` (one labelled bar per value, ``highlight`` lit) or a
    ``strip`` (a cell per value), under its caption."""
    caption: str
    kind: str                  # "bars" | "strip"
    values: list[float]
    labels: list[str]
    highlight: int | None = None


def stage_names(summary: dict, token_names: Callable[[list[int]], list[str]] | None
                ) -> list[str]:
    """The names of a stage's likeliest tokens (or largest logits): the summary's own, else
    the tokenizer's, else their ids."""
    ids = [int(i) for i in summary.get("top_ids", ())]
    if "top_tokens" in summary:
        return list(summary["top_tokens"])
    return token_names(ids) if token_names is not None and ids else [str(i) for i in ids]


def stage_pictures(summary: dict, tokens: list[str], position: int, names: list[str]
                   ) -> list[Picture]:
    """A stage's pictures of the token at ``position``: a distribution's likeliest tokens
    (probabilities with all others summed), one number per position, the picked token's row
    of an attention map (one number per key), or its vector as a strip; then, for a tensor of
    vectors, the size of every position's."""
    shape = summary["shape"]
    picked = display_token(tokens[position]) if 0 <= position < len(tokens) else ""
    square = len(shape) == 2 and shape[0] == shape[1]
    pictures = []
    if "top_ids" in summary:
        pictures.append(top_picture(summary, names))
    elif shape == [len(tokens)] and "per_position" in summary:  # the ids: all, the picked lit
        pictures.append(Picture("one number per position", "bars",
                                list(summary["per_position"]), tokens, position))
    elif "picked" in summary:
        values = list(np.asarray(summary["picked"]))
        if len(values) == len(tokens) and square:
            what = "its row: how much it looks at each token" if "softmax" in summary["name"] \
                else "its row, one number per key"
            pictures.append(Picture(f"{picked} (position {position}), {what}", "bars", values,
                                    tokens, position))
        elif len(shape) <= 1 and len(values) == len(tokens):
            pictures.append(Picture("one number per position", "bars", values, tokens,
                                    position))
        else:
            pictures.append(Picture(f"{picked} (position {position}): its {len(values)} "
                                    "values", "strip", values, []))
    if "per_position" in summary and len(summary["per_position"]) == len(tokens) \
            and len(shape) >= 2 and "top_ids" not in summary \
            and not square:   # a row of attention has no "size" worth a picture
        pictures.append(Picture("the size (L2 norm) of every position's vector", "bars",
                                list(summary["per_position"]), tokens, position))
    return pictures


def top_picture(summary: dict, names: list[str]) -> Picture:
    """A distribution's likeliest next tokens and all others summed, or the largest logits."""
    ids = summary["top_ids"]
    values = [float(v) for v in np.asarray(summary["top_values"], dtype=np.float64)]
    if summary["kind"] == "sampling":
        return Picture(f"the {len(ids)} likeliest next tokens, and all others summed", "bars",
                       values + [float(summary["others"])], list(names) + ["others"])
    return Picture(f"the {len(ids)} largest logits", "bars", values, list(names))


def stage_tokens(block: str, tokens: dict[str, list[str]], stream_role: str, position: int
                 ) -> tuple[list[str], int]:
    """(the tokens a step's pictures are labelled with, the picked one's position, -1: none
    picked there): an encoder-decoder's source-side blocks read the source text, where the
    picked token (of the target stream) is not."""
    role = "source" if block.startswith(("src_", "encoder")) and "source" in tokens \
        else stream_role
    return tokens.get(role, []), position if role == stream_role else -1


def vocab_labels(token_strings: Callable[[list[int]], list[str]] | None, size: int
                 ) -> list[str] | None:
    """The vocabulary's tokens naming the columns of the logits, for a vocabulary of at most
    MAX_COLS_SHOWN (a larger one's columns cannot be read anyway); None: no names."""
    if token_strings is None or size > MAX_COLS_SHOWN:
        return None
    try:
        return token_strings(list(range(size)))
    except (ValueError, KeyError, IndexError):
        return None


def card_matrix(value: np.ndarray) -> np.ndarray:
    """The rows and columns of a step's tensor its card shows: a row per position (one row
    for a vector), at most MAX_ROWS_SHOWN x MAX_COLS_SHOWN."""
    value = np.asarray(value)
    matrix = value.reshape(1, -1) if value.ndim <= 1 else value.reshape(value.shape[0], -1)
    return matrix[:MAX_ROWS_SHOWN, :MAX_COLS_SHOWN].astype(np.float64)


def card_kind(step, value: np.ndarray) -> str:
    """A card's colour scale: "sequential" from 0 for probabilities, attention weights, ids
    and masks; "diverging" around 0 for signed values."""
    if step.kind == "sampling" or "softmax" in step.name or value.dtype == bool \
            or np.issubdtype(value.dtype, np.integer):
        return "sequential"
    return "diverging"


def card_labels(step, shape: tuple[int, int], row_labels: list[str],
                vocab_labels: list[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """(rows, columns) naming a step's heatmap: positions down, and across the keys of an
    attention map, the vocabulary of logits and probabilities, else feature numbers."""
    n_rows, n_cols = shape
    rows = row_labels[:n_rows] if len(row_labels) >= n_rows else None
    if n_rows == 1 and len(row_labels) == n_cols:
        return ["id" if step.name.endswith("token ids") else "value"], row_labels
    over_vocab = step.kind == "sampling" or step.name.endswith(": logits")
    if vocab_labels is not None and over_vocab and len(vocab_labels) >= n_cols:
        return (rows if n_rows > 1 else ["p"]), vocab_labels[:n_cols]
    if rows is None:
        return None, None
    if step.name.endswith((": scores", ": mask", ": softmax")) and n_cols == len(rows):
        return rows, rows
    return rows, [str(j) for j in range(n_cols)]
