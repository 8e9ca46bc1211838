"""The power-law fit against data made with a known exponent."""
import math

import numpy as np
import pytest

from tfstudio.experiments.course.scale import fit_power_law, t975


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
