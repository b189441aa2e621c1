"""Tests for Vinterbo's projected histograms (dpexplore.publish.projected)."""
from itertools import combinations, product
import warnings

import numpy as np
import scipy.sparse
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone

from dpexplore import mechanisms
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema
from dpexplore.exceptions import FewRecordsWarning
from dpexplore.limits import MIN_SYNTHETIC_ROWS
from dpexplore.datasets import load_iris, make_synthetic
from dpexplore.publish import projected as ph
from dpexplore.publish import sparse_histogram as sh
from dpexplore.publish.projected import MAX_RECORDS, EmptySyntheticWarning, ProjectedHistogram


# ----------------------------------------------------------------------------- discernibility
def test_partition_formula_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n, p = rng.integers(2, 30), rng.integers(1, 5)
        codes = rng.integers(0, 3, size=(n, p))
        y = rng.integers(0, 3, size=n)
        for r in range(p + 1):
            for S in combinations(range(p), r):
                assert ph.discernibility(codes, y, S) == pytest.approx(ph.discernibility_brute_force(codes, y, S))


def test_discernibility_toy_value():
    # 4 records, labels 0,0,1,1; attribute 0 equals the label, attribute 1 constant
    codes = np.array([[0, 0], [0, 0], [1, 0], [1, 0]])
    y = np.array([0, 0, 1, 1])
    # ordered pairs with different labels: 2·2·2 = 8; attribute 0 discerns all of them; F = 8/4
    assert ph.discernibility(codes, y, [0]) == pytest.approx(2.0)
    assert ph.discernibility(codes, y, [1]) == 0.0
    assert ph.discernibility(codes, y, []) == 0.0
    np.testing.assert_allclose(ph.candidate_scores(codes, y, []), [2.0, 0.0])


def test_score_monotone_and_submodular():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 3, size=(25, 4))
    y = rng.integers(0, 2, size=25)
    F = {S: ph.discernibility(codes, y, S) for r in range(5) for S in combinations(range(4), r)}
    for S, fs in F.items():
        for T, ft in F.items():
            if set(S) <= set(T):
                assert fs <= ft + 1e-12
                for a in set(range(4)) - set(T):
                    gain_s = F[tuple(sorted(S + (a,)))] - fs
                    gain_t = F[tuple(sorted(T + (a,)))] - ft
                    assert gain_s >= gain_t - 1e-12


def _neighbour_changes(codes, y, domain, n_values):
    """Max |F(D) - F(D')| over all subsets, for substitution and add/remove neighbours."""
    n, p = codes.shape
    subsets = [S for r in range(p + 1) for S in combinations(range(p), r)]
    base = {S: ph.discernibility_brute_force(codes, y, S) for S in subsets}
    records = list(product(*[range(v) for v in domain]))
    sub, addrem = 0.0, 0.0
    for rec in records:
        for label in range(n_values):
            new = np.array(rec)[None, :]
            added_c, added_y = np.vstack([codes, new]), np.append(y, label)
            for S in subsets:
                addrem = max(addrem, abs(ph.discernibility_brute_force(added_c, added_y, S) - base[S]))
            for i in range(n):
                c2, y2 = codes.copy(), y.copy()
                c2[i], y2[i] = rec, label
                for S in subsets:
                    sub = max(sub, abs(ph.discernibility_brute_force(c2, y2, S) - base[S]))
        # removals
    for i in range(n):
        keep = np.arange(n) != i
        for S in subsets:
            addrem = max(addrem, abs(ph.discernibility_brute_force(codes[keep], y[keep], S) - base[S]))
    return sub, addrem


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sensitivity_bound_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 7
    codes = rng.integers(0, 2, size=(n, 2))
    y = rng.integers(0, 2, size=n)
    sub, addrem = _neighbour_changes(codes, y, (2, 2), 2)
    assert sub <= 2 * (n - 1) / n + 1e-12              # proof of Thm 1 (ordered pairs: 1/n)
    assert addrem < 2.0                                  # add/remove bound of score_sensitivity
    assert ph.score_sensitivity("substitution") == ph.score_sensitivity("add/remove") == 2.0


def test_sensitivity_worst_case_reaches_bound():
    # all records share a label and a pattern; a replaced record differs in both: ΔF = 2(n-1)/n
    n = 7
    codes = np.zeros((n, 1), dtype=int)
    y = np.zeros(n, dtype=int)
    c2, y2 = codes.copy(), y.copy()
    c2[0], y2[0] = 1, 1
    assert ph.discernibility(c2, y2, [0]) - ph.discernibility(codes, y, [0]) == pytest.approx(2 * (n - 1) / n)


