"""Accuracy before release (dpexplore.accuracy), its chart and its explorer (notebook 01)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.accuracy import epsilon_for_accuracy, exceedance_probability, laplace_accuracy
from dpexplore.mechanisms import laplace


@pytest.mark.parametrize("epsilon, sensitivity, alpha", [(1.0, 1.0, 0.05), (0.1, 3.0, 0.01), (2.0, 0.5, 0.3)])
def test_bound_is_b_ln_one_over_alpha_and_its_inverse_prices_it(epsilon, sensitivity, alpha):
    bound = laplace_accuracy(epsilon, sensitivity, alpha)
    assert bound == pytest.approx(sensitivity / epsilon * math.log(1 / alpha), rel=1e-12)
    assert epsilon_for_accuracy(bound, sensitivity, alpha) == pytest.approx(epsilon, rel=1e-12)
    assert exceedance_probability(bound, epsilon, sensitivity) == pytest.approx(alpha, rel=1e-12)


def test_bound_grows_as_epsilon_or_alpha_shrink():
    assert laplace_accuracy(0.5, 1, 0.05) == pytest.approx(2 * laplace_accuracy(1.0, 1, 0.05))
    assert laplace_accuracy(1.0, 1, 0.005) - laplace_accuracy(1.0, 1, 0.05) == pytest.approx(math.log(10))


@pytest.mark.parametrize("alpha", [0.2, 0.05, 0.01])
def test_the_package_sampler_misses_the_bound_alpha_of_the_time(alpha):
    n, epsilon, sensitivity = 200_000, 0.7, 2.0
    noise = laplace(np.zeros(n), epsilon=epsilon, sensitivity=sensitivity, random_state=np.random.default_rng(5))
    share = np.mean(np.abs(noise) >= laplace_accuracy(epsilon, sensitivity, alpha))
    assert abs(share - alpha) < 5 * math.sqrt(alpha * (1 - alpha) / n)   # five standard errors


@pytest.mark.parametrize("call, match", [
    (lambda: laplace_accuracy(0.0, 1.0, 0.05), "epsilon must be a finite number > 0"),
    (lambda: laplace_accuracy(1.0, -1.0, 0.05), "sensitivity must be a finite number > 0"),
    (lambda: laplace_accuracy(1.0, 1.0, 0.0), "alpha must lie strictly between 0 and 1"),
    (lambda: laplace_accuracy(1.0, 1.0, float("nan")), "alpha must lie strictly between 0 and 1"),
    (lambda: epsilon_for_accuracy(-2.0), "accuracy must be a finite number > 0"),
    (lambda: epsilon_for_accuracy(1.0, alpha=1.5), "alpha must lie strictly between 0 and 1"),
    (lambda: exceedance_probability(float("inf"), 1.0), "error must be a finite number > 0"),
])
def test_bad_input_is_refused_with_the_rule(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_alpha_must_be_a_number():
    with pytest.raises(TypeError, match="alpha must be a real number"):
        laplace_accuracy(1.0, 1.0, "0.05")


def test_chart_marks_the_bound_and_fills_alpha_of_the_mass():
    from dpexplore.plots.mechanisms import accuracy_chart, noise_frames

    noise = laplace(np.zeros(20_000), epsilon=0.5, random_state=np.random.default_rng(0))
    hist, theory = noise_frames({"Laplace": noise}, epsilon=0.5, sensitivity=1.0)
    spec = accuracy_chart(hist, theory, epsilon=0.5, sensitivity=1.0, alpha=0.05, exceeded=0.051).to_dict()
    bound = laplace_accuracy(0.5, 1.0, 0.05)
    rows = [r for data in spec["datasets"].values() for r in data]
    rules = sorted({r["x"] for r in rows if "label" in r})
    assert sorted(rules) == pytest.approx([-bound, bound], rel=1e-3)
    tails = [r for r in rows if "side" in r]
    assert min(abs(r["x"]) for r in tails) == pytest.approx(bound, rel=1e-3)
    assert "5.1%" in spec["title"] and f"{bound:.3g}" in spec["description"]


def test_explorer_reports_the_bound_and_the_share_beyond_it():
    from dpexplore.widgets.mechanisms import AccuracyExplorer

    ex = AccuracyExplorer(epsilon=1.0, sensitivity=1, alpha=0.05, n_samples=40_000, random_state=3)
    assert ex.bound == pytest.approx(math.log(20))
    assert abs(ex.exceeded - 0.05) < 5 * math.sqrt(0.05 * 0.95 / 40_000)
    first = ex.chart.to_dict()
    ex.epsilon.value = 0.5                     # the bound doubles; the share beyond it does not move
    assert ex.bound == pytest.approx(2 * math.log(20))
    share = ex.exceeded
    ex.sensitivity.value = 3
    assert ex.exceeded == share and ex.bound == pytest.approx(6 * math.log(20))
    ex.alpha.value = 0.01
    assert ex.bound == pytest.approx(6 * math.log(100)) and ex.exceeded < share
    assert ex.chart.to_dict() != first
    assert f"{ex.bound:.3g}" in ex.summary.value and "ε = " in ex.summary.value
