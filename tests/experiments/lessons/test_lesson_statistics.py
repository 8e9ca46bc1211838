"""The lessons' decision rule has the error rate it states: simulated seeds with no true
difference decide a check at most 5% of the time, a true difference as large as the stated
detectable one is found 80% of the time, Holm's correction holds a claim over buckets to 5%,
and each sentence and label says what decided it (numbers from scipy.stats and seeded numpy
draws, independent of the code's own simulation)."""
from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tfstudio.experiments.lessons import (FACT, FAILS, HOLDS, UNDECIDED, Check, Sample, Verdict,
                                          fact, higher, lower)
from tfstudio.experiments.lessons.significance import (detectable, holm, power, seeds_needed,
                                                       t_test, welch_detectable, welch_power)

DRAWS = 4000                              # simulated comparisons per rate
MC = 3 * math.sqrt(0.05 * 0.95 / DRAWS)   # three Monte Carlo standard errors at 5% (0.010)


@pytest.fixture(scope="module")
def stats():
    """scipy.stats, the reference the lessons' numbers are checked against (imported by the tests
    that use it: 0.7 s of CPU that collecting would otherwise pay)."""
    from scipy import stats
    return stats


def test_welch_test_matches_the_textbook_formula(stats):
    a, b = [1.0, 1.1, 1.2], [1.3, 1.4, 1.5]
    t = lower(Sample.of(a), Sample.of(b))
    se = math.sqrt(np.var(a, ddof=1) / 3 + np.var(b, ddof=1) / 3)
    df = se ** 4 / ((np.var(a, ddof=1) / 3) ** 2 / 2 + (np.var(b, ddof=1) / 3) ** 2 / 2)
    assert t.difference == pytest.approx(-0.3)
    assert t.p == pytest.approx(2 * stats.t.sf(0.3 / se, df))
    assert (t.low, t.high) == pytest.approx((-0.3 - stats.t.ppf(0.975, df) * se,
                                             -0.3 + stats.t.ppf(0.975, df) * se))
    assert t.outcome == HOLDS and higher(Sample.of(b), Sample.of(a)).outcome == HOLDS
    assert lower(Sample.of(b), Sample.of(a)).outcome == FAILS


def test_a_fixed_baseline_is_met_with_the_one_sample_t_and_one_seed_decides_nothing(stats):
    t = lower(Sample.of([1.0, 1.1, 1.2]), 1.5)
    assert t.kind == "one-sample t"
    assert t.p == pytest.approx(stats.ttest_1samp([1.0, 1.1, 1.2], 1.5).pvalue)
    assert t.outcome == HOLDS and lower(Sample.of([1.0, 1.1, 1.2]), 1.15).outcome == UNDECIDED
    one = lower(Sample.of([1.0]), Sample.of([2.0, 2.1, 2.2]))
    assert one.outcome == UNDECIDED and "no spread" in one.text()


def test_paired_test_pairs_seed_by_seed(stats):
    a, b = [0.30, 0.50, 0.70], [0.25, 0.44, 0.66]   # a shared seed effect, a steady gap
    assert higher(Sample.of(a), Sample.of(b), paired=True).outcome == HOLDS
    assert higher(Sample.of(a), Sample.of(b)).outcome == UNDECIDED   # Welch sees the seeds
    assert higher(Sample.of(a), Sample.of(b), paired=True).p == pytest.approx(
        stats.ttest_rel(a, b).pvalue)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_no_true_difference_decides_at_most_five_percent_of_checks(n, stats):
    rng = np.random.default_rng(n)
    a, b = rng.normal(0, 1, (DRAWS, n)), rng.normal(0, 1, (DRAWS, n))
    few = 400   # the lessons' own rule, call by call (2 ms each), on the first draws
    decided = np.mean([t_test(x, y).decided for x, y in zip(a[:few], b[:few])])
    assert decided <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / few)
    # the same rule, vectorised over every draw: scipy's tests at 0.05
    assert np.mean(stats.ttest_ind(a, b, axis=1, equal_var=False).pvalue < 0.05) <= 0.05 + MC
    assert np.mean(stats.ttest_1samp(a, 0.0, axis=1).pvalue < 0.05) <= 0.05 + MC


@pytest.mark.parametrize("n, sd_b", [(3, 1.0), (3, 0.2), (5, 1.0)])
def test_a_difference_as_large_as_the_stated_detectable_one_is_found_80_percent_of_the_time(
        n, sd_b, stats):
    effect = welch_detectable(1.0, sd_b, n, n)
    rng = np.random.default_rng(100 + n)
    a, b = rng.normal(0, 1, (DRAWS, n)), rng.normal(effect, sd_b, (DRAWS, n))
    found = np.mean(stats.ttest_ind(a, b, axis=1, equal_var=False).pvalue < 0.05)
    assert found == pytest.approx(0.80, abs=3 * math.sqrt(0.8 * 0.2 / DRAWS) + 0.005)
    half = rng.normal(effect / 2, sd_b, (DRAWS, n))   # half of it is found far less often
    assert np.mean(stats.ttest_ind(a, half, axis=1, equal_var=False).pvalue < 0.05) < 0.5