def test_private_kd_probabilities_and_frequencies():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(40, 4))
    y = (codes[:, 0] + rng.integers(0, 2, size=40)) % 2
    eps, k = 2.0, 2
    scores = ph.candidate_scores(codes, y, [])
    expected = np.exp(eps / (4 * k) * (scores - scores.max()))      # exp(ε'·g), ε' = ε_p/(4k)
    expected /= expected.sum()
    _, table = ph.private_kd(codes, y, k, eps, random_state=0)
    np.testing.assert_allclose(table.query("step == 1")["probability"].to_numpy(), expected)
    picks = [ph.private_kd(codes, y, 1, eps, random_state=s)[0][0] for s in range(3000)]
    observed = np.bincount(picks, minlength=4)
    assert stats.chisquare(observed, 3000 * expected).pvalue > 1e-4
    # ε → ∞ is the greedy selection
    greedy = ph.mda(codes, y, sigma=1e-9)[:2]
    assert ph.private_kd(codes, y, 2, 1e6, random_state=1)[0] == greedy


# ----------------------------------------------------------------------------- bins and heuristics
def test_bin_rule_reproduces_spec_table():
    assert ph.bin_count(135, 4) == 2 and ph.bin_count(40575, 14) == 2
    assert ph.bin_count(5792, 36, minimum=1) == 1 and ph.bin_count(5792, 36) == 2   # the clamp
    assert [ph.bin_count(135, k) for k in (1, 2, 3)] == [5, 3, 2]
    assert [ph.bin_count(40575, k) for k in range(1, 7)] == [62, 16, 8, 5, 4, 3]
    assert [ph.bin_count(5792, k) for k in (1, 2, 3)] == [26, 9, 5]


def test_discretise_uses_public_bounds_and_edges():
    np.testing.assert_array_equal(ph.discretise([0, 1.9, 2, 7.99, 8, 9], 0, 8, 4), [0, 0, 1, 3, 3, 3])
    np.testing.assert_allclose(ph.bin_midpoints(0, 8, 4), [1, 3, 5, 7])


@pytest.mark.parametrize("d,s,q,sigma", [(5, 2, 2, 0.1), (6, 3, 3, 0.1), (4, 5, 2, 0.05)])
def test_mda_on_weighted_cells_equals_mda_on_the_records(d, s, q, sigma):
    """Each distinct (codes, class) row with its count picks the attributes the records pick
    (the heuristic for k runs on the cells of its simulated records)."""
    rng = np.random.default_rng([d, s, q])
    codes = rng.integers(s, size=(3000, d)) * (rng.random((3000, d)) < 0.7)
    y = (codes[:, 0] + rng.integers(2, size=3000)) % q
    rows, weights = np.unique(np.column_stack([codes, y]), axis=0, return_counts=True)
    picked = ph.mda(codes, y, sigma)
    assert len(picked) > 1 and ph.mda(rows[:, :-1], rows[:, -1], sigma, weights) == picked
    full = list(range(d))
    assert ph.discernibility(rows[:, :-1], rows[:, -1], full, weights) == ph.discernibility(codes, y, full)


def test_estimate_k_matches_paper():
    assert ph.estimate_k(40575, 14, 2, 2) == 4           # "in general k = 4"
    assert ph.estimate_k(135, 4, 3, 2) == 3              # Iris (Vinterbo 2012 §2.3, eq. 10)


def test_estimate_gamma_formula():
    n, d, q, k, s = 135, 4, 3, 3, 2
    g = ph.estimate_gamma(n, d, q, k, s)
    assert g["epsilon_p_star"] == pytest.approx(20 * q * k ** 2 * np.log(d) / (n * (q - 1)))   # 2.77
    assert g["epsilon_p_star"] == pytest.approx(2.77, abs=0.01)
    z = np.sum(ph.bin_masses(s) ** 2) ** k * n / q
    assert g["epsilon_h_star"] == pytest.approx((0.5 * np.log(n) - 2 * np.log(0.2)) / z)
    assert g["gamma"] == pytest.approx(g["epsilon_h_star"] / (g["epsilon_h_star"] + g["epsilon_p_star"]))
    assert 0.2 < g["gamma"] < 0.35                        # ours: 0.27 (Vinterbo 2012 §2.3, eq. 11)
    assert ph.estimate_gamma(n, 1, q, 1, s)["gamma"] == 1.0   # nothing to select


# ----------------------------------------------------------------------------- threshold, survival
@pytest.mark.parametrize("eps,tau,probs", [
    (1.0, 2.453, [0.147, 0.242, 0.399, 0.860, 0.989, 0.9999]),
    (0.27, 9.08, [0.147, 0.168, 0.192, 0.288, 0.558, 0.886]),
])
def test_threshold_and_survival_match_spec(eps, tau, probs):
    assert sh.threshold(135, eps, 0.5) == pytest.approx(tau, abs=0.005)
    got = sh.survival_probability(np.array([0, 1, 2, 5, 10, 20]), 135, eps, 0.5, sensitivity=2.0)
    np.testing.assert_allclose(got, probs, atol=6e-4)


