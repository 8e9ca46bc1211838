"""The numbers behind the positions view, without Qt: which dimensions of a table are drawn as
waveforms (:func:`waveform_dims`), the round bound its waveforms' axis keeps until a value
passes it (:func:`waveform_bound`, rounded by ``axis_range.nice_bound``), whether a look's position tensors are those already drawn
(:func:`same_positions`), which scheme is shown and whether there is a choice
(:func:`scheme_choice`), which page draws it (:func:`page_for`), which rows of a learned table
were trained and drawn (:func:`trained_rows`, :func:`drawn_rows`), and the pages' titles
(:func:`waveform_title`, :func:`table_title`, :func:`similarity_title`, :func:`rope_title`,
:func:`alibi_titles`)."""
from __future__ import annotations

import math

import numpy as np

from ...graph.kinds import ABSOLUTE_SCHEMES, LEARNED, SINUSOIDAL
from .axis_range import nice_bound
from .kept_choice import kept_choice

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


def scheme_choice(schemes: list[str], current: str) -> tuple[str | None, bool]:
    """(the scheme shown, whether the user is offered a choice): the one shown before while
    the look still has it, else the first; a choice only when there is one to make."""
    return kept_choice(current, schemes), len(schemes) > 1


def trained_rows(scheme: str, rows: int, trained: int | None) -> int | None:
    """How many rows of a position table the run trained (None: all of them, or not known):
    only a learned table's rows past the run's sequence length never reached a batch and keep
    their random start."""
    return trained if scheme == LEARNED and trained is not None and 0 < trained < rows else None


def drawn_rows(table_rows: int, trained: int | None, all_rows: bool
               ) -> tuple[int, float | None]:
    """(the rows of a table drawn, where the waveforms mark the end of the trained ones; None:
    no mark): a learned table's untrained rows (``trained_rows``) are left out, unless
    ``all_rows`` asks for them, and then marked between the last trained row and the next."""
    if trained is None:
        return table_rows, None
    return (table_rows, trained - 0.5) if all_rows else (trained, None)


def page_for(scheme: str) -> str:
    """The page that draws ``scheme``: a table (sinusoidal, learned), RoPE's or ALiBi's."""
    return "table" if scheme in ABSOLUTE_SCHEMES else scheme


def rope_title(base: float, scaling: float) -> str:
    return (f"score of positions m (row), n (column): depends on m − n only (base {base:g}, "
            f"scaling {scaling:g})")


def alibi_titles(slopes) -> list[str]:
    """Each ALiBi head's map title: its slope."""
    return [f"head {h} · slope {s:.4g}" for h, s in enumerate(slopes)]


def waveform_bound(top: float) -> float:
    """The waveforms' symmetric y bound for values up to ``top`` in size: a round one
    (``axis_range.nice_bound``), or 1 when there is no finite positive value to fit."""
    return nice_bound(top) if math.isfinite(top) and top > 0 else 1.0


def waveform_title(scheme: str) -> str:
    """The waveforms' title: a sinusoidal table is fixed, a learned one changes as it trains."""
    what = "fixed sin/cos" if scheme == SINUSOIDAL else "learned, changes as it trains"
    return f"Waveforms per dimension ({what})"


def table_title(scheme: str, shape: tuple[int, int], table_rows: int, trained: int | None,
                all_rows: bool) -> str:
    """The table's title for the ``shape`` drawn of a table of ``table_rows`` rows, ``trained``
    of them trained (``trained_rows``; None: all): which rows it shows, and with ``all_rows``
    from which row on they never trained."""
    rows = "rows"
    if trained is not None:
        rows = (f"rows; from {trained}, past the run's sequence length, never trained"
                if all_rows else f"rows 0–{trained - 1} of {table_rows}, the run's sequence "
                                 "length")
    return f"{scheme} table: position ({rows}) x dimension (columns), {shape[0]} x {shape[1]}"


def similarity_title(positions: int) -> str:
    return f"similarity p_i · p_j of positions i (row), j (column), 0–{positions - 1}"


def own_tensors_line(run: str, where: str) -> str:
    """The source line of a look's positions: the run's own tensors, and when they were
    read (``shown_state.look_where``)."""
    return f"{run}: the model's own tensors {where}"


NO_POSITIONS = ("This graph carries no position information: no positional encoding block and "
                "no RoPE or ALiBi attention. Its attention sees the tokens as a set (a recurrent "
                "model reads them in order instead).")


def nothing_to_draw_text(source: str) -> str | None:
    """The empty page's text when there is no scheme to draw: a graph was read (``source``
    names it) and carries no position information; with none, None keeps the page's reason."""
    return NO_POSITIONS if source else None


def drawn_already(shown: dict, positions: dict, shown_trained: int | None,
                  trained: int | None) -> bool:
    """Whether a look's ``positions`` need no drawing: the tensors on screen, with the same
    trained rows (an empty look is always drawn: it clears the page)."""
    return bool(positions) and same_positions(shown, positions) and trained == shown_trained