def test_one_sample_power_is_the_noncentral_t_and_seeds_needed_is_the_first_to_reach_80(stats):
    effect = detectable(1 / math.sqrt(3), 2)
    rng = np.random.default_rng(7)
    found = np.mean(stats.ttest_1samp(rng.normal(effect, 1, (DRAWS, 3)), 0, axis=1).pvalue < 0.05)
    assert found == pytest.approx(0.80, abs=0.025)
    n = seeds_needed(1.5, 1.0)
    assert welch_power(1.5, 1, 1, n, n) >= 0.8 > welch_power(1.5, 1, 1, n - 1, n - 1)
    assert power(0.0, 1.0, 4) == pytest.approx(0.05)


def test_holm_keeps_a_claim_over_buckets_to_five_percent_and_finds_a_real_effect(stats):
    rng = np.random.default_rng(11)
    # four null buckets, three seeds a side: Welch's p-values from scipy, then Holm
    p = stats.ttest_ind(rng.normal(0, 1, (DRAWS, 4, 3)), rng.normal(0, 1, (DRAWS, 4, 3)),
                        axis=2, equal_var=False).pvalue
    template = t_test([0.0, 1.0, 2.0], [0.5, 1.5, 2.5])
    wrong = np.mean([any(t.decided for t in holm([replace(template, p=float(x)) for x in row]))
                     for row in p])
    assert wrong <= 0.05 + MC
    assert np.mean((p < 0.05).any(axis=1)) > 0.1   # uncorrected, any of four errs far more
    tests = holm([t_test([1.0, 1.01, 0.99], [2.0, 2.01, 1.99])] +
                 [t_test([1.0, 1.5, 0.5], [1.1, 0.6, 1.4]) for _ in range(3)])
    assert tests[0].outcome == HOLDS and tests[0].family == 4
    assert tests[0].alpha == pytest.approx(0.05 / 4)
    assert all(t.outcome == UNDECIDED for t in tests[1:])
    assert "Holm's threshold 0.0125 for 4 tests" in tests[0].text()
    # a p below its own threshold stays undecided once the step-down has stopped before it
    stopped = holm([replace(tests[1], p=0.03), replace(tests[1], p=0.04)])
    assert [t.decided for t in stopped] == [False, False]     # 0.03 > 0.025: stop
    assert stopped[1].alpha == 0.05 and stopped[1].p < 0.05
    assert "Holm's step-down over 2 tests stopped" in Check("c", stopped[1], "s",
                                                             tests=(stopped[1],)).label


def test_sentences_give_the_difference_interval_p_and_seeds_and_the_detectable_difference():
    decided = lower(Sample.of([1.0, 1.1, 1.2]), Sample.of([1.3, 1.4, 1.5]))
    assert decided.text() == ("difference -0.300 (95% CI -0.527 to -0.073), Welch's t "
                              "p = 0.021, n=3 seeds each")
    open_ = lower(Sample.of([1.0, 1.1, 1.2]), Sample.of([1.05, 1.15, 1.25]))
    assert open_.outcome == UNDECIDED
    assert f"would detect a difference of {open_.detectable:.3f} or more with 80% power" \
        in open_.text()
    line = Check("c", open_, "s.", tests=(open_,)).text()
    assert line.startswith(f"c: not decided (p = {open_.p:.2g}, not below 0.05; n=3 seeds each)")
    assert "Test: difference -0.050" in line


def test_an_undecided_label_names_what_decided_it():
    check = Check("c", UNDECIDED, "s", why="the drift 0.0004 is below 0.001")
    assert check.label == "not decided (the drift 0.0004 is below 0.001)"
    assert "spread" not in check.label


def test_facts_are_shown_apart_and_never_counted():
    verdict = Verdict.of([Check("a", HOLDS, "x"), fact("b", True, "by construction.")])
    assert verdict.word == "holds here" and len(verdict.checks) == 1
    assert verdict.facts[0].outcome == FACT
    lines = verdict.sentences()
    assert "1 hold of 1 checks" in lines[0]
    assert lines[-1] == "Facts (true by construction, not counted in the verdict): b: by " \
                        "construction."
    broken = Verdict.of([Check("a", HOLDS, "x"), fact("b", False, "not equal.")])
    assert broken.word == "mixed" and broken.checks[1].outcome == FAILS


FIRST_T_TEST = """
import sys
from tfstudio.experiments.lessons import Sample, lower
print("scipy" in sys.modules)
lower(Sample.of([1.0, 1.1, 1.2]), Sample.of([1.3, 1.4, 1.5]))
print("scipy" in sys.modules)
"""


@pytest.mark.slow
def test_the_lessons_import_without_scipy_and_load_it_for_their_first_t_test():
    """scipy.stats costs 0.7 s of CPU, twice the lessons: every CLI start and every test
    collection that imports a lesson would pay it."""
    out = subprocess.run([sys.executable, "-c", FIRST_T_TEST], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