def test_survival_large_n_and_empty_cell_floor():
    assert sh.threshold(40575, 1.0) == pytest.approx(5.31, abs=0.005)
    got = sh.survival_probability(np.array([0, 1, 2, 5, 10]), 40575, 1.0, 0.5, sensitivity=2.0)
    np.testing.assert_allclose(got, [0.035, 0.058, 0.096, 0.429, 0.952], atol=6e-4)
    for eps in (0.1, 1.0, 10.0):        # ε-independent floor 1/(2 n^{A/Δ})
        assert sh.survival_probability(0, 135, eps, 0.5, 2.0) == pytest.approx(0.5 * 135 ** -0.25)
        assert sh.survival_probability(0, 135, eps, 0.5, 1.0) == pytest.approx(0.5 * 135 ** -0.5)


def test_survival_against_monte_carlo():
    rng = np.random.default_rng(4)
    noise = rng.laplace(0, 2.0, size=400_000)
    tau = sh.threshold(135, 1.0)
    for z in (0, 1, 5):
        p = sh.survival_probability(z, 135, 1.0, 0.5, 2.0)
        assert abs(np.mean(z + noise > tau) - p) < 4 * np.sqrt(p * (1 - p) / noise.size)


# ----------------------------------------------------------------------------- sparse == dense
def _simulate(builder, reps, m, counts, eps, tau, delta, seed):
    rng = np.random.default_rng(seed)
    inclusion = np.zeros(m)
    sizes, masses, empty_values = [], [], []
    nz = np.flatnonzero(counts)
    for _ in range(reps):
        if builder == "dense":
            codes, values = sh.perturb_dense(counts, epsilon=eps, tau=tau, sensitivity=delta, random_state=rng)
            empty = counts[codes] == 0
        else:
            codes, values, empty = sh.perturb_sparse(nz, counts[nz], m, epsilon=eps, tau=tau,
                                                     sensitivity=delta, random_state=rng)
        inclusion[codes] += 1
        sizes.append(codes.size)
        masses.append(values.sum())
        empty_values.extend(values[empty])
    return inclusion / reps, np.array(sizes), np.array(masses), np.array(empty_values)


