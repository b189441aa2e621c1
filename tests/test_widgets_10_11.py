"""The explorers and charts of notebooks 10 and 11: each redraw shows what the library computes for
the sliders' values (the cached reconstruction runs of the chosen setting, the membership attack's
ROC curves under the ε-DP limit, the exact errors of randomized response and of the Laplace count
next to simulated releases), with a described chart."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpexplore.attacks import membership_bound
from dpexplore.mechanisms import laplace_variance, randomized_response_variance
from dpexplore.plots import attacks as aplots
from dpexplore.plots import local_dp as lplots
from dpexplore.widgets.attacks import MembershipExplorer, ReconstructionExplorer, dp_models
from dpexplore.widgets.local_dp import LocalCentralExplorer


def _described(chart) -> str:
    text = chart.to_dict()["description"]
    assert "Take-away" in text
    return text


def _runs() -> pd.DataFrame:
    """A small grid in the cached file's format: three settings, three runs each."""
    rng = np.random.default_rng(0)
    secret = rng.integers(0, 2, 20)
    rows = []
    for k in (40, 80):
        for e in (0, 5):
            for rep in range(3):
                guess = np.where(rng.random(20) < (0.05 if e == 0 else 0.3), 1 - secret, secret)
                rows.append({"n_queries": k, "noise": e, "rep": rep, "rate": float(np.mean(guess == secret)),
                             "guess": " ".join(map(str, guess)) if rep == 0 else np.nan,
                             "secret": " ".join(map(str, secret)) if rep == 0 else np.nan})
    return pd.DataFrame(rows)


def test_reconstruction_summary_and_explorer_read_the_cached_runs():
    runs = _runs()
    summary = aplots.reconstruction_summary(runs)
    assert len(summary) == 4 and (summary["runs"] == 3).all()
    ex = ReconstructionExplorer(runs, n_queries=40, noise=0)
    for k, e in [(80, 5.0), (40, 5.0), (80, 0.0)]:
        ex.queries.value, ex.noise.value = k, e
        cell = runs[(runs.n_queries == k) & (runs.noise == e)]
        assert ex.rate == pytest.approx(cell["rate"].mean())
        assert f"{cell['rate'].mean():.0%}" in ex.summary.value and f"{cell['rate'].min():.0%}" in ex.summary.value
        first = cell[cell.rep == 0].iloc[0]
        right = int(np.sum(np.array(first.guess.split()) == np.array(first.secret.split())))
        text = _described(ex.chart)
        assert f"{right} of 20 secret bits come back right" in text and f"{k} queries at E = {e:g}" in text


def test_reconstruction_chart_marks_root_n_and_refuses_mismatched_bits():
    text = _described(aplots.reconstruction_chart(aplots.reconstruction_summary(_runs()), n_records=400))
    assert "E = √n = 20" in text and "coin flip" in text
    with pytest.raises(ValueError, match="one bit per record"):
        aplots.records_chart([0, 1], [0, 1, 1])


def _membership_data():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(400, 12))
    y = np.where(rng.random(400) < 0.75, X[:, 0], 1 - X[:, 0])
    return (X[:200], y[:200]), (X[200:], y[200:])


def test_membership_explorer_trains_dp_models_per_move_and_draws_the_limit():
    from sklearn.ensemble import RandomForestClassifier

    members, non_members = _membership_data()
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(*members)
    ex = MembershipExplorer(members, non_members, {"forest": forest}, models=dp_models([0, 1]), epsilon=1.0,
                            n_draws=3)
    assert ex.reference_aucs["forest"] > 0.6
    before = list(ex.aucs)
    ex.epsilon.value = 20.0
    assert len(ex.aucs) == 3 and ex.aucs != before
    limit = membership_bound([0.05], epsilon=ex.epsilon.value)[0]
    assert f"the ε-DP limit allows {limit:.0%}" in ex.summary.value
    spec = ex.chart.to_dict()
    assert "ε-DP limit at ε = 20" in spec["description"]
    ex.model.value = "DP logistic regression"
    assert "DP logistic regression at ε = 20" in _described(ex.chart)


def test_membership_chart_draws_the_limit_only_when_asked():
    curves = aplots.roc_frame({"m": [pd.DataFrame({"fpr": np.linspace(0, 1, 500), "tpr": np.linspace(0, 1, 500)})]},
                              points=50)
    assert len(curves) == 50 and curves[["fpr", "tpr"]].iloc[[0, -1]].to_numpy().tolist() == [[0, 0], [1, 1]]
    assert "ε-DP limit" not in aplots.membership_chart(curves).to_dict()["description"]
    assert "ε-DP limit at ε = 0.5" in aplots.membership_chart(curves, epsilon=0.5).to_dict()["description"]


def test_error_frame_is_the_closed_form_of_both_models():
    frame = lplots.error_frame([100, 10_000], epsilon=0.5).set_index(["model", "n"])["sd"]
    for n in (100, 10_000):
        assert frame[(lplots.LOCAL, n)] == pytest.approx(math.sqrt(randomized_response_variance(n, epsilon=0.5)))
        assert frame[(lplots.CENTRAL, n)] == pytest.approx(math.sqrt(laplace_variance(epsilon=0.5)) / n)
    # the local/central ratio grows like √n
    ratio = frame.xs(lplots.LOCAL) / frame.xs(lplots.CENTRAL)
    assert ratio[10_000] / ratio[100] == pytest.approx(10.0)


def test_local_central_explorer_releases_match_the_exact_errors():
    answers = (np.arange(5_000) % 4 == 0).astype(int)
    ex = LocalCentralExplorer(answers, epsilon=1.0, n=1_000, repeats=400)
    assert ex.n.min == 2 and ex.n.max == pytest.approx(math.log10(5_000))
    estimates = ex.releases()
    exact = lplots.error_frame([1_000], epsilon=1.0).set_index("model")["sd"]
    for model, values in estimates.items():
        assert values.shape == (400,)
        assert np.std(values) == pytest.approx(exact[model], rel=0.15)      # 400 releases: sd within 15 %
        assert abs(np.mean(values) - ex.answers[:1_000].mean()) < 4 * exact[model] / math.sqrt(400) + 1e-12
    assert ex.ratio == pytest.approx(exact[lplots.LOCAL] / exact[lplots.CENTRAL])
    ex.n.value = 3_000
    assert "n = 3,000" in ex.summary.value and "n = 3,000" in _described(ex.chart)
    ex.epsilon.value = 0.2
    exact = lplots.error_frame([3_000], epsilon=ex.epsilon.value).set_index("model")["sd"]
    assert ex.ratio == pytest.approx(exact[lplots.LOCAL] / exact[lplots.CENTRAL])
