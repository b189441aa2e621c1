"""The explorers of notebooks 12–14: each redraw shows what the library computes for the sliders'
values (the Gaussian σ and δ(ε), the composed totals, AboveThreshold's exact first-⊤ distribution next
to its sampled runs), with a described chart."""
from __future__ import annotations

import numpy as np
import pytest

from dpexplore.composition import composed_epsilon
from dpexplore.mechanisms import gaussian_delta, gaussian_scale
from dpexplore.svt import above_threshold_probabilities
from dpexplore.widgets.composition import CompositionExplorer
from dpexplore.widgets.gaussian import GaussianExplorer
from dpexplore.widgets.svt import SparseVectorExplorer


def _described(chart) -> str:
    text = chart.to_dict()["description"]
    assert "Take-away" in text
    return text


def test_gaussian_explorer_draws_the_analytic_sigma_and_its_delta():
    ex = GaussianExplorer(epsilon=1.0, delta=1e-5)
    for eps, delta, sens in [(0.5, 1e-3, 1.0), (2.0, 1e-7, 3.0)]:
        ex.delta.value, ex.sensitivity.value, ex.epsilon.value = delta, sens, eps
        eps, delta = ex.epsilon.value, ex.delta.value          # as the sliders snapped them
        sigma = gaussian_scale(epsilon=eps, delta=delta, sensitivity=sens)
        assert ex.areas["delta"] == pytest.approx(gaussian_delta(sigma=sigma, epsilon=eps, sensitivity=sens))
        assert ex.areas["delta"] <= delta * (1 + 1e-9) < ex.areas["tail"]
        assert f"{sigma:.4g}" in ex.summary.value
        assert ("not valid" in ex.summary.value) == (eps >= 1)
        assert f"{sigma:.3g}" in _described(ex.chart)


def test_composition_explorer_reads_the_library_totals_at_k():
    ex = CompositionExplorer(epsilon=0.1, delta=1e-6, k=45)
    ex.k.value = 300
    row = composed_epsilon(ex.epsilon.value, [300], delta=ex.delta.value).iloc[0]
    assert ex.table.set_index("k").loc[300].to_dict() == pytest.approx(row.drop("k").to_dict())
    assert "zCDP" in ex.summary.value.split("the smallest")[1]
    assert "k = 300" in _described(ex.chart)
    ex.epsilon.value, ex.k.value = 1.0, 10
    assert "basic" in ex.summary.value.split("the smallest")[1]      # a few large steps: kε is the smallest


def test_sparse_vector_explorer_samples_match_the_exact_distribution():
    queries = [40.0, 55.0, 48.0, 62.0, 51.0]
    ex = SparseVectorExplorer(queries, threshold=50.0, epsilon=0.5, names=list("abcde"), n_runs=4_000)
    ex.threshold.value = 53.0
    exact = above_threshold_probabilities(queries, ex.threshold.value, epsilon=ex.epsilon.value)
    np.testing.assert_allclose(ex.exact, exact)
    assert ex.sampled.sum() == pytest.approx(1.0)
    # 4,000 runs: every share within 4 standard errors of its exact probability
    assert np.all(np.abs(ex.sampled - exact) <= 4 * np.sqrt(exact * (1 - exact) / 4_000) + 1e-3)
    top = int(np.argmax(exact))
    assert f"likeliest outcome is {'abcde'[top]}: {queries[top]:g}" in _described(ex.chart)
