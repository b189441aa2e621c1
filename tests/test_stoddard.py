"""Tests for dpexplore.select.stoddard: SP, EM top-k, sparse vector, and the broken PTT / Cluster."""
from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline

from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.mechanisms import exponential_probabilities
from dpexplore.select.scores import difference_count, purity_index, total_count
from dpexplore.select.thesis import IterativeSelector, PrivateKSubsetSelector
from dpexplore.select.stoddard import (
    ClusterSelection, ExponentialTopKSelector, NotDifferentiallyPrivateWarning,
    PrivateThresholdTesting, ScorePerturbationSelector, SparseVectorSelector, audit_selectors,
    cap_row_ones, exponential_top_k, private_threshold_testing, ptt_counterexample,
    ptt_pattern_probability, score_sensitivity, selection_quality,
)
from dpexplore.svt import sparse_vector


def _sparse_data(n=300, d=30, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    rates = np.linspace(0.02, 0.5, d)
    X = (rng.random((n, d)) < rates).astype(int)
    X[:, :5] |= (rng.random((n, 5)) < 0.5 * y[:, None]).astype(int)   # informative features
    return pd.DataFrame(X, columns=[f"w{i}" for i in range(d)]), pd.Series(y, name="label")


# --------------------------------------------------------------------------- PTT is broken
def test_ptt_counterexample_exact_probabilities():
    ex = ptt_counterexample()
    assert ex["p"] == 0.0
    assert ex["p_neighbour"] == pytest.approx(1 - np.exp(-0.5), abs=1e-12)
    np.testing.assert_array_equal(total_count(ex["X"]), [5, 5])
    np.testing.assert_array_equal(total_count(ex["X_neighbour"]), [6, 5])
    assert len(ex["X_neighbour"]) == len(ex["X"]) + 1          # add/remove neighbours


def test_ptt_monte_carlo_agrees_with_the_exact_split_probability():
    ex = ptt_counterexample()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        runs = lambda X: np.array([tuple(private_threshold_testing(  # noqa: E731
            total_count(X), ex["threshold"], epsilon=ex["epsilon"], random_state=rng))
            for _ in range(20_000)])
        on_d, on_d2 = runs(ex["X"]), runs(ex["X_neighbour"])
    split = lambda r: np.mean(r[:, 0] & ~r[:, 1])  # noqa: E731
    assert split(on_d) == 0.0
    assert split(on_d2) == pytest.approx(ex["p_neighbour"], abs=0.015)   # > 4 sd


def test_audit_flags_ptt_on_the_counterexample():
    ex = ptt_counterexample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        mech = lambda X, g: tuple(private_threshold_testing(  # noqa: E731
            total_count(X), ex["threshold"], epsilon=ex["epsilon"], random_state=g))
        res = privacy_loss(mech, ex["X"], ex["X_neighbour"], n_samples=5000, random_state=1)
    assert res.violates(ex["epsilon"])            # measured loss lower bound > claimed ε
    assert res.epsilon_lower > 2 * ex["epsilon"]  # even Theorem 2's 2σε is exceeded


def test_audit_selectors_flags_ptt_and_cluster_and_passes_the_sound_selectors():
    table = audit_selectors(epsilon=1.0, n_samples=4000, random_state=2).set_index("selector")
    flawed = table[~table["sound"]]
    sound = table[table["sound"]]
    assert list(flawed.index) == ["PTT (Alg. 2, as printed)", "Cluster Selection (Alg. 1)"]
    assert flawed["violates"].all()
    assert table.loc["PTT (Alg. 2, as printed)", "epsilon_lower"] > 3      # even 2σε is refuted
    assert len(sound) == 4 and not sound["violates"].any()
    assert (sound["epsilon_lower"] <= 1.0).all()


def test_cluster_selection_never_splits_identical_features_but_does_on_the_neighbour():
    # Stoddard et al. 2014 §3.3 (Alg. 1's final nearest-centre assignment): F1, F2 are the same
    # point in D (always the same cluster), not in D'
    ex = ptt_counterexample()
    rng = np.random.default_rng(12)

    def split_rate(X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            runs = [ClusterSelection(threshold=5.5, epsilon=1.0, max_ones=2, n_max=10,
                                     random_state=rng).fit(X, y).get_support() for _ in range(1500)]
        runs = np.array(runs)
        return np.mean(runs[:, 0] != runs[:, 1])

    assert split_rate(ex["X"], ex["y"]) == 0.0
    assert split_rate(ex["X_neighbour"], ex["y_neighbour"]) > 0.02   # ≈ 0.06 measured


def test_ptt_pattern_probability_general_case():
    # scores (7, 3, 5), τ = 4: pattern (1, 0, 1) needs 3 < τ̃ ≤ 5
    p = ptt_pattern_probability([7, 3, 5], 4, [1, 0, 1], epsilon=1.0)
    assert p == pytest.approx(stats.laplace.cdf(1) - stats.laplace.cdf(-1))
    assert ptt_pattern_probability([7, 3, 5], 4, [0, 1, 1], epsilon=1.0) == 0.0


def test_flawed_selectors_warn_and_spend_nothing():
    X, y = _sparse_data()
    with pytest.warns(NotDifferentiallyPrivateWarning):
        sel = PrivateThresholdTesting(threshold=40, epsilon=0.2, random_state=0).fit(X, y)
    assert sel.get_support().dtype == bool
    assert not hasattr(sel, "accountant_")
    with pytest.warns(NotDifferentiallyPrivateWarning):
        cl = ClusterSelection(threshold=40, epsilon=0.2, max_ones=10, random_state=0).fit(X, y)
    assert cl.get_support().shape == (X.shape[1],)
    assert cl.centres_.shape == (8, 2)


# --------------------------------------------------------------------------- sensitivities
def test_score_sensitivities_by_brute_force_on_tiny_datasets():
    rng = np.random.default_rng(3)
    scorers = {"TC": lambda X, y: total_count(X), "DC": difference_count, "PI": purity_index}
    for _ in range(20):
        n, d, s = rng.integers(2, 8), rng.integers(2, 6), 2
        X, _ = cap_row_ones(rng.integers(0, 2, size=(n, d)), s, random_state=rng)
        y = rng.integers(0, 2, size=n)
        y[:2] = [0, 1]
        neighbours = [(np.delete(X, i, 0), np.delete(y, i)) for i in range(n)]
        for row in itertools.product((0, 1), repeat=d):
            if sum(row) <= s:
                for label in (0, 1):
                    neighbours.append((np.vstack([X, row]), np.append(y, label)))
        for name, f in scorers.items():
            S, delta = score_sensitivity(name, n_features=d, max_ones=s)
            q = f(X, y)
            for Xn, yn in neighbours:
                change = np.abs(f(Xn, yn) - q)
                assert change.max() <= S
                assert np.count_nonzero(change) <= delta


def test_pi_footnote_is_false_under_substitution():
    # a label flip of an all-zero record moves every PI score (not ≤ 2s)
    X = np.zeros((5, 3), dtype=int)                  # s = 0 ones per record, so 2s = 0
    y = np.array([1, 1, 1, 1, 0])
    y2 = y.copy()
    y2[3] = 0
    assert np.all(purity_index(X, y) != purity_index(X, y2))


def test_cap_row_ones_caps_uniformly_and_reports():
    X = np.zeros((4000, 5), dtype=int)
    X[:, :4] = 1
    X[:10, 4] = 0
    capped, n_cut = cap_row_ones(X, 2, random_state=4)
    assert n_cut == 4000
    assert np.all(capped.sum(axis=1) == 2)
    assert np.all(capped <= X)                       # only ones are removed
    kept = capped[:, :4].mean(axis=0)                # each of the 4 ones kept w.p. 1/2
    assert np.allclose(kept, 0.5, atol=0.03)
    untouched, n_cut = cap_row_ones(X, 4, random_state=4)
    assert n_cut == 0 and np.array_equal(untouched, X)


# --------------------------------------------------------------------------- score perturbation
def test_sp_with_huge_epsilon_returns_the_exact_threshold_set():
    X, y = _sparse_data()
    tc = total_count(X)
    tau = float(np.median(tc))
    sel = ScorePerturbationSelector(epsilon=1e9, threshold=tau, random_state=0).fit(X, y)
    np.testing.assert_array_equal(sel.get_support(), tc > tau)


def test_sp_noise_is_laplace_with_scale_s_over_epsilon():
    X, y = _sparse_data(n=200, d=400, seed=5)
    sel = ScorePerturbationSelector(epsilon=0.5, feature_score="DC", k=10, max_ones=6, random_state=5).fit(X, y)
    assert sel.noise_scale_ == pytest.approx(6 / 0.5)
    X_capped, _ = cap_row_ones(X, 6, random_state=np.random.default_rng(5))
    noise = sel.noisy_scores_ - difference_count(X_capped, y)
    assert stats.kstest(noise, stats.laplace(scale=12).cdf).pvalue > 0.01
    assert stats.kstest(noise, stats.laplace(scale=6).cdf).pvalue < 1e-6
    assert "n_rows_capped_" not in vars(sel)     # a true count: not kept on the selector


# --------------------------------------------------------------------------- EM top-k
def test_em_top_k_with_huge_epsilon_finds_the_top_k():
    q = np.array([3.0, 9, 1, 7, 5, 8])
    for method in ("one_shot", "peeling"):
        got = exponential_top_k(q, 3, epsilon=1e6, method=method, random_state=0)
        np.testing.assert_array_equal(got, [1, 3, 5])


def test_em_peeling_first_pick_frequencies_match_the_exponential_mechanism():
    q = np.array([0.0, 1, 2, 4])
    rng = np.random.default_rng(6)
    picks = [exponential_top_k(q, 1, epsilon=1.0, method="peeling", random_state=rng)[0]
             for _ in range(8000)]
    observed = np.bincount(picks, minlength=4)
    expected = exponential_probabilities(q, epsilon=1.0, sensitivity=1.0) * 8000
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_em_top_k_selector_pipeline_and_ledger():
    X, y = _sparse_data()
    acc = BudgetAccountant(1.0)
    sel = ExponentialTopKSelector(k=5, epsilon=0.4, feature_score="DC", max_ones=8, random_state=0,
                                  accountant=acc)
    pipe = Pipeline([("select", sel), ("clf", LogisticRegression())]).fit(X, y)
    assert pipe.named_steps["select"].get_support().sum() == 5
    assert acc.spent == pytest.approx(0.4)
    assert sel.ledger_["charged"].sum() == pytest.approx(0.4)
    assert list(sel.transform(X).columns) == list(sel.get_feature_names_out())
    assert pipe.score(X, y) > 0.5


# --------------------------------------------------------------------------- sparse vector
def test_sparse_vector_with_huge_epsilon_returns_the_first_c_above():
    q = np.array([1.0, 10, 2, 12, 15, 11])
    got = sparse_vector(q, 5.0, epsilon=1e7, cutoff=2, random_state=0)
    np.testing.assert_array_equal(got, [1, 3])


def test_sparse_vector_selector_ledger_sums_to_epsilon():
    X, y = _sparse_data()
    sel = SparseVectorSelector(threshold=60, cutoff=4, epsilon=0.5, random_state=0).fit(X, y)
    assert sel.ledger_["charged"].sum() == pytest.approx(0.5)
    assert sel.get_support().sum() <= 4
    with pytest.raises(ValueError, match="monotone"):
        SparseVectorSelector(feature_score="DC", monotone=True).fit(X, y)


# --------------------------------------------------------------------------- bad input
def test_bad_input_is_rejected_before_spending():
    X, y = _sparse_data()
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ScorePerturbationSelector(epsilon=0, k=3, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="exactly one"):
        ScorePerturbationSelector(k=3, threshold=1.0, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="0/1"):
        ScorePerturbationSelector(k=3, accountant=acc).fit(X * 2, y)
    with pytest.raises(ValueError, match="only 1 class"):
        ExponentialTopKSelector(k=3, feature_score="DC", accountant=acc).fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="not among the declared classes"):
        ExponentialTopKSelector(k=3, feature_score="DC", accountant=acc, classes=[0, 1]).fit(X, y + 1)
    with pytest.raises(ValueError, match="requires y"):
        ExponentialTopKSelector(k=3, feature_score="DC", accountant=acc, classes=[0, 1]).fit(X)
    with pytest.raises(ValueError, match="n_min"):
        ScorePerturbationSelector(k=3, feature_score="IG", accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="feature_score must be one of"):
        ExponentialTopKSelector(k=3, feature_score="chi2", accountant=acc).fit(X, y)
    assert acc.spent == 0 and acc.ledger.empty
    small = BudgetAccountant(0.1)
    with pytest.raises(BudgetExceededError):
        ExponentialTopKSelector(k=3, epsilon=0.5, accountant=small).fit(X, y)
    assert small.ledger.empty


def test_sp_selector_ledger_sums_to_epsilon_on_a_shared_accountant():
    X, y = _sparse_data()
    acc = BudgetAccountant(1.0)
    sp = ScorePerturbationSelector(epsilon=0.3, k=5, max_ones=8, random_state=0, accountant=acc).fit(X, y)
    svt = SparseVectorSelector(threshold=60, cutoff=3, epsilon=0.5, random_state=0, accountant=acc).fit(X, y)
    assert sp.ledger_["charged"].sum() == pytest.approx(0.3)
    assert svt.ledger_["charged"].sum() == pytest.approx(0.5)
    assert acc.ledger["charged"].sum() == pytest.approx(0.8) == acc.spent
    with pytest.raises(BudgetExceededError):        # 0.2 left: refused before recording
        ScorePerturbationSelector(epsilon=0.3, k=5, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 3


def test_functions_reject_bad_scores_and_epsilon():
    q = np.array([1.0, 2.0, np.nan])
    for bad in (q, np.array([1.0, np.inf]), np.array([])):
        with pytest.raises(ValueError, match="finite"):
            exponential_top_k(bad, 1, epsilon=1.0)
        with pytest.raises(ValueError, match="finite"):
            sparse_vector(bad, 0.0, epsilon=1.0, cutoff=1)
        with pytest.raises(ValueError, match="finite"), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            private_threshold_testing(bad, 0.0, epsilon=1.0)
    good = np.array([1.0, 2.0, 3.0])
    for eps in (0, -1.0, np.nan):
        with pytest.raises(ValueError, match="epsilon"):
            exponential_top_k(good, 1, epsilon=eps)
        with pytest.raises(ValueError, match="epsilon"):
            sparse_vector(good, 0.0, epsilon=eps, cutoff=1)
        with pytest.raises(ValueError, match="epsilon"), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            PrivateThresholdTesting(threshold=1, epsilon=eps).fit(*_sparse_data())
    with pytest.raises(ValueError, match="k must be at most"):
        exponential_top_k(good, 4, epsilon=1.0)
    with pytest.raises(ValueError, match="method"):
        exponential_top_k(good, 1, epsilon=1.0, method="greedy")


def test_inputs_are_not_mutated():
    X, y = _sparse_data()
    X[:] = 1          # rows with 30 ones, so capping must copy
    Xc, yc = X.copy(), y.copy()
    ScorePerturbationSelector(k=3, max_ones=5, random_state=0).fit(X, y)
    SparseVectorSelector(threshold=10, max_ones=5, random_state=0).fit(X, y)
    pd.testing.assert_frame_equal(X, Xc)
    pd.testing.assert_series_equal(y, yc)


def test_ig_uses_the_public_lower_bound():
    X, y = _sparse_data()
    S, delta = score_sensitivity("IG", n_features=30, n_min=100)
    assert delta == 30 and S > score_sensitivity("IG", n_features=30, n_min=1000)[0]
    sel = ScorePerturbationSelector(k=3, feature_score="IG", n_min=100, epsilon=1.0, random_state=0).fit(X, y)
    assert sel.noise_scale_ == pytest.approx(S * 30 / 1.0)


def test_ig_with_n_min_above_the_data_size_is_not_refused():
    """A refusal when N < n_min would tell neighbours apart (N = n_min - 1 vs n_min): the declared
    bound is used whatever the data hold, and both neighbours are released."""
    X, y = _sparse_data(n=100)
    for n in (99, 100):
        sel = ScorePerturbationSelector(k=3, feature_score="IG", n_min=100, random_state=0)
        sel.fit(X.iloc[:n], y.iloc[:n])
        assert sel.get_support().sum() == 3
    with pytest.raises(ValueError, match="needs n_min"):
        ScorePerturbationSelector(k=3, feature_score="IG").fit(X, y)


def test_feature_selection_explorer_compares_private_and_exact_selection():
    from dpexplore.widgets.roc import FeatureSelectionExplorer

    X, y = _sparse_data(n=400, d=20, seed=7)
    explorer = FeatureSelectionExplorer(X[:300], y[:300], X[300:].reset_index(drop=True),
                                        y[300:].reset_index(drop=True), max_ones=20, classes=[0, 1])
    assert explorer.selector().classes == [0, 1]
    explorer.epsilon.value = 5.0
    explorer.tau.value = 60.0
    exact = explorer.exact_support()
    np.testing.assert_array_equal(exact, total_count(X[:300]) > 60)
    explorer.method.value = "em"
    assert explorer.tau.disabled and explorer.exact_support().sum() == explorer.k.value
    explorer.method.value = "svt"
    assert explorer.exact_support().sum() <= explorer.k.value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        explorer.method.value = "ptt"
    assert "not differentially private" in explorer.summary.value
    acc, kept = explorer.accuracy()
    assert 0.0 <= acc <= 1.0 and 0 <= kept <= 20


def test_selection_quality_precision_recall_f1():
    q = selection_quality([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    assert q["precision"] == pytest.approx(2 / 3) and q["recall"] == pytest.approx(2 / 3)
    assert q["f1"] == pytest.approx(2 / 3) and q["jaccard"] == pytest.approx(0.5)
    assert selection_quality([0, 0], [0, 0]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0,
                                                 "jaccard": 1.0}
    assert selection_quality([1, 0], [0, 1])["f1"] == 0.0
    with pytest.raises(ValueError, match="same length"):
        selection_quality([1, 0], [1, 0, 0])


# --------------------------------------------------------------------------- every selector
_SPENDERS = {   # selector → (unfitted instance, a method parameter to grid over)
    "PrivateKSubsetSelector": (lambda: PrivateKSubsetSelector(k=2, epsilon=0.5, classes=[0, 1]),
                               ("mechanism", ["subset", "noisy_scores"])),
    "IterativeSelector": (lambda: IterativeSelector(k=2, epsilon=0.5, classes=[0, 1], n_min=100),
                          ("feature_score", ["count", "mi"])),
    "ScorePerturbationSelector": (lambda: ScorePerturbationSelector(k=2, epsilon=0.5, classes=[0, 1]),
                                  ("feature_score", ["TC", "DC"])),
    "ExponentialTopKSelector": (lambda: ExponentialTopKSelector(k=2, epsilon=0.5, classes=[0, 1]),
                                ("method", ["one_shot", "peeling"])),
    "SparseVectorSelector": (lambda: SparseVectorSelector(threshold=20, cutoff=2, epsilon=0.5, classes=[0, 1]),
                             ("feature_score", ["TC", "PI"])),
}
_NOT_DP_SELECTORS = {
    "PrivateThresholdTesting": lambda: PrivateThresholdTesting(threshold=20, classes=[0, 1]),
    "ClusterSelection": lambda: ClusterSelection(threshold=20, classes=[0, 1]),
}


def _xy(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.where(rng.random((n, d)) < np.linspace(0.5, 0.9, d), y[:, None], 1 - y[:, None])
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(d)]), y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("name", [*_SPENDERS, *_NOT_DP_SELECTORS])
def test_clone_pickle_arrays_and_frames(name):
    make = _SPENDERS[name][0] if name in _SPENDERS else _NOT_DP_SELECTORS[name]
    X, y = _xy()
    est = make().set_params(random_state=3)
    assert clone(est).get_params() == est.get_params()
    fitted = _fit(clone(est), X, y)
    again = pickle.loads(pickle.dumps(fitted))
    pd.testing.assert_frame_equal(again.transform(X), fitted.transform(X))
    np.testing.assert_array_equal(list(fitted.get_feature_names_out()), list(fitted.transform(X).columns))
    # NumPy input: columns are x0, x1, …; the same seed gives the same selection
    arr = _fit(clone(est), X.to_numpy(), y)
    np.testing.assert_array_equal(arr.get_support(), fitted.get_support())
    assert list(arr.get_feature_names_out()) == [f"x{i}" for i in arr.get_support(indices=True)]
    assert not hasattr(arr, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 3 features"):
        arr.transform(X.to_numpy()[:, :3])
    with pytest.raises(ValueError, match="feature names"):
        fitted.transform(X.iloc[:, :3])
    with pytest.raises(TypeError, match="[Ss]parse"):
        import scipy.sparse as sp
        _fit(clone(est), sp.csr_matrix(X.to_numpy()), y)


@pytest.mark.parametrize("name", list(_SPENDERS))
def test_each_fit_has_its_epsilon_in_its_own_ledger_in_a_pipeline(name):
    X, y = _xy(seed=1)
    acc = BudgetAccountant(5.0)
    pipe = Pipeline([("select", _SPENDERS[name][0]().set_params(accountant=acc, random_state=0)),
                     ("clf", LogisticRegression())])
    _fit(pipe, X, y)
    first = pipe["select"].ledger_
    assert first["charged"].sum() == pytest.approx(0.5) == pipe["select"].epsilon_spent_
    assert pipe.predict(X).shape == (len(X),)
    _fit(pipe, X, y)                                   # a second fit: its own ledger slice
    assert pipe["select"].ledger_["charged"].sum() == pytest.approx(0.5)
    assert acc.spent == pytest.approx(1.0)


@pytest.mark.parametrize("name", list(_SPENDERS))
def test_grid_search_over_epsilon_and_a_method_parameter_and_cross_val_score(name):
    make, (param, values) = _SPENDERS[name]
    X, y = _xy(n=150, seed=2)
    pipe = Pipeline([("select", make().set_params(random_state=0)), ("clf", LogisticRegression())])
    grid = {"select__epsilon": [0.5, 2.0], f"select__{param}": values}
    if name == "SparseVectorSelector":
        grid["select__threshold"] = [0]          # PI scores are far below TC's threshold
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)    # feature_score='mi' without n_min
        search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
        scores = cross_val_score(pipe, X, y, cv=3)
    assert len(search.cv_results_["params"]) == 4 and np.all(np.isfinite(scores))
    best = search.best_estimator_["select"]
    assert best.ledger_["charged"].sum() == pytest.approx(best.epsilon)


@pytest.mark.parametrize("name", [*_SPENDERS, *_NOT_DP_SELECTORS])
def test_no_exact_quantity_rides_on_the_fitted_selector(name):
    # exact scores, exact probabilities and true counts are not kept (nor pickled)
    make = _SPENDERS[name][0] if name in _SPENDERS else _NOT_DP_SELECTORS[name]
    X, y = _xy(seed=4)
    est = _fit(make().set_params(random_state=0), X, y)
    exact = [purity_index(X, y), difference_count(X, y), total_count(X)]
    for key, value in vars(est).items():
        assert key not in ("scores_", "inclusion_probabilities_", "n_rows_capped_"), key
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.shape == (X.shape[1],):
            assert not any(np.array_equal(value, q) for q in exact), key
    blob = pickle.dumps(est)
    for q in exact:
        assert q.tobytes() not in blob


@pytest.mark.parametrize("name", [*_SPENDERS, *_NOT_DP_SELECTORS])
def test_feature_score_parameter_does_not_hide_a_score_method(name):
    # the feature score is ``feature_score``; a ``score`` attribute would hide
    # scikit-learn's score-method convention (check_fit_score_takes_y called the string)
    est = (_SPENDERS[name][0] if name in _SPENDERS else _NOT_DP_SELECTORS[name])()
    assert "feature_score" in est.get_params() and "score" not in est.get_params()
    assert not hasattr(est, "score")
    with pytest.raises(TypeError, match="score"):
        type(est)(score="DC")


@pytest.mark.parametrize("name", [*_SPENDERS, *_NOT_DP_SELECTORS])
def test_classes_are_declared_or_the_fit_warns(name):
    # with a label score, classes=None reads them from y and warns; declared labels
    # fit without warning, in any dtype; the LAST declared class is the positive one
    make = _SPENDERS[name][0] if name in _SPENDERS else _NOT_DP_SELECTORS[name]
    X, y = _xy(seed=5)
    est = make().set_params(random_state=0)
    if "feature_score" in est.get_params() and est.feature_score in ("TC",):
        est.set_params(feature_score="DC")
    with pytest.warns(PrivacyLeakWarning, match="class labels from the private y"):
        _fit(clone(est).set_params(classes=None), X, y)
    labels = np.where(y == 1, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        a = _fit(clone(est).set_params(classes=["no", "yes"]), X, labels)
        # one record per class is enough: a table holding one class fits like any other
        _fit(clone(est).set_params(classes=["no", "yes"]), X, np.full(len(y), "no"))
    assert list(a.classes_) == ["no", "yes"]
    b = _fit(clone(est).set_params(classes=[0, 1]), X, y)
    np.testing.assert_array_equal(a.get_support(), b.get_support())
    with pytest.raises(ValueError, match="not among the declared classes"):
        _fit(clone(est).set_params(classes=["no", "yes"]), X, np.where(y == 1, "yes", "maybe"))


# --------------------------------------------------------------------------- fit_scores: the one mechanism
_SCORE_SELECTORS = [
    (ScorePerturbationSelector, {"threshold": 40.0}),
    (ScorePerturbationSelector, {"k": 4}),
    (ExponentialTopKSelector, {"k": 4}),
    (ExponentialTopKSelector, {"k": 4, "method": "peeling"}),
    (SparseVectorSelector, {"threshold": 40.0, "cutoff": 4}),
    (PrivateThresholdTesting, {"threshold": 40.0}),
]


@pytest.mark.parametrize("cls, params", _SCORE_SELECTORS)
@pytest.mark.parametrize("score", ["TC", "DC"])
def test_fit_scores_on_the_fit_scores_gives_the_fit(cls, params, score):
    """fit(X, y) = scores + fit_scores: same draws, spends and released attributes."""
    X, y = _sparse_data(n=300, d=20, seed=4)
    q = (total_count(X) if score == "TC" else difference_count(X.to_numpy(), y.to_numpy())).astype(float)
    for seed in range(5):
        kwargs = dict(params, epsilon=0.3, feature_score=score, max_ones=20, classes=[0, 1], random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            fitted = cls(**kwargs).fit(X, y)
            scored = cls(**kwargs).fit_scores(q)
        np.testing.assert_array_equal(scored.get_support(), fitted.get_support())
        assert scored.n_features_in_ == 20 and not hasattr(scored, "feature_names_in_")
        if hasattr(fitted, "noisy_scores_"):
            np.testing.assert_array_equal(scored.noisy_scores_, fitted.noisy_scores_)
        if hasattr(fitted, "ledger_"):
            pd.testing.assert_frame_equal(scored.ledger_, fitted.ledger_)


def test_fit_scores_checks_before_it_spends_and_forgets_the_last_fit():
    X, y = _sparse_data(n=300, d=20)
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="k must be at most"):
        ExponentialTopKSelector(k=5, accountant=acc).fit_scores(np.arange(3.0))
    with pytest.raises(ValueError, match="finite"):
        ScorePerturbationSelector(k=1, accountant=acc).fit_scores([1.0, np.nan])
    with pytest.raises(ValueError, match="needs n_min"):
        ScorePerturbationSelector(k=1, feature_score="IG", accountant=acc).fit_scores([0.1, 0.2])
    assert acc.ledger.empty
    sel = ScorePerturbationSelector(k=2, classes=[0, 1], random_state=0).fit(X, y)
    sel.fit_scores(np.arange(5.0))
    assert sel.n_features_in_ == 5 and not hasattr(sel, "feature_names_in_") and not hasattr(sel, "classes_")
    assert sel.transform(np.ones((2, 5))).shape == (2, 2)


def test_threshold_share_is_the_share_of_epsilon_for_the_threshold():
    X, y = _sparse_data(n=300, d=20)
    new = SparseVectorSelector(threshold=30, cutoff=3, threshold_share=0.4, random_state=0).fit(X, y)
    assert list(new.ledger_["epsilon"]) == pytest.approx([0.2, 0.3])
    assert new.get_params()["threshold_share"] == 0.4
    with pytest.raises(ValueError, match="threshold_share"):
        SparseVectorSelector(threshold_share=1.0).fit(X, y)


def test_exact_support_is_each_selectors_rule_without_noise():
    """The teaching view of the exact selection is the selector's own rule (ties included: SP keeps
    TC > τ, the sparse vector and PTT compare with ≥), checked as fit_scores, spending nothing."""
    q = np.array([5.0, 3.0, 5.0, 7.0, 1.0])
    acc = BudgetAccountant(1.0)
    cases = [(ScorePerturbationSelector(threshold=5.0, accountant=acc), [3]),
             (ScorePerturbationSelector(k=2, accountant=acc), [0, 3]),
             (ExponentialTopKSelector(k=2, accountant=acc), [0, 3]),
             (SparseVectorSelector(threshold=5.0, cutoff=1, accountant=acc), [0]),
             (SparseVectorSelector(threshold=5.0, cutoff=2, accountant=acc), [0, 2]),
             (PrivateThresholdTesting(threshold=5.0), [0, 2, 3])]
    for selector, kept in cases:
        assert np.flatnonzero(selector.exact_support(q)).tolist() == kept, selector
        assert not hasattr(selector, "support_")
    assert acc.ledger.empty
    # the mechanism approaches its rule as ε grows (here without ties)
    far = np.array([50.0, 10.0, 70.0, 30.0])
    for selector in (ScorePerturbationSelector(threshold=40.0, epsilon=1e6, random_state=0),
                     SparseVectorSelector(threshold=40.0, cutoff=1, epsilon=1e6, random_state=0)):
        np.testing.assert_array_equal(selector.fit_scores(far).get_support(), selector.exact_support(far))
    with pytest.raises(ValueError, match="exactly one of threshold"):
        ScorePerturbationSelector().exact_support(q)
