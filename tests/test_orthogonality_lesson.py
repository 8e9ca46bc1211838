"""The orthogonality lesson reads mean |cos| against random vectors and the top-k subspace
share against chance; made-up measurements where the vectors are aligned flip it."""
from __future__ import annotations

from tfstudio.experiments.lessons import FAILS, HOLDS, LESSONS, UNDECIDED, prepare
from tfstudio.experiments.lessons import orthogonality as lesson
from tfstudio.experiments.lessons.course import ORDER


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
