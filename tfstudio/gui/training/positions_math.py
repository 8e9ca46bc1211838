"""The numbers behind the positions view, without Qt: which dimensions of a table are drawn as
waveforms (:func:`waveform_dims`), the round bound its waveforms' axis keeps until a value
passes it (:func:`nice_bound`), and whether a look's position tensors are those already drawn
(:func:`same_positions`)."""
from __future__ import annotations

import math

import numpy as np

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