@pytest.mark.parametrize("small_complement,hardened", [(False, False), (True, False), (False, True)])
def test_sparse_and_dense_agree_in_distribution(monkeypatch, small_complement, hardened):
    if small_complement:   # exercise the rejection sampler used for huge domains
        monkeypatch.setattr(sh, "_DENSE_COMPLEMENT", 0)
    counts = np.array([0, 0, 5, 1, 0, 0, 12, 0, 2, 0, 0, 0], dtype=float)
    m, eps, delta = counts.size, 1.0, 2.0
    reps = 2500 if hardened else 6000          # the exact sampler is slower (integer loops)
    tau = sh.threshold(30, eps)
    with mechanisms.hardened_noise(hardened):
        inc_d, size_d, mass_d, emp_d = _simulate("dense", reps, m, counts, eps, tau, delta, 10)
        inc_s, size_s, mass_s, emp_s = _simulate("sparse", reps, m, counts, eps, tau, delta, 11)
    exact = sh.survival_probability(counts, 30, eps, 0.5, delta)
    for inc in (inc_d, inc_s):       # per-cell inclusion rates vs eq. (5), 4 sigma
        assert np.all(np.abs(inc - exact) <= 4 * np.sqrt(exact * (1 - exact) / reps) + 1e-12)
    # |S| distributions: two-sample chi-square on the histogram of sizes
    table = np.array([np.bincount(size_d, minlength=m + 1), np.bincount(size_s, minlength=m + 1)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-4
    assert stats.ks_2samp(mass_d, mass_s).pvalue > 1e-4
    assert stats.ks_2samp(emp_d, emp_s).pvalue > 1e-4
    if hardened:   # kept empty cells: g·K, K | K ≥ k₀ (a shifted geometric), on the dense lattice
        g, t, s, _ = mechanisms.hardened_laplace_parameters(epsilon=eps, sensitivity=delta, integer=True)
        k0 = int(np.floor(tau / g)) + 1
        alpha = np.exp(-s / t)
        for values in (emp_d, emp_s):
            k = values / g
            assert np.all(k == np.round(k)) and k.min() >= k0
            mean, sd = alpha / (1 - alpha), np.sqrt(alpha) / (1 - alpha)
            assert abs((k - k0).mean() - mean) < 4 * sd / np.sqrt(k.size)
    else:          # kept empty cells: τ + Exponential(Δ/ε) in both constructions
        for values in (emp_d, emp_s):
            assert stats.kstest(values - tau, "expon", args=(0, delta / eps)).pvalue > 1e-4
    assert sh.expected_support(counts, m, 30, eps, 0.5, delta) == pytest.approx(exact.sum())
    assert abs(size_s.mean() - exact.sum()) < 4 * size_s.std() / np.sqrt(reps)


@pytest.mark.parametrize("occupied", [1, 7, 300])
def test_hardened_sparse_lattice_is_public(occupied):
    """Every released value, occupied or empty, lies on ONE lattice fixed by ε and Δ: the same
    for 1, 7 or 300 occupied cells, and used in full (some values are odd multiples of it)."""
    m, eps, delta = 4000, 0.8, 1.0
    g = mechanisms.hardened_laplace_parameters(epsilon=eps, sensitivity=delta, integer=True)[0]
    assert g == mechanisms.hardened_laplace_parameters(epsilon=eps, sensitivity=delta, size=10 ** 12,
                                                       integer=True)[0]
    codes = np.arange(occupied) * 13
    with mechanisms.hardened_noise():
        kept, values, empty = sh.perturb_sparse(codes, np.full(occupied, 40), m, epsilon=eps, tau=0.5,
                                                sensitivity=delta, random_state=occupied)
    assert empty.sum() > 100 and (~empty).sum() == occupied        # ½e^{-0.4}·(m - n') empty ones kept
    k = values / g
    assert np.all(k == np.round(k))
    for part in (k[empty], k[~empty]):
        assert np.any(part % 2 == 1) or part.size < 3
    textbook_kept, textbook_values, textbook_empty = sh.perturb_sparse(
        codes, np.full(occupied, 40), m, epsilon=eps, tau=0.5, sensitivity=delta, random_state=occupied,
        hardened=False)
    assert not np.all(textbook_values[textbook_empty] / g == np.round(textbook_values[textbook_empty] / g))


def test_perturb_checks_counts_are_integers():
    for bad in ([1.5, 2.0], [-1, 2], [np.nan, 1]):
        with pytest.raises(ValueError, match="non-negative integers"):
            sh.perturb_sparse([0, 1], bad, 10, epsilon=1.0, tau=1.0)
        with pytest.raises(ValueError, match="non-negative integers"):
            sh.perturb_dense(bad, epsilon=1.0, tau=1.0)


def test_sparse_large_domain_is_cheap_and_valid():
    m = 10 ** 15
    occupied = np.array([3, 10 ** 12, 10 ** 15 - 1])
    tau = np.log(0.5 * (m - 3) / 1000)         # P(L > τ) = ½e^{-τ} with Laplace(1): 1000 expected
    codes, values, empty = sh.perturb_sparse(occupied, [50, 50, 50], m, epsilon=1.0, tau=tau,
                                             sensitivity=1.0, random_state=0)
    assert np.unique(codes).size == codes.size and codes.max() < m and np.all(np.diff(codes) > 0)
    assert np.all(values > tau)
    assert abs(empty.sum() - 1000) < 4 * np.sqrt(1000)
    assert not np.isin(codes[empty], occupied).any()
    with pytest.raises(ValueError, match="distinct"):
        sh.perturb_sparse([1, 1], [2, 3], 10, epsilon=1.0, tau=1.0)


# ----------------------------------------------------------------------------- the estimator
@pytest.fixture(scope="module")
def iris():
    frame, schema = load_iris()
    X, y = schema.split(frame)
    return X, y, schema


@pytest.mark.parametrize("neighbours", ["add/remove", "substitution"])
def test_ledger_adds_up_to_epsilon(iris, neighbours):
    X, y, schema = iris
    model = ProjectedHistogram(0.8, random_state=0, neighbours=neighbours, schema=schema).fit(X, y)
    ledger = model.ledger_
    assert ledger["charged"].sum() == pytest.approx(0.8)
    assert model.epsilon_spent_ == pytest.approx(0.8)
    labels = list(ledger["label"])
    assert labels[-1] == "projected histogram"
    assert sum(lab.startswith("selection step") for lab in labels) == model.k_
    assert ("record count" in labels) == (neighbours == "add/remove")
    split = model.epsilon_split_
    assert split["selection"] + split["histogram"] + split["record count"] == pytest.approx(0.8)
    assert split["histogram"] == pytest.approx(model.gamma_ * (0.8 - split["record count"]))
    delta = 1.0 if neighbours == "add/remove" else 2.0
    assert model.noise_scale_ == pytest.approx(delta / split["histogram"])
    assert model.threshold_ == pytest.approx(0.5 * np.log(model.n_hat_) / split["histogram"])


def test_fit_outputs_and_classifier(iris):
    X, y, schema = iris
    model = ProjectedHistogram(2.0, k=2, gamma=0.5, random_state=1, schema=schema).fit(X, y)
    assert len(model.selected_) == 2 and set(model.selected_) <= set(schema.predictors)
    assert model.n_cells_ == model.n_bins_ ** 2 * 3
    hist = model.histogram_
    assert np.all(hist["noisy_count"] > model.threshold_)
    with pytest.warns(FewRecordsWarning, match="public floor"):           # n̂ ≈ 150 < the floor
        syn = model.synthetic()
    assert model.synthetic_size_ == hist["copies"].clip(lower=0).sum()      # D̃ the model is fitted on
    assert len(syn) == max(round(model.n_hat_), MIN_SYNTHETIC_ROWS)          # the public size rule
    assert list(syn.columns) == schema.predictors + ["species"]            # every declared column
    assert model.column_sources_[model.selected_[0]]["source"] == "modelled"
    assert {model.column_sources_[a]["source"] for a in schema.predictors if a not in model.selected_} == {"uniform"}
    # the projected columns follow D̃'s cells (copies rescaled to n̂)
    kept = syn.groupby(model.selected_ + ["species"]).size()
    assert kept.sum() == len(syn) and len(kept) <= (hist["copies"] > 0).sum()
    proba = model.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(model.predict(X)) <= set(schema.classes)
    assert 0 <= model.score(X, y) <= 1
    assert clone(model).get_params()["k"] == 2


def test_all_predictors_spends_all_on_histogram(iris):
    X, y, schema = iris
    model = ProjectedHistogram(1.0, k=10, random_state=0, neighbours="substitution", schema=schema).fit(X, y)
    assert model.k_ == 4 and model.gamma_ == 1.0
    assert list(model.ledger_["label"]) == ["projected histogram"]


def test_empty_release_falls_back_to_prior(iris):
    X, y, schema = iris
    with pytest.warns(ph.EmptySyntheticWarning):
        model = ProjectedHistogram(0.5, k=1, A=50.0, random_state=0, schema=schema).fit(X, y)
    assert model.fallback_
    np.testing.assert_allclose(model.predict_proba(X), 1 / 3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fallback_predicts_the_paid_class_marginal_not_a_fixed_class(seed):
    """A threshold above every cell leaves D̃ empty (or holding the one class of an empty cell
    that crossed τ): the fallback predicted the first declared class, or that noise cell's class,
    everywhere. With a paid class marginal it predicts the release's majority class ("a", the
    second declared class, 80 % of the rows)."""
    rng = np.random.default_rng(seed)
    schema = Schema([Attribute.categorical(c, ["p", "q", "r"]) for c in ("u", "v")], "label", ["b", "a"])
    X = pd.DataFrame({c: rng.choice(["p", "q", "r"], 3000) for c in ("u", "v")})
    y = pd.Series(np.where(rng.random(3000) < 0.8, "a", "b"), name="label")
    with warnings.catch_warnings(record=True):   # EmptySyntheticWarning: the point of the test
        warnings.simplefilter("always", EmptySyntheticWarning)
        model = ProjectedHistogram(0.5, k=1, A=50.0, marginal_share=0.3, random_state=seed, schema=schema).fit(X, y)
    assert model.fallback_
    assert (model.predict(X) == "a").all()
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_noise_ceiling_is_crossed_by_one_empty_cell_of_m():
    for eps, delta, m in ((0.1, 1.0, 18_368), (1.0, 2.0, 96), (0.01, 1.0, 2)):
        level = sh.noise_ceiling(delta / eps, m)
        assert m * mechanisms.laplace_tail(level, epsilon=eps, sensitivity=delta) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_noise_only_release_predicts_the_paid_majority_not_a_regression_on_noise(seed):
    """The class is independent of 4 predictors with 8 levels each, at ε = 0.1: no real cell of
    the 8³·2 passes τ, the kept cells are empty cells that crossed it, with random classes. The
    regression fitted on them predicted the minority class "b" for 34–93 % of the rows (below the
    majority class); none of them stands above the noise ceiling, so the classifier is the paid
    class marginal's majority "a" (80 % of the rows)."""
    rng = np.random.default_rng(seed)
    levels = list("abcdefgh")
    schema = Schema([Attribute.categorical(c, levels) for c in ("u", "v", "w", "x")], "label", ["b", "a"])
    X = pd.DataFrame({c: rng.choice(levels, 3000) for c in ("u", "v", "w", "x")})
    y = pd.Series(np.where(rng.random(3000) < 0.8, "a", "b"), name="label")
    with pytest.warns(EmptySyntheticWarning, match="clearly above the noise"):
        model = ProjectedHistogram(0.1, k=3, marginal_share=0.3, random_state=seed, schema=schema).fit(X, y)
    assert len(model.histogram_) > 0 and model.fallback_ and model.model_ is None
    assert (model.predict(X) == "a").all()


def test_does_not_mutate_and_is_reproducible(iris):
    X, y, schema = iris
    X0, y0 = X.copy(), y.copy()
    a = ProjectedHistogram(1.0, random_state=5, schema=schema).fit(X, y)
    b = ProjectedHistogram(1.0, random_state=5, schema=schema).fit(X, y)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    pd.testing.assert_frame_equal(a.histogram_, b.histogram_)


def test_categorical_full_domain():
    frame, schema = make_synthetic(300, n_numeric=1, n_categorical=2, random_state=0)
    X, y = schema.split(frame)
    model = ProjectedHistogram(1.0, k=2, gamma=0.9, random_state=0, schema=schema).fit(X, y)
    sizes = [len(schema[a].categories) if schema[a].kind == "categorical" else model.n_bins_
             for a in model.selected_]
    assert model.n_cells_ == int(np.prod(sizes)) * 2
    assert model.predict_proba(X).shape == (300, 2)


@pytest.mark.parametrize("kwargs,err", [
    ({"epsilon": 0}, ValueError), ({"epsilon": -1}, ValueError), ({"epsilon": float("nan")}, ValueError),
    ({"k": 0}, ValueError), ({"k": 1.5}, TypeError), ({"gamma": 0}, ValueError), ({"gamma": 1.5}, ValueError),
    ({"A": 0}, ValueError), ({"neighbours": "swap"}, ValueError), ({"n_bins": 1}, ValueError),
    ({"n_bins": "sturges"}, ValueError), ({"test_values": "x"}, ValueError),
])
def test_bad_parameters_spend_nothing(iris, kwargs, err):
    X, y, schema = iris
    acc = BudgetAccountant(5.0)
    params = {"epsilon": 1.0, **kwargs}
    with pytest.raises(err):
        ProjectedHistogram(**params, accountant=acc, schema=schema).fit(X, y)
    assert acc.spent == 0


def test_declared_classes_fit_a_table_holding_one_of_them(iris):
    """With a schema the classes are declared: a table holding a single one of them is released
    like any other (refusing it would itself depend on the private data), with every class."""
    X, y, schema = iris
    model = ProjectedHistogram(1.0, random_state=0, schema=schema).fit(X, pd.Series(["setosa"] * len(X)))
    assert list(model.classes_) == list(schema.classes) and model.epsilon_spent_ == pytest.approx(1.0)


def test_bad_data_spend_nothing(iris):
    X, y, schema = iris
    acc = BudgetAccountant(5.0)
    model = ProjectedHistogram(1.0, accountant=acc, schema=schema)
    bad = X.copy()
    bad.iloc[0, 0] = np.nan
    with pytest.raises(ValueError):
        model.fit(bad, y)
    out = X.copy()
    out.iloc[0, 0] = 100.0                    # outside the public bounds
    with pytest.raises(ValueError):
        model.fit(out, y)
    with pytest.raises(ValueError, match="class"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ProjectedHistogram(1.0, accountant=acc).fit(X, pd.Series(["setosa"] * 150))   # one class read from y: refused
    with pytest.raises(ValueError):
        model.fit(X.iloc[:0], y.iloc[:0])               # empty
    with pytest.raises(ValueError):
        model.fit(X.rename(columns={"petal_length": "petal"}), y)   # unknown column
    with pytest.raises(TypeError, match="[Ss]parse"):
        model.fit(scipy.sparse.csr_matrix(X.to_numpy()), y)
    with pytest.raises(ValueError, match="continuous"):
        model.fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="1d array"):
        model.fit(X, np.column_stack([y, y]))
    assert acc.spent == 0 and len(acc.ledger) == 0
    with pytest.raises(BudgetExceededError):
        ProjectedHistogram(1.0, accountant=BudgetAccountant(0.5), schema=schema).fit(X, y)


def test_predict_checks_input(iris):
    X, y, schema = iris
    model = ProjectedHistogram(1.0, k=2, random_state=0, schema=schema)
    with pytest.raises(Exception, match="not fitted"):
        model.predict(X)
    model.fit(X, y)
    with pytest.raises(ValueError, match="feature"):         # scikit-learn's feature-name check
        model.predict(X.drop(columns=model.selected_[0]))
    with pytest.raises(ValueError, match="features"):        # scikit-learn's n_features check
        model.predict(X.to_numpy()[:, :2])
    np.testing.assert_array_equal(model.predict(X.to_numpy()), model.predict(X))   # arrays by position


# ----------------------------------------------------------------------------- notebook helpers
def test_histogram_table_and_charts_agree_with_release(iris):
    from dpexplore.plots import projected as charts
    from dpexplore.evaluate import projected as explore
    X, y, schema = iris
    model = ProjectedHistogram(1.0, k=2, n_bins="projected", random_state=2, schema=schema).fit(X, y)
    table = explore.histogram_table(model, X, y)
    diag = model.diagnostics(X, y)                              # the non-private view, recomputed
    assert len(table) == model.n_cells_ and table["true_count"].sum() == len(X)
    kept = table["status"].str.startswith("kept")
    assert kept.sum() == len(model.histogram_)
    assert (table["status"] == "kept, empty in truth").sum() == diag["histogram"]["was_empty"].sum()
    np.testing.assert_allclose(np.sort(table.loc[kept, "noisy_count"]), np.sort(model.histogram_["noisy_count"]))
    for chart in (charts.histogram_chart(table, model.threshold_), charts.selection_chart(diag["selection"]),
                  charts.survival_chart(explore.survival_table(150, [0.5, 1.0]), 0.04)):
        assert isinstance(chart.to_dict(), dict)


def test_auc_helper_binary_and_hand_till():
    from dpexplore.evaluate.projected import auc
    y = np.array(["a", "b", "a", "b"])
    assert auc(y, np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]), ["a", "b"]) == 1.0
    y3 = np.array(["a", "b", "c", "a", "b", "c"])
    perfect = np.eye(3)[[0, 1, 2, 0, 1, 2]] * 0.8 + 0.2 / 3
    assert auc(y3, perfect, ["a", "b", "c"]) == pytest.approx(1.0)
    assert auc(y3, np.full((6, 3), 1 / 3), ["a", "b", "c"]) == pytest.approx(0.5)


def test_gamma_one_selects_uniformly_for_free(iris):
    X, y, schema = iris
    model = ProjectedHistogram(1.0, k=2, gamma=1.0, random_state=0, schema=schema).fit(X, y)
    assert list(model.ledger_["label"]) == ["record count", "projected histogram"]
    assert model.epsilon_spent_ == pytest.approx(1.0)
    firsts = [ProjectedHistogram(1.0, k=1, gamma=1.0, random_state=s, schema=schema).fit(X, y).selected_[0]
              for s in range(400)]
    counts = pd.Series(firsts).value_counts().reindex(schema.predictors, fill_value=0)
    assert stats.chisquare(counts.to_numpy()).pvalue > 1e-4


# ----------------------------------------------------------------------------- review additions
def test_unseen_public_levels_can_be_released():
    # the histogram covers the FULL public domain (Vinterbo 2012 §2.1): level "d" never occurs in the data,
    # yet its cells survive with probability P(L > τ) = ½·n̂^(-A/Δ) (eq. 5) and are flagged empty
    frame, schema = make_synthetic(400, n_numeric=0, n_categorical=1, random_state=0)
    frame = frame[frame["cat_0"] != "d"].reset_index(drop=True)
    X, y = schema.split(frame)
    hits, expected, fits = 0, 0.0, 300
    for seed in range(fits):
        model = ProjectedHistogram(1.0, random_state=seed, neighbours="substitution", schema=schema).fit(X, y)
        assert model.n_cells_ == 4 * 2
        hist = model.diagnostics(X, y)["histogram"]
        d_rows = hist[hist["cat_0"] == "d"]
        assert d_rows["was_empty"].all() and (d_rows["true_count"] == 0).all()
        hits += len(d_rows)
        expected += 2 * sh.survival_probability(0, model.n_hat_, model.epsilon_split_["histogram"], 0.5, 2.0)
    assert hits > 0
    assert abs(hits - expected) < 4 * np.sqrt(expected)


def test_record_count_is_paid_for_under_add_remove(iris):
    X, y, schema = iris
    ar = [ProjectedHistogram(1.0, k=2, random_state=s, schema=schema).fit(X, y) for s in range(5)]
    assert all(m.n_hat_ != len(X) for m in ar)                  # τ uses n̂, never the true n
    assert all(m.threshold_ == pytest.approx(0.5 * np.log(m.n_hat_) / m.epsilon_split_["histogram"]) for m in ar)
    assert all(m.ledger_["label"].iloc[0] == "record count" for m in ar)
    sub = ProjectedHistogram(1.0, k=2, random_state=0, neighbours="substitution", schema=schema).fit(X, y)
    assert sub.n_hat_ == len(X)                                 # public n (the paper's model)


@pytest.mark.parametrize("neighbours", ["add/remove", "substitution"])
def test_unindexable_domain_refused_before_spending(iris, neighbours):
    X, y, schema = iris
    acc = BudgetAccountant(5.0)
    with pytest.raises(ValueError, match="int64"):           # (10^6)^4 · 3 cells > 2^63
        ProjectedHistogram(1.0, k=4, n_bins=10 ** 6, neighbours=neighbours, accountant=acc, schema=schema).fit(X, y)
    assert acc.spent == 0


def test_huge_support_refused_before_selection(iris):
    X, y, schema = iris
    acc = BudgetAccountant(5.0)       # 1000³·3 cells, ~15 % of the empty ones would survive
    with pytest.raises(ValueError, match="survive"):
        ProjectedHistogram(1.0, k=3, n_bins=1000, neighbours="substitution", accountant=acc, schema=schema).fit(X, y)
    assert acc.spent == 0
    acc = BudgetAccountant(5.0)       # add/remove: only the record count (needed for p0) is spent
    with pytest.raises(ValueError, match="survive"):
        ProjectedHistogram(1.0, k=3, n_bins=1000, accountant=acc, schema=schema).fit(X, y)
    assert list(acc.ledger["label"]) == ["record count"]


def test_weak_regularisation_keeps_the_noise_free_ceiling(iris):
    # with (almost) no noise, LR on the 2-bin synthetic table separates all three Iris classes
    # from raw test values; a strong L2 (C = 1) flattens P(versicolor) and loses a class pair
    from dpexplore.evaluate.projected import auc
    X, y, schema = iris
    assert ProjectedHistogram(1.0).C >= 1e3                     # weak L2: ours (Vinterbo 2012 §3.1)
    model = ProjectedHistogram(1e4, k=1, random_state=0, neighbours="substitution", schema=schema).fit(X, y)
    assert model.selected_ == ["petal_length"] and model.n_bins_ == 2
    assert auc(y, model.predict_proba(X), schema.classes) > 0.95


# ----------------------- integer targets, public caps, no private diagnostics, scikit-learn's tools
def test_integer_target_gives_integer_classes_and_predictions(iris):
    X, y, schema = iris
    schema01 = schema.with_target("y", ["0", "1", "2"])
    yi = pd.Series(pd.Categorical(y).codes.astype(int), name="y")
    model = ProjectedHistogram(2.0, k=2, random_state=0, schema=schema01).fit(X, yi)
    assert list(model.classes_) == [0, 1, 2] and model.predict(X).dtype.kind == "i"
    assert model.score(X, yi) > 0.5            # score() compared '0' with 0 before: accuracy 0


def test_integer_coded_categories_are_validated_before_any_spend():
    schema = Schema([Attribute.categorical("c", ["0", "1", "2"]), Attribute.numeric("x", 0, 1)], "y", ["a", "b"])
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.integers(0, 3, 200), "x": rng.random(200)})
    y = pd.Series(np.where(X["c"] == 2, "a", "b"), name="y")
    as_int = ProjectedHistogram(1.0, k=1, random_state=4, schema=schema).fit(X, y)       # coded 0/1/2: fine
    as_txt = ProjectedHistogram(1.0, k=1, random_state=4, schema=schema).fit(X.assign(c=X["c"].astype(str)), y)
    pd.testing.assert_frame_equal(as_int.histogram_, as_txt.histogram_)
    acc = BudgetAccountant(5.0)
    with pytest.raises(ValueError, match="'c'.*categories"):
        ProjectedHistogram(1.0, k=1, accountant=acc, schema=schema).fit(X.assign(c=X["c"] + 5), y)
    assert acc.spent == 0 and len(acc.ledger) == 0


