"""The power-law fit against data made with a known exponent."""
import math

import numpy as np
import pytest

from tfstudio.experiments.course.scale import fit_power_law, fit_with_floor, t975


def test_exact_power_law_gives_its_exponent_and_coefficient_with_no_width():
    n = [1e4, 3e4, 1e5, 3e5, 1e6]
    fit = fit_power_law(n, [7.0 * x ** -0.076 for x in n])
    assert fit.exponent == pytest.approx(0.076, abs=1e-9)
    assert fit.coefficient == pytest.approx(7.0, rel=1e-9)
    assert fit.interval[1] - fit.interval[0] == pytest.approx(0.0, abs=1e-9)
    assert fit.r_squared == pytest.approx(1.0)
    assert fit.predict(2e5) == pytest.approx(7.0 * 2e5 ** -0.076)


def test_noisy_runs_recover_the_exponent_and_the_interval_covers_it_95_times_in_100():
    rng = np.random.default_rng(0)
    n = np.repeat([2e4, 5e4, 1e5, 2e5, 5e5], 3)                 # 5 widths x 3 seeds
    fits = [fit_power_law(n, 4.0 * n ** -0.1 * np.exp(rng.normal(0, 0.02, n.size)))
            for _ in range(400)]
    covered = np.mean([f.interval[0] < 0.1 < f.interval[1] for f in fits])
    assert 0.92 <= covered <= 0.98, covered
    assert np.median([f.exponent for f in fits]) == pytest.approx(0.1, abs=0.003)
    assert fits[0].points == 15


def test_interval_is_the_textbook_t_interval_of_the_slope():
    x = np.log([1e3, 1e4, 1e5, 1e6])
    y = np.array([1.0, 0.8, 0.7, 0.45])                       # log losses, by hand
    fit = fit_power_law(np.exp(x), np.exp(y))
    slope, intercept = np.polyfit(x, y, 1)                    # a second implementation
    resid = y - (intercept + slope * x)
    se = math.sqrt((resid ** 2).sum() / 2 / ((x - x.mean()) ** 2).sum())
    assert fit.exponent == pytest.approx(-slope)
    assert fit.interval == pytest.approx((-slope - 4.303 * se, -slope + 4.303 * se))


def test_loss_that_grows_with_size_gives_a_negative_exponent():
    fit = fit_power_law([1e3, 1e4, 1e5], [2.0, 2.2, 2.5])
    assert fit.exponent < 0 and fit.interval[1] < 0.1


@pytest.mark.parametrize("params,losses,message", [
    ([1e3, 1e4], [2.0, 1.9], "at least 3 runs"),
    ([1e3, 1e3, 1e3], [2.0, 1.9, 1.8], "two sizes"),
    ([1e3, 1e4, 0], [2.0, 1.9, 1.8], "positive"),
    ([1e3, 1e4, 1e5], [2.0, float("nan"), 1.8], "finite"),
])
def test_bad_input_is_named(params, losses, message):
    with pytest.raises(ValueError, match=message):
        fit_power_law(params, losses)


def test_t_quantiles_fall_toward_the_normal_one():
    assert t975(2) == 4.303 and t975(30) == 2.042
    assert t975(60) == pytest.approx(2.000, abs=0.002) and t975(1000) == pytest.approx(1.96,
                                                                                       abs=0.01)


# ------------------------------------------------------------------------- power law or not
def runs(curve, seed):
    """Five widths x three seeds of ``curve(N)`` with 1% multiplicative noise."""
    rng = np.random.default_rng(seed)
    n = np.repeat([2e4, 4e4, 8e4, 1.6e5, 3.2e5], 3)
    return n, curve(n) * np.exp(rng.normal(0, 0.01, n.size))


