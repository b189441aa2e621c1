"""Explorers and charts of notebooks 04, 05 and 06 (they respond, read well, and the first example works)."""
from __future__ import annotations

import warnings

import altair as alt
import numpy as np
import pandas as pd
import pytest
from scipy import stats



def _spec(output) -> dict:
    (item,) = output.outputs
    (mime,) = [m for m in item["data"] if "vegalite" in m]
    assert mime == "application/vnd.vegalite.v5+json"
    return item["data"][mime]


def _walk(spec, key):
    """Every value of ``key`` anywhere in a nested spec."""
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(spec, list):
        for v in spec:
            yield from _walk(v, key)


def _sparse(n=600, d=24, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.05, 0.6, d)
    X = pd.DataFrame((rng.random((n, d)) < p).astype(int), columns=[f"f{j}" for j in range(d)])
    y = (X.iloc[:, -1] | (rng.random(n) < 0.2)).astype(int).to_numpy()
    return X, y


# --------------------------------------------------------------------------- 05: feature selection explorer
def test_05_selection_bars_move_with_epsilon():
    """Item 7: the picture (not only a count in the text) changes when ε moves: each setting
    shows several draws (bars = mean, ticks = draws) and how many features they kept."""
    from dpexplore.widgets.roc import FeatureSelectionExplorer

    X, y = _sparse()
    ex = FeatureSelectionExplorer(X[:400], y[:400], X[400:].reset_index(drop=True), y[400:], max_ones=24,
                                  classes=[0, 1])
    ex.tau.value = 150.0
    ex.epsilon.value = 0.001
    low = _spec(ex.output)
    ex.epsilon.value = 1.0
    high = _spec(ex.output)
    assert low != high
    assert len(ex.draws()) == ex.n_draws == 4
    for control in (ex.epsilon, ex.tau, ex.k):
        assert control.continuous_update is False


def test_05_selection_draws_follow_the_selectors_distribution():
    """The explorer's draws on precomputed TC = the selectors' own mechanisms (same distribution)."""
    from dpexplore.select.scores import total_count
    from dpexplore.widgets.roc import FeatureSelectionExplorer

    X, y = _sparse(n=500, d=12, seed=3)
    ex = FeatureSelectionExplorer(X[:400], y[:400], X[400:].reset_index(drop=True), y[400:], max_ones=12,
                                  classes=[0, 1])
    assert ex._cap_is_noop
    tc = total_count(X[:400])
    ex.tau.value = float(np.median(tc))
    ex.epsilon.value = 0.1
    draws = np.array([ex.support(d) for d in range(600)])
    scale = 12 / 0.1      # score perturbation: Lap(s/ε) with s = max_ones changed scores
    expected = stats.laplace.sf(ex.tau.value - tc, scale=scale)
    np.testing.assert_allclose(draws.mean(axis=0), expected, atol=0.08)
    # the estimator path (used when a row exceeds the cap) gives the same law
    sel = [ex.selector(d).fit(ex.X_train, ex.y_train).get_support() for d in range(300)]
    np.testing.assert_allclose(np.mean(sel, axis=0), expected, atol=0.1)
    # exponential top-k keeps exactly k; the sparse vector at most its cutoff
    ex.method.value = "em"
    ex.k.value = 3
    assert ex.support(0).sum() == 3
    ex.method.value = "svt"
    assert all(ex.support(d).sum() <= 3 for d in range(20))


