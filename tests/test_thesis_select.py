"""Thesis feature selection: k-subset sampler usage, scores, the non-DP iterative selector, errors."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare
from sklearn.utils.estimator_checks import (check_get_params_invariance, check_no_attributes_set_in_init,
                                            check_parameters_default_constructible, check_set_params)

from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.mechanisms import exponential_subset_inclusion
from dpexplore.select import thesis
from dpexplore.select.scores import information_gain, mutual_information_sensitivity, purity_index
from dpexplore.select.thesis import (IterativeSelector, NotDifferentiallyPrivateWarning, PrivateKSubsetSelector,
                                     audit_iterative_vs_subset, iterative_select,
                                     iterative_selection_probabilities, thesis_scores)


CL = [0, 1]     # the declared (public) classes used throughout


def _data(n: int = 400, d: int = 6, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.linspace(0.5, 0.95, d)     # feature j agrees with y with probability p_j
    X = np.where(rng.random((n, d)) < p, y[:, None], 1 - y[:, None])
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(d)]), y


def test_count_score_matches_thesis_fixture():
    # XWindowsDoc (thesis Tables A.2/A.3): balanced classes of 450; windows on-counts 56 vs 288 → 232; xterm 40 vs 0 → 40
    n_c = 450
    y = np.array([1] * n_c + [0] * n_c)
    windows = np.r_[np.ones(56), np.zeros(n_c - 56), np.ones(288), np.zeros(n_c - 288)]
    xterm = np.r_[np.ones(40), np.zeros(n_c - 40), np.zeros(n_c)]
    q = thesis_scores(np.column_stack([windows, xterm]).astype(int), y, "count")
    np.testing.assert_array_equal(q, [232, 40])
    np.testing.assert_allclose(thesis_scores(np.column_stack([windows, xterm]).astype(int), y, "mi"),
                               information_gain(np.column_stack([windows, xterm]).astype(int), y, base=2))


def test_selector_uses_the_subset_sampler_with_sensitivity_k(monkeypatch):
    X, y = _data()
    calls = []
    real = thesis.exponential_subset

    def spy(scores, k, *, epsilon, sensitivity, random_state=None):
        calls.append((np.array(scores), k, epsilon, sensitivity))
        return real(scores, k, epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)

    monkeypatch.setattr(thesis, "exponential_subset", spy)
    sel = PrivateKSubsetSelector(k=3, epsilon=0.7, random_state=0, classes=CL).fit(X, y)
    assert len(calls) == 1
    scores, k, eps, sens = calls[0]
    np.testing.assert_array_equal(scores, purity_index(X, y))
    assert (k, eps, sens) == (3, 0.7, 3.0)          # utility of a k-subset: sensitivity k·Δq
    assert sel.get_support().sum() == 3
    # the teaching view recomputes the exact probabilities from the data passed in
    np.testing.assert_allclose(sel.inclusion_probabilities(X, y),
                               exponential_subset_inclusion(scores, 3, epsilon=0.7, sensitivity=3.0))
    np.testing.assert_array_equal(sel.true_scores(X, y), scores)


def test_selection_frequencies_match_exact_subset_probabilities():
    # tiny case: the selector's distribution over the C(5, 2) subsets vs exact enumeration
    # (the same distribution the enumeration test below checks for ε-DP: fit samples it)
    X, y = _data(n=60, d=5, seed=1)
    q = purity_index(X, y)
    eps, k = 0.5, 2
    subsets = list(itertools.combinations(range(5), k))
    w = np.array([np.exp(eps * q[list(s)].sum() / (2 * k)) for s in subsets])
    expected = w / w.sum()
    exact = PrivateKSubsetSelector(k=k, epsilon=eps, classes=CL).subset_probabilities(X, y)
    np.testing.assert_allclose(exact.loc[subsets].to_numpy(), expected)
    rng = np.random.default_rng(3)
    n_draws = 4000
    counts = dict.fromkeys(subsets, 0)
    for _ in range(n_draws):
        sel = PrivateKSubsetSelector(k=k, epsilon=eps, random_state=rng, classes=CL).fit(X, y)
        counts[tuple(sel.get_support(indices=True))] += 1
    observed = np.array([counts[s] for s in subsets])
    keep = expected * n_draws >= 5
    f_exp = np.r_[expected[keep], expected[~keep].sum()] * n_draws
    f_obs = np.r_[observed[keep], observed[~keep].sum()]
    if f_exp[-1] == 0:
        f_exp, f_obs = f_exp[:-1], f_obs[:-1]
    assert chisquare(f_obs, f_exp).pvalue > 1e-4


def test_mi_score_sensitivity_comes_from_the_declared_n_min():
    X, y = _data(n=500)
    sel = PrivateKSubsetSelector(k=2, epsilon=1.0, feature_score="mi", n_min=400, random_state=0, classes=CL).fit(X, y)
    assert sel.score_sensitivity_ == pytest.approx(mutual_information_sensitivity(400, base=2))
    assert sel.subset_sensitivity_ == pytest.approx(2 * sel.score_sensitivity_)
    # n_min=2 is the bound that holds for every N: ΔI(2) = 1 bit, the whole range of binary MI
    assert thesis.score_sensitivity("mi", n_min=2) == pytest.approx(1.0)
    assert information_gain(X.to_numpy(), y, base=2).max() <= 1.0


@pytest.mark.parametrize("Selector", [PrivateKSubsetSelector, IterativeSelector])
def test_mi_without_n_min_is_refused_the_same_way_for_every_data_set(Selector):
    """The refusal depends on the public parameters only: identical message for neighbours, no
    number of records in it, nothing spent, no PrivacyLeakWarning (the private N is never used)."""
    messages = []
    for n in (300, 301):
        X, y = _data(n=n)
        acc = BudgetAccountant(5.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            with pytest.raises(ValueError, match="needs n_min") as err:
                Selector(k=2, epsilon=1.0, feature_score="mi", classes=CL, accountant=acc).fit(X, y)
        assert acc.ledger.empty
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "300" not in messages[0] and "301" not in messages[0]
    for bad in (1, 2.5, True, "400"):
        with pytest.raises(ValueError, match="n_min must be an integer ≥ 2"):
            Selector(k=2, epsilon=1.0, feature_score="mi", n_min=bad, classes=CL).fit(X, y)
    Selector(k=2, epsilon=1.0, feature_score="count", n_min=None, classes=CL, random_state=0).fit(X, y)


def test_n_min_above_the_true_count_is_not_refused():
    # a refusal when N < n_min would tell neighbours apart: the declared bound is used as stated
    for n in (40, 41):
        X, y = _data(n=n)
        acc = BudgetAccountant(1.0)
        sel = PrivateKSubsetSelector(k=2, epsilon=1.0, feature_score="mi", n_min=10_000, accountant=acc,
                                     classes=CL, random_state=0).fit(X, y)
        assert sel.score_sensitivity_ == pytest.approx(mutual_information_sensitivity(10_000, base=2))
        assert sel.get_support().sum() == 2 and acc.spent == pytest.approx(1.0)


def test_noisy_scores_mechanism_and_strong_signal():
    X, y = _data(n=2000, d=6)
    acc = BudgetAccountant(2.0)
    sel = PrivateKSubsetSelector(k=2, epsilon=2.0, mechanism="noisy_scores", accountant=acc,
                                 random_state=0, classes=CL).fit(X, y)
    assert sel.get_support().sum() == 2
    assert "Alg. 3" in acc.ledger["label"].iloc[0]
    # at ε = 2 with count scores in the hundreds, the subset sampler picks the two best features
    sub = PrivateKSubsetSelector(k=2, epsilon=2.0, random_state=0, classes=CL).fit(X, y)
    assert set(sub.get_support(indices=True)) == {4, 5}


def test_transform_support_names_and_ledger():
    X, y = _data()
    acc = BudgetAccountant(1.0)
    sel = PrivateKSubsetSelector(k=2, epsilon=0.4, accountant=acc, random_state=0, classes=CL).fit(X, y)
    out = sel.transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(sel.get_feature_names_out())
    assert sel.transform(X.to_numpy()).shape == (len(X), 2)
    assert acc.spent == pytest.approx(0.4)
    assert list(sel.ledger_["epsilon"]) == [0.4]
    with pytest.raises(ValueError):
        sel.transform(X.iloc[:, :3])


@pytest.mark.parametrize("kwargs, X_fn, y_fn, match", [
    ({"epsilon": 0}, None, None, "epsilon"),
    ({"epsilon": float("nan")}, None, None, "epsilon"),
    ({"k": 0}, None, None, "k must"),
    ({"k": 7}, None, None, "exceeds"),
    ({"feature_score": "gini"}, None, None, "feature_score"),
    ({}, lambda X: X.assign(f0=X["f0"] * 2), None, "0/1"),
    ({}, lambda X: X.astype(float).assign(f0=np.nan), None, "NaN"),
    ({"classes": None}, None, lambda y: np.zeros_like(y), "only 1 class"),
    ({}, None, lambda y: np.where(y == 1, 2, 0), "not among the declared classes"),
    ({"classes": "01"}, None, None, "list of labels"),
    ({"binarize": "half"}, None, None, "binarize"),
    ({}, None, lambda y: y[:-1], "inconsistent numbers of samples"),
    ({}, lambda X: X.iloc[:0], lambda y: y[:0], "0 sample"),
    ({"classes": None}, None, lambda y: y + 0.5, "Unknown label type"),
    ({}, None, lambda y: np.column_stack([y, y]), "1d array"),
])
def test_bad_input_raises_before_any_spend(kwargs, X_fn, y_fn, match):
    X, y = _data()
    X0 = X.copy()
    X = X_fn(X) if X_fn else X
    y = y_fn(y) if y_fn else y
    acc = BudgetAccountant(5.0)
    params = {"k": 2, "epsilon": 0.5, "classes": CL, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        PrivateKSubsetSelector(**params, accountant=acc).fit(X, y)
    assert acc.ledger.empty
    if X_fn is None:
        pd.testing.assert_frame_equal(X, X0)   # inputs never mutated


def test_budget_exceeded_before_spend():
    X, y = _data()
    acc = BudgetAccountant(0.1)
    with pytest.raises(BudgetExceededError):
        PrivateKSubsetSelector(k=2, epsilon=0.5, accountant=acc, classes=CL).fit(X, y)
    assert acc.ledger.empty


def test_iterative_selector_is_labelled_not_dp():
    X, y = _data()
    with pytest.warns(NotDifferentiallyPrivateWarning):
        sel = IterativeSelector(k=3, epsilon=0.3, random_state=0, classes=CL).fit(X, y)
    assert sel.get_support().sum() == 3
    assert sel.n_steps_ >= 3
    assert sel.epsilon_composed_ == pytest.approx(sel.n_steps_ * 0.3 / 3) and sel.epsilon_composed_ >= 0.3 - 1e-12
    assert "NOT DP" in sel.ledger_["label"].iloc[0]


def test_iterative_exact_probabilities_match_sampling():
    q = np.array([5.0, 5.0, 3.0, 6.0])
    p = iterative_selection_probabilities(q, epsilon=0.8, sensitivity=1.0)
    rng = np.random.default_rng(0)
    n = 20_000
    draws = np.array([iterative_select(q, 1, epsilon=0.8, sensitivity=1.0, random_state=rng)[0][0]
                      for _ in range(n)])
    observed = np.bincount(draws, minlength=4)
    assert chisquare(observed, p * n).pvalue > 1e-4


def test_audit_iterative_is_not_dp_but_subset_sampler_is():
    table = audit_iterative_vs_subset(epsilon=0.1, n_samples=5000, random_state=0).set_index("selector")
    it, em = table.iloc[0], table.iloc[1]
    assert it["exact_loss"] > 0.5 and it["violates"]          # exact loss ≈ 0.73 ≫ 0.1
    assert em["exact_loss"] <= 0.1 and not em["violates"]


@pytest.mark.parametrize("Est", [PrivateKSubsetSelector, IterativeSelector])
@pytest.mark.parametrize("check", [check_parameters_default_constructible, check_get_params_invariance,
                                   check_set_params, check_no_attributes_set_in_init])
def test_sklearn_api_checks(Est, check):
    check(Est.__name__, Est())


def test_widgets_and_plots_build_on_small_data():
    import altair as alt

    from dpexplore.widgets.thesis import FeatureSelectionNBExplorer, LogisticNoiseExplorer

    X, y = _data(n=600, d=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)     # declared classes: nothing read from y
        ex = FeatureSelectionNBExplorer(X.iloc[:400], y[:400], X.iloc[400:], y[400:], n_min=300, repeats=5,
                                        classes=[0, 1])
    with pytest.warns(PrivacyLeakWarning, match="class labels from the private y"):
        FeatureSelectionNBExplorer(X.iloc[:400], y[:400], X.iloc[400:], y[400:], n_min=300, repeats=2)
    state = ex.state()
    assert state["probability"].sum() == pytest.approx(ex.k.value if ex.k.value <= 8 else 8)
    assert list(state["ledger"]["charged"].round(12)) == pytest.approx([0.05, 0.05])
    ex.score.value = "mi"          # triggers update with the other score
    ex.k.value = 3
    assert "DP-NB test accuracy" in ex.summary.value
    lr = LogisticNoiseExplorer(n_points=50)
    lr.epsilon.value = 1.0
    curves = lr.curves(0.1)
    assert set(curves["method"]) == {"output (2/(λε))", "objective (2/ε_obj, divided by the effective λ)"}
    from dpexplore.plots import thesis as plots
    assert isinstance(plots.ledger_chart(state["ledger"]), alt.Chart)


def _log_probs(selector: PrivateKSubsetSelector, X, y) -> pd.Series:
    """log P(S) of every k-subset, from the selector's own calibration (the one fit samples)."""
    return np.log(selector.subset_probabilities(X, y))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_subset_selector_is_exactly_eps_dp_on_neighbours_by_enumeration(k):
    # exact check of ε-DP on the package's own selection distribution: for neighbours X and
    # X + one record, every k-subset's probability under PrivateKSubsetSelector (its scores, its
    # declared sensitivity, its ε) changes by at most e^ε. The sampler in fit draws from exactly
    # this distribution (test_selection_frequencies_match_exact_subset_probabilities).
    eps = 0.8
    sel = PrivateKSubsetSelector(k=k, epsilon=eps, classes=CL)
    rng = np.random.default_rng(k)
    worst = 0.0
    for _ in range(40):
        X, y = _data(n=int(rng.integers(20, 60)), d=6, seed=int(rng.integers(1 << 30)))
        X = X.to_numpy()
        record = rng.integers(0, 2, 6)
        Xn, yn = np.vstack([X, record]), np.append(y, rng.integers(0, 2))
        a, b = _log_probs(sel, X, y), _log_probs(sel, Xn, yn)
        worst = max(worst, float(np.max(np.abs(a - b))))
    assert worst <= eps + 1e-12
    # the worst case for the count score: balanced classes of 20; features 0-2 on in 15 class-1
    # and 5 class-0 records (q = 10); features 3-5 on in every class-0 record (q = 20). One more
    # class-1 record with every feature on lifts q_0..q_2 to 11 and leaves q_3..q_5 alone, so a
    # k-subset's utility moves by k: calibrated to Δq instead of k·Δq (thesis §3.5.5) the
    # selector would lose ≈ k·ε/2 (> ε for k = 3). The package's calibration must hold it to ε.
    y = np.array([1] * 20 + [0] * 20)
    X = np.zeros((40, 6), dtype=int)
    X[:15, :3] = 1
    X[20:25, :3] = 1
    X[20:, 3:] = 1
    Xn, yn = np.vstack([X, np.ones(6, dtype=int)]), np.append(y, 1)
    np.testing.assert_array_equal(sel.true_scores(X, y), [10, 10, 10, 20, 20, 20])
    np.testing.assert_array_equal(sel.true_scores(Xn, yn) - sel.true_scores(X, y), [1, 1, 1, 0, 0, 0])
    loss = float(np.max(np.abs(_log_probs(sel, X, y) - _log_probs(sel, Xn, yn))))
    assert loss <= eps + 1e-12
    # (calibrated to Δq this pair loses ≈ 1.5ε at k = 3; with k·Δq it loses ≈ 0.34ε)