def test_tiny_epsilon_sizes_are_clamped_by_public_limits(iris):
    """At ε = 1e-9 the old code tried 48 GiB after spending, then refused before spending;
    now n̂ is clamped to [2, MAX_RECORDS] (post-processing) and the synthetic size to the cap."""
    X, y, schema = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySyntheticWarning)
        model = ProjectedHistogram(1e-9, random_state=0, max_synthetic_rows=300, schema=schema).fit(X, y)
    assert 2 <= model.n_hat_ <= MAX_RECORDS
    assert len(model.synthetic(random_state=0)) <= 300
    assert model.epsilon_spent_ == pytest.approx(1e-9)


def test_hardened_release_lies_on_the_public_lattice_and_never_fails_after_spending(iris):
    """Under hardened noise every released count (kept empty cells included) is a multiple of the
    lattice fixed by ε_h and Δ alone; tiny ε works (the exact sampler coarsens its scale), and
    an ε too small for any lattice is refused before anything is spent."""
    X, y, schema = iris
    with warnings.catch_warnings(), mechanisms.hardened_noise():
        warnings.simplefilter("ignore", EmptySyntheticWarning)
        model = ProjectedHistogram(1.0, k=3, A=0.1, n_bins=6, random_state=3, schema=schema).fit(X, y)
        g = mechanisms.hardened_laplace_parameters(epsilon=model.epsilon_split_["histogram"], sensitivity=1.0,
                                                   integer=True)[0]
        values = model.histogram_["noisy_count"].to_numpy()
        assert np.array_equal(values, model.counts_.values) and values.size > 100   # empty ones too
        assert np.all(values / g == np.round(values / g))
        tiny = ProjectedHistogram(1e-9, random_state=0, schema=schema).fit(X, y)
        assert tiny.epsilon_spent_ == pytest.approx(1e-9)
        acc = BudgetAccountant(1.0)
        with pytest.raises(ValueError, match="too small for the hardened sampler"):
            ProjectedHistogram(1e-17, random_state=0, accountant=acc, schema=schema).fit(X, y)
        assert acc.spent == 0


