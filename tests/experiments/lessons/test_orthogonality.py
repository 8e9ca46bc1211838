"""Token/position orthogonality read against chance: mean |cos| beside random vectors of the
same dimension and count, and the positions' energy in the top-k token directions beside k/d;
the words follow the numbers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tfstudio.probes.embeddings import alignment_words, random_abs_cosines, subspace_shares
from tfstudio.experiments.lessons import FAILS, HOLDS, LESSONS, UNDECIDED, prepare
from tfstudio.experiments.lessons import orthogonality as lesson
from tfstudio.experiments.lessons.course import ORDER


def expected_abs_cos(d: int) -> float:
    """E|cos| of two independent random directions in d dimensions (closed form)."""
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


def test_the_random_baseline_matches_the_closed_form():
    draws = random_abs_cosines(64, 50, 64)
    assert draws.mean() == pytest.approx(expected_abs_cos(64), rel=0.02)  # 0.0995
    assert draws.std(ddof=1) < 0.005


def test_subspace_share_is_the_energy_inside_the_top_directions():
    d = 8
    tokens = np.diag([5.0, 4.0, 3.0, 2.0, 1.0, 0.5, 0.25, 0.1])  # top directions e0, e1, ...
    positions = np.zeros((2, d))
    positions[0, 0], positions[1, 3] = 3.0, 4.0     # energy 9 in e0, 16 in e3
    shares = {s["k"]: s for s in subspace_shares(tokens, positions, ks=(1, 2, 4))}
    assert shares[1]["share"] == pytest.approx(9 / 25) and shares[1]["chance"] == 1 / 8
    assert shares[2]["share"] == pytest.approx(9 / 25)
    assert shares[4]["share"] == pytest.approx(1.0) and shares[4]["chance"] == 0.5


def reading(mean: float) -> str:
    return alignment_words({"mean_abs_cosine": mean, "random_mean_abs_cosine": 0.100,
                            "random_spread": 0.002,
                            "subspace": [{"k": 8, "share": 0.36, "chance": 0.125}]})


def test_the_words_follow_the_numbers():
    # the sinusoidal table: three times as aligned as chance
    assert "3.0 times as aligned as random vectors: not orthogonal" in reading(0.30)
    assert "as near orthogonal as random vectors" in reading(0.098)  # learned
    assert "closer to orthogonal than random" in reading(0.05)
    assert "k=8 36.0% (chance 12.5%)" in reading(0.30)


# Moved from test_orthogonality_lesson.py: The orthogonality lesson reads mean |cos| against random vectors and the top-k subspace
# share against chance; made-up measurements where the vectors are aligned flip it.
def rows(cos, share, seeds=3, step=0.005):
    return [{"scheme": "x", "mean_abs_cosine": cos + step * i, "mean_angle_degrees": 89.5,
             "random_mean_abs_cosine": 0.100, "random_spread": 0.002,
             "subspace": [{"k": 8, "share": share + step * i, "chance": 0.125}]}
            for i in range(seeds)]


def test_vectors_as_spread_as_random_ones_hold_the_claim():
    checks = lesson.judge_tables({"learned": rows(0.0995, 0.12, step=0.0005)})
    assert [c.outcome for c in checks] == [HOLDS, HOLDS]
    assert "0.100 ± 0.001 against 0.100 ± 0.002" in checks[0].sentence
    assert "near orthogonal" in checks[0].sentence and "no more than chance" in checks[1].sentence


def test_seeds_too_spread_to_bound_the_difference_leave_it_undecided_and_say_why():
    cos = lesson.judge_tables({"learned": rows(0.098, 0.12)})[0]   # interval reaches 0.015
    assert cos.outcome == UNDECIDED
    assert cos.label.startswith("not decided (the interval's upper end 0.0")
    assert "not below the margin 0.004" in cos.label


def test_aligned_vectors_flip_it_though_the_mean_angle_still_reads_90_degrees():
    checks = lesson.judge_tables({"sinusoidal": rows(0.30, 0.36)})
    assert [c.outcome for c in checks] == [FAILS, FAILS]
    assert "3.0 times as aligned as random vectors: not orthogonal" in checks[0].sentence
    assert "mean angle 89.5 degrees" in checks[0].sentence
    assert "2.9 times chance" in checks[1].sentence


def test_one_seed_decides_nothing():
    checks = lesson.judge_tables({"learned": rows(0.30, 0.36, seeds=1)})
    assert [c.outcome for c in checks] == [UNDECIDED, UNDECIDED]


def test_it_is_a_course_lesson_on_learned_and_sinusoidal_positions():
    assert "orthogonality" in ORDER and LESSONS["orthogonality"].measure is lesson.measure
    assert prepare("orthogonality").varies == [("positions", ["learned", "sinusoidal"])]