def test_a_true_power_law_passes_and_a_saturating_curve_fails():
    from tfstudio.experiments.course.scale import fit_curvature
    from tfstudio.experiments.lessons import FAILS, HOLDS
    from tfstudio.experiments.lessons.scale import power_law_check

    def judged(curve, seed):
        n, loss = runs(curve, seed)
        sizes = sorted(set(n))
        means = [float(np.mean(loss[n == s])) for s in sizes]
        return power_law_check(fit_power_law(n, loss), fit_curvature(n, loss), sizes, means)

    law = [judged(lambda n: 12.0 * n ** -0.2, s).outcome for s in range(20)]
    assert law.count(HOLDS) >= 17          # the bend test errs ~5% of the time on a true law
    # L = 1 + 40 N^-0.4 (a floor at 1): its local exponent falls as the loss nears the floor
    floor = [judged(lambda n: 1.0 + 40.0 * n ** -0.4, s) for s in range(10)]
    assert [c.outcome for c in floor].count(FAILS) >= 9
    assert "not a power law here" in floor[0].sentence
    assert "local exponent moves from 0.16 to 0.09" in floor[0].sentence


def test_the_bend_is_the_change_of_the_local_exponent_across_the_sizes():
    from tfstudio.experiments.course.scale import fit_curvature, local_exponents
    n = np.array([1e4, 1e5, 1e6, 1e4, 1e5, 1e6])
    straight = fit_curvature(n, 5.0 * n ** -0.1)
    assert straight.change == pytest.approx(0.0, abs=1e-9)
    assert straight.start == pytest.approx(0.1) and straight.end == pytest.approx(0.1)
    # log L = -0.1 x - 0.01 x^2 (x centred log N): the exponent grows by 0.02 * ln(100)
    x = np.log(n) - np.log(n).mean()
    bent = fit_curvature(n, np.exp(-0.1 * x - 0.01 * x ** 2))
    assert bent.change == pytest.approx(0.02 * math.log(100))
    assert local_exponents([1e4, 1e5], [2.0, 2.0 * 10 ** -0.1]) == pytest.approx([0.1])


def test_a_floor_is_recovered_from_a_saturating_curve_and_none_from_a_power_law():
    rng = np.random.default_rng(0)
    n = np.repeat([3.5e4, 7e4, 1.2e5, 2.5e5, 4.4e5], 3)       # the scale lesson's sizes
    covered = []
    for _ in range(50):
        floored = 0.33 + 50 * n ** -0.5 * np.exp(rng.normal(0, 0.01, n.size))
        fit = fit_with_floor(n, floored)
        covered.append(fit.floor_interval[0] < 0.33 < fit.floor_interval[1])
        assert fit.r_squared > fit_power_law(n, floored).r_squared
    assert np.mean(covered) >= 0.85                            # a 95% interval, 50 draws
    pure = fit_with_floor(n, 4.0 * n ** -0.1 * np.exp(rng.normal(0, 0.02, n.size)))
    assert pure.floor_interval[0] <= 0 < pure.floor_interval[1]
    exact = fit_with_floor(n, 0.3 + 20 * n ** -0.4)
    assert exact.floor == pytest.approx(0.3, abs=1e-4)
    assert exact.exponent == pytest.approx(0.4, abs=1e-3)
    assert exact.predict(1e5) == pytest.approx(0.3 + 20 * 1e5 ** -0.4, rel=1e-4)


def test_the_scale_pages_floor_sentence_flips_with_the_runs():
    from tfstudio.experiments.lessons.scale import floor_sentence
    n = [35_328, 71_424, 119_808, 253_440, 436_224]
    # this stop's 4x run: the means level off at 0.34
    levelled = floor_sentence(n, [0.397, 0.367, 0.347, 0.341, 0.336])
    assert "The losses level off toward 0.33" in levelled and "floor 95% interval" in levelled
    straight = floor_sentence(n, [4.0 * x ** -0.1 for x in n][:4] + [4.0 * 436_224 ** -0.1])
    assert "these runs show no floor" in straight
    assert floor_sentence(n[:2], [0.5, 0.4]).startswith("No fit with a floor: a floor needs")