def test_pickle_carries_no_nonprivate_diagnostics(iris):
    import pickle
    X, y, schema = iris
    model = ProjectedHistogram(1.0, k=2, random_state=1, schema=schema).fit(X, y)
    state = pickle.loads(pickle.dumps(model)).__dict__
    assert "selection_" not in state and "was_empty" not in state["histogram_"].columns
    assert not any(isinstance(v, pd.DataFrame) and {"gain", "probability"} <= set(v.columns) for v in state.values())
    diag = model.diagnostics(X, y)
    assert set(diag["selection"]["attribute"][diag["selection"]["chosen"]]) == set(model.selected_)


def test_sklearn_tools_with_arrays_and_frames(iris):
    import pickle
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score
    X, y, schema = iris
    search = GridSearchCV(ProjectedHistogram(random_state=0, k=2, schema=schema),
                          {"epsilon": [0.5, 4.0], "n_bins": ["literal", 4]}, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)      # the public schema is a parameter
        search.fit(X.to_numpy(dtype=float), y.to_numpy())      # array columns = predictors
        scores = cross_val_score(ProjectedHistogram(2.0, k=2, random_state=0, schema=schema), X, y, cv=3)
    assert search.best_estimator_.ledger_["charged"].sum() == pytest.approx(search.best_params_["epsilon"])
    assert len(scores) == 3 and np.all(scores >= 0)
    model = ProjectedHistogram(1.0, k=2, random_state=0, schema=schema).fit(X, y)
    twin = clone(model)
    params, cloned = model.get_params(), twin.get_params()
    assert cloned.pop("schema").to_dict() == params.pop("schema").to_dict()     # clone copies the schema
    assert not hasattr(twin, "counts_") and cloned == params
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
    assert model.n_features_in_ == 4 and list(model.feature_names_in_) == list(X.columns)