def test_subset_sampler_is_stable_with_huge_count_scores():
    # count scores in the thousands with a large ε: weights far outside float range unless in log space
    rng = np.random.default_rng(0)
    q = rng.integers(0, 30_000, 200).astype(float)
    from dpexplore.mechanisms import exponential_subset
    chosen = exponential_subset(q, 10, epsilon=50.0, sensitivity=10.0, random_state=0)
    np.testing.assert_array_equal(np.sort(chosen), np.sort(np.argsort(-q)[:10]))
    inc = exponential_subset_inclusion(q, 10, epsilon=50.0, sensitivity=10.0)
    assert np.all(np.isfinite(inc)) and inc.sum() == pytest.approx(10)


def test_selector_in_sklearn_pipeline_and_no_mutation():
    from sklearn.pipeline import make_pipeline

    from dpexplore.models.naive_bayes import PrivateNaiveBayes

    X, y = _data(n=600, d=8)
    X0, y0 = X.copy(), y.copy()
    pipe = make_pipeline(PrivateKSubsetSelector(k=3, epsilon=1.0, random_state=0, classes=CL),
                         PrivateNaiveBayes(1.0, random_state=0, classes=CL)).fit(X, y)
    assert pipe.predict(X).shape == (600,)
    assert pipe[0].get_support().sum() == 3 and pipe[-1].n_features_in_ == 3
    out = PrivateKSubsetSelector(k=3, epsilon=1.0, random_state=0, classes=CL).fit_transform(X, y)
    assert out.shape == (600, 3)
    pd.testing.assert_frame_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    # the same seed reproduces the same choice
    a = PrivateKSubsetSelector(k=3, epsilon=0.1, random_state=7, classes=CL).fit(X, y).get_support()
    b = PrivateKSubsetSelector(k=3, epsilon=0.1, random_state=7, classes=CL).fit(X, y).get_support()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("score, mechanism", [("count", "subset"), ("mi", "subset"), ("count", "noisy_scores")])
