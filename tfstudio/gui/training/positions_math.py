"""The numbers behind the positions view, without Qt: which dimensions of a table are drawn as
waveforms (:func:`waveform_dims`), the round bound its waveforms' axis keeps until a value
passes it (:func:`nice_bound`), whether a look's position tensors are those already drawn
(:func:`same_positions`), which scheme is shown and whether there is a choice
(:func:`scheme_choice`), and which rows of a learned table were trained (:func:`trained_rows`)."""
from __future__ import annotations

import math

import numpy as np

from ...graph.kinds import LEARNED

WAVEFORMS = 6  # dimensions drawn as waveforms, from fast to slow


def waveform_dims(d_model: int, count: int = WAVEFORMS) -> list[int]:
    """Even (sine) dimensions spread from the fastest to the slowest frequency."""
    evens = list(range(0, d_model, 2))
    if len(evens) <= count:
        return evens
    picks = np.linspace(0, len(evens) - 1, count).round().astype(int)
    return [evens[i] for i in sorted(set(picks))]


def same_positions(a: dict, b: dict) -> bool:
    """Whether two "positions" entries hold the same schemes with equal values."""
    if a.keys() != b.keys():
        return False
    for scheme, data in a.items():
        other = b[scheme]
        if data.keys() != other.keys():
            return False
        for key, value in data.items():
            if isinstance(value, np.ndarray) or isinstance(other[key], np.ndarray):
                if not np.array_equal(np.asarray(value), np.asarray(other[key])):
                    return False
            elif value != other[key]:
                return False
    return True


def nice_bound(value: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``value`` (a positive number)."""
    scale = 10.0 ** math.floor(math.log10(value))  # value / scale is in [1, 10)
    return next(step * scale for step in (1, 2, 5, 10) if step * scale >= value * (1 - 1e-12))


def scheme_choice(schemes: list[str], current: str) -> tuple[str | None, bool]:
    """(the scheme shown, whether the user is offered a choice): the one shown before while
    the look still has it, else the first; a choice only when there is one to make."""
    chosen = current if current in schemes else (schemes[0] if schemes else None)
    return chosen, len(schemes) > 1


def trained_rows(scheme: str, rows: int, trained: int | None) -> int | None:
    """How many rows of a position table the run trained (None: all of them, or not known):
    only a learned table's rows past the run's sequence length never reached a batch and keep
    their random start."""
    return trained if scheme == LEARNED and trained is not None and 0 < trained < rows else None