def test_05_selection_on_precomputed_scores_is_the_selectors_fit():
    """The explorer's precomputed-TC path is the selector's own fit_scores: draw for draw the fit."""
    from dpexplore.select.stoddard import NotDifferentiallyPrivateWarning
    from dpexplore.widgets.roc import FeatureSelectionExplorer

    X, y = _sparse(n=500, d=12, seed=3)
    ex = FeatureSelectionExplorer(X[:400], y[:400], X[400:].reset_index(drop=True), y[400:], max_ones=12,
                                  classes=[0, 1])
    assert ex._cap_is_noop
    ex.epsilon.value = 0.3
    for method, rule in (("sp", "threshold"), ("sp", "top_k"), ("em", "top_k"), ("svt", "top_k"),
                         ("ptt", "top_k")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            ex.method.value, ex.rule.value = method, rule
            for draw in range(4):
                fitted = ex.selector(draw).fit(ex.X_train, ex.y_train).get_support()
                np.testing.assert_array_equal(ex.support(draw), fitted)


def test_05_fit_cache_and_weighted_fit_match_a_plain_fit():
    from sklearn.linear_model import LogisticRegression
    from dpexplore.widgets.roc import FeatureSelectionExplorer

    X, y = _sparse(n=500, d=10, seed=5)
    ex = FeatureSelectionExplorer(X[:400], y[:400], X[400:].reset_index(drop=True), y[400:], max_ones=10,
                                  classes=[0, 1])
    support = np.zeros(10, bool)
    support[[2, 5, 9]] = True
    plain = LogisticRegression(max_iter=500).fit(X[:400].loc[:, support], y[:400]).score(
        X[400:].loc[:, support], y[400:])
    assert ex._fit_score(support) == pytest.approx(plain)
    # string labels (e.g. Adult's income classes) work the same
    names = np.array(["<=50K", ">50K"], dtype=object)
    ex_s = FeatureSelectionExplorer(X[:400], names[y[:400]], X[400:].reset_index(drop=True), names[y[400:]],
                                    max_ones=10, classes=list(names))
    assert ex_s._fit_score(support) == pytest.approx(plain)


# --------------------------------------------------------------------------- 05: ROC explorer and chart
def test_05_roc_chart_has_the_true_curve_in_its_legend():
    from dpexplore.plots.roc import TRUE_CURVE, roc_chart, stack_curves

    curve = pd.DataFrame({"fpr": [0, 0.5, 1], "tpr": [0, 0.8, 1]})
    spec = roc_chart(stack_curves({"PriROC": [curve, curve]}, curve)).to_dict()
    domains = [d for d in _walk(spec, "domain") if isinstance(d, list) and TRUE_CURVE in d]
    assert domains and domains[0][0] == TRUE_CURVE
    ranges = [r for r in _walk(spec, "range") if isinstance(r, list) and "black" in r]
    assert ranges


def test_05_roc_explorer_labels_are_short_and_titles_rounded():
    from dpexplore.widgets.roc import PrivateROCExplorer

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.clip(0.3 * y + rng.random(300) * 0.7, 0, 1)
    ex = PrivateROCExplorer(y, s, n_draws=2, classes=[0, 1])
    for control in (ex.epsilon, ex.method, ex.levels, ex.median, ex.split, ex.draws):
        assert len(control.description) <= 18, control.description   # fits the 130 px label column
    assert ex.median.style.button_width == "auto"
    ex.epsilon.value = 10 ** -0.7
    titles = " ".join(str(t) for t in _walk(_spec(ex.output), "title"))
    assert "ε = 0.2" in titles and "0.199" not in titles


# --------------------------------------------------------------------------- 04: thesis explorers and charts
def test_04_noise_charts_have_legends_and_a_labelled_boundary():
    from dpexplore.plots.thesis import lambda_noise_chart, noise_cloud_chart
    from dpexplore.widgets.thesis import LogisticNoiseExplorer

    pts = pd.DataFrame({"x": [0.1, -0.2], "y": [0.3, 0.1], "norm": ["L1: a", "L2: b"]})
    spec = noise_cloud_chart(pts).to_dict()
    assert [c for c in _walk(spec, "color") if isinstance(c, dict) and c.get("legend") is not None]
    lam = pd.DataFrame({"lam": [1.0, 10.0], "noise_scale": [3.0, 2.0], "method": ["a", "a"]})
    text = [m for m in _walk(lambda_noise_chart(lam, 4.876).to_dict(), "mark")
            if m == "text" or (isinstance(m, dict) and m.get("type") == "text")]
    assert text
    ex = LogisticNoiseExplorer(n_points=50)
    ex.epsilon.value = 10 ** -0.7
    titles = " ".join(str(t) for t in _walk(_spec(ex.output), "title"))
    assert "ε = 0.2" in titles and "0.199526" not in titles
    alt.vconcat(noise_cloud_chart(pts)).to_dict(validate=True)


def test_04_accuracy_curve_log_axis_labels_do_not_overlap():
    from dpexplore.plots.thesis import accuracy_curve_chart

    res = pd.DataFrame({"epsilon": [0.01, 0.03, 0.1], "pipeline": "p", "median": 0.8, "q25": 0.79, "q75": 0.81})
    spec = accuracy_curve_chart(res, x="epsilon", log_x=True).to_dict(validate=True)
    axes = [a for a in _walk(spec, "axis") if isinstance(a, dict) and "values" in a]
    assert axes and axes[0]["values"] == [0.01, 0.03, 0.1] and axes[0]["labelOverlap"] == "greedy"
    linear = res.rename(columns={"epsilon": "k"}).assign(k=[1, 5, 10])
    accuracy_curve_chart(linear, pd.DataFrame({"baseline": ["m"], "accuracy": [0.75]})).to_dict(validate=True)


def test_04_explorer_first_draw_beats_the_majority_on_adult():
    """First example works: the default setting (ε = 0.1, k = 5) beats the majority class."""
    from dpexplore.datasets import load_adult, train_test_split
    from dpexplore.models.naive_bayes import Binarizer
    from dpexplore.widgets.thesis import FeatureSelectionNBExplorer

    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
    b = Binarizer(schema).fit()
    ytr = (y_tr == schema.classes[1]).astype(int).to_numpy()
    yte = (y_te == schema.classes[1]).astype(int).to_numpy()
    ex = FeatureSelectionNBExplorer(b.transform(X_tr), ytr, b.transform(X_te), yte, n_min=30_000,
                                    classes=[0, 1], repeats=5, random_state=0)
    assert ex.k.value == 5 and ex.epsilon.value == pytest.approx(0.1)
    assert "beats the majority" in ex.summary.value
    for control in (ex.epsilon, ex.k, ex.split, ex.clamp):
        assert control.continuous_update is False
    cached = len(ex._frequency_cache)
    ex.update()                      # same setting: the stability view is not recomputed
    assert len(ex._frequency_cache) == cached


# --------------------------------------------------------------------------- 06: projected histograms
def test_06_histogram_chart_is_horizontal_and_readable():
    from dpexplore.plots.projected import histogram_chart

    table = pd.DataFrame({"cell": [f"c{i}" for i in range(27)], "class": "a", "true_count": 3.0,
                          "noisy_count": np.r_[np.full(20, 4.0), np.full(7, np.nan)],
                          "status": ["kept"] * 20 + ["dropped"] * 7})
    spec = histogram_chart(table, 2.5).to_dict(validate=True)
    ys = [e for e in _walk(spec, "y") if isinstance(e, dict) and e.get("field") == "key"]
    assert ys and ys[0]["axis"]["labels"] is True and ys[0]["axis"].get("labelAngle") is None
    xs = [e for e in _walk(spec, "x") if isinstance(e, dict) and e.get("field") == "shown"]
    assert xs


def test_06_explorer_sliders_refit_on_release():
    from dpexplore.datasets import load_iris
    from dpexplore.widgets.projected import selection_explorer

    iris, schema = load_iris()
    X, y = schema.split(iris)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = selection_explorer(X, y, schema, n_bins="projected")
    sliders = [w for row in box.children[:2] for w in row.children if hasattr(w, "continuous_update")]
    assert sliders and all(w.continuous_update is False for w in sliders if w.description != "bins")
    # the redraw is one state update of the Output (two charts), the summary in an HTML widget
    text, out = box.children[2], box.children[3]
    before = (text.value, out.outputs)
    eps = box.children[0].children[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps.value = 0.2
    assert "selected (in order)" in text.value and (text.value, out.outputs) != before
    assert len(out.outputs) == 2 and all("application/vnd.vegalite.v5+json" in o["data"] for o in out.outputs)


def test_06_auc_explorer_swaps_precomputed_views():
    from dpexplore.widgets.projected import auc_explorer

    sweeps = pd.DataFrame({"dataset": "Iris", "parameter": ["epsilon"] * 2 + ["k"] * 2, "value": [0.1, 1, 1, 2],
                           "method": "projected histogram", "fold": 0, "auc": [0.6, 0.9, 0.8, 0.85]})
    box = auc_explorer(sweeps)
    dropdown, out = box.children
    first = out.outputs
    dropdown.value = "k"
    assert out.outputs != first and len(out.outputs) == 1