def test_fit_scores_on_the_true_scores_gives_the_fit(score, mechanism):
    """fit(X, y) = scores + fit_scores: same draws, ledger and released attributes."""
    X, y = _data(n=400, d=8)
    params = dict(k=3, epsilon=0.4, feature_score=score, mechanism=mechanism, n_min=100, classes=CL)
    q = PrivateKSubsetSelector(**params).true_scores(X, y)
    for seed in range(5):
        fitted = PrivateKSubsetSelector(**params, random_state=seed).fit(X, y)
        scored = PrivateKSubsetSelector(**params, random_state=seed).fit_scores(q)
        np.testing.assert_array_equal(scored.get_support(), fitted.get_support())
        pd.testing.assert_frame_equal(scored.ledger_, fitted.ledger_)
        assert scored.score_sensitivity_ == fitted.score_sensitivity_
        assert scored.n_features_in_ == 8 and not hasattr(scored, "feature_names_in_")
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="exceeds"):
        PrivateKSubsetSelector(k=9, accountant=acc).fit_scores(q)
    with pytest.raises(ValueError, match="needs n_min"):
        PrivateKSubsetSelector(k=2, feature_score="mi", accountant=acc).fit_scores(q)
    assert acc.ledger.empty


def test_the_explorer_run_is_select_then_train():
    """FeatureSelectionNBExplorer's private run is one SelectThenTrain fit (k-subset selection, then
    DP-NB on the chosen features): the same subset, NB, accuracy and ledger for the same Generator;
    its teaching view (the exact inclusion probabilities) is the fitted selector's."""
    from dpexplore.models.naive_bayes import PrivateNaiveBayes
    from dpexplore.models.pipeline import SelectThenTrain
    from dpexplore.widgets.thesis import FeatureSelectionNBExplorer

    X, y = _data(n=600, d=8)
    ex = FeatureSelectionNBExplorer(X.iloc[:400], y[:400], X.iloc[400:], y[400:], n_min=300, repeats=3,
                                    classes=[0, 1], random_state=11)
    for score in ("count", "mi"):
        ex.score.value = score
        ex.rng = np.random.default_rng(5)
        state = ex.state()
        k = ex.k.value
        pipe = SelectThenTrain(PrivateKSubsetSelector(k, feature_score=score, n_min=300),
                               PrivateNaiveBayes(clamp_quantile=ex.clamp.value), epsilon=ex.epsilon.value,
                               selection_share=ex.split.value, classes=[0, 1],
                               random_state=np.random.default_rng(5)).fit(ex.Xtr, ex.ytr)
        np.testing.assert_array_equal(state["chosen"], pipe.get_support(indices=True))
        assert state["accuracy"] == pipe.score(ex.Xte, ex.yte)
        np.testing.assert_array_equal(state["nb"].noisy_on_counts_, pipe.model_.noisy_on_counts_)
        assert list(state["ledger"]["charged"]) == list(pipe.ledger_["charged"])
        assert state["ledger"]["label"].iloc[0] == f"feature selection: k-subset EM ({score} score, k={k})"
        probe = PrivateKSubsetSelector(k, pipe.epsilon_selection_, feature_score=score, n_min=300, classes=[0, 1])
        np.testing.assert_allclose(state["probability"], probe.inclusion_probabilities(ex.Xtr, ex.ytr), rtol=1e-12)

