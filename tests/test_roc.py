"""Tests for dpexplore.evaluate.roc: PriROC, Privelet, smooth-sensitivity medians, isotonic, LaplaceROC."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import roc_auc_score

from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.evaluate.roc import (
    DegenerateCurveWarning, area_between_curves, auc_error, curve_auc, fixed_space_thresholds,
    haar_forward, haar_inverse, haar_weights, isotonic_increasing, laplace_roc_curve,
    median_smooth_sensitivity, private_auc, private_roc_curve, privelet, privelet_sensitivity,
    recursive_median_thresholds, roc_curve_exact,
)

CL = [0, 1]   # the declared (public) classes of the test labels


def _scores(n=400, seed=0, positive_rate=0.3):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < positive_rate).astype(int)
    s = 1 / (1 + np.exp(-(rng.normal(0, 1, n) + 1.8 * y - 1.0)))
    return y, s


# --------------------------------------------------------------------------- Privelet
@pytest.mark.parametrize("m, expected", [(2, 2), (8, 4), (64, 7), (1024, 11)])
def test_privelet_generalised_sensitivity_by_brute_force(m, expected):
    # Σ_c W(c)·|Δc| when one leaf moves by ±1, for every leaf (the transform is linear)
    w = haar_weights(m)
    per_leaf = [np.sum(w * np.abs(haar_forward(np.eye(m)[j]))) for j in range(m)]
    assert np.allclose(per_leaf, expected)
    assert privelet_sensitivity(m) == expected


def test_haar_inverse_is_exact_and_weights_match_subtrees():
    rng = np.random.default_rng(1)
    for m in (1, 2, 4, 32):
        x = rng.integers(0, 50, size=m).astype(float)
        assert np.allclose(haar_inverse(haar_forward(x)), x, atol=1e-12)
    c = haar_forward(np.array([4.0, 2.0, 5.0, 5.0]))
    assert np.allclose(c, [4.0, -1.0, 1.0, 0.0])   # mean, (3-5)/2, (4-2)/2, (5-5)/2
    assert np.array_equal(haar_weights(4), [4, 4, 2, 2])
    with pytest.raises(ValueError, match="power of two"):
        haar_forward(np.ones(3))


def test_privelet_is_unbiased_with_the_predicted_coefficient_noise():
    rng = np.random.default_rng(2)
    x = np.array([5.0, 0, 3, 7, 1, 0, 0, 2])
    eps = 0.5
    draws = np.array([privelet(x, epsilon=eps, random_state=rng) for _ in range(4000)])
    assert np.allclose(draws.mean(axis=0), x, atol=1.0)
    # coefficient noise is Laplace(λ/W) with λ = (1 + log2 m)/ε: variance 2(λ/W)²
    noise = np.array([haar_forward(d) for d in draws]) - haar_forward(x)
    expected = 2 * ((1 + 3) / eps / haar_weights(8)) ** 2
    assert np.allclose(noise.var(axis=0) / expected, 1.0, atol=0.12)


def test_privelet_prefix_error_is_far_below_bin_laplace_for_long_prefixes():
    rng = np.random.default_rng(3)
    m, eps = 1024, 1.0
    x = np.zeros(m)
    priv = np.array([np.cumsum(privelet(x, epsilon=eps, random_state=rng))[-2] for _ in range(800)])
    bins = rng.laplace(0, 1 / eps, size=(800, m))[:, : m - 1].sum(axis=1)
    # bin-Laplace prefix variance is linear (2i/ε² ≈ 2046); Privelet's is polylogarithmic
    assert priv.var() < 0.2 * bins.var()


def test_privelet_pads_and_drops_padding():
    out = privelet(np.ones(5), epsilon=1e9, random_state=0)
    assert out.shape == (5,)
    assert np.allclose(out, 1.0, atol=1e-6)


# --------------------------------------------------------------------------- isotonic
def test_isotonic_is_monotone_idempotent_and_matches_sklearn():
    rng = np.random.default_rng(4)
    for _ in range(50):
        v = np.cumsum(rng.normal(0.2, 2.0, size=rng.integers(1, 60)))
        fit = isotonic_increasing(v)
        assert np.all(np.diff(fit) >= -1e-12)
        assert np.allclose(isotonic_increasing(fit), fit)
        ref = IsotonicRegression().fit_transform(np.arange(v.size), v)
        assert np.allclose(fit, ref)
    monotone = np.array([0.0, 1, 1, 4, 9])
    assert np.array_equal(isotonic_increasing(monotone), monotone)


# --------------------------------------------------------------------------- smooth median
def _median(values, left):
    v = np.sort(values)
    m = (v.size + 1) // 2
    return left if m == 0 else v[m - 1]


def _neighbours(x, grid):
    for i in range(len(x)):
        yield np.delete(x, i)
    for p in grid:
        yield np.append(x, p)


def _local_sensitivity(x, grid, left):
    med = _median(x, left)
    return max(abs(_median(y, left) - med) for y in _neighbours(x, grid))


def test_smooth_sensitivity_is_a_smooth_upper_bound_by_brute_force():
    # values on a grid in [0, 1]; neighbours add (any grid value) or remove one record
    grid = np.array([0.0, 0.2, 0.45, 0.5, 0.9, 1.0])
    beta = 0.3
    rng = np.random.default_rng(5)
    datasets = [rng.choice(grid, size=n) for n in range(0, 7) for _ in range(6)]
    S = lambda x: median_smooth_sensitivity(x, beta=beta, left=0.0, right=1.0)  # noqa: E731
    for x in datasets:
        sx = S(x)
        # at least e^{-kβ}·LS(z) for every z at distance k ≤ 2 (the definition of a smooth bound)
        assert sx >= _local_sensitivity(x, grid, 0.0) - 1e-12
        for y in _neighbours(x, grid):
            assert sx <= math.exp(beta) * S(y) + 1e-12        # β-smoothness
            assert sx >= math.exp(-beta) * _local_sensitivity(y, grid, 0.0) - 1e-12
            for z in _neighbours(y, grid):
                assert sx >= math.exp(-2 * beta) * _local_sensitivity(z, grid, 0.0) - 1e-12


def test_smooth_sensitivity_bounds_the_exact_smooth_sensitivity_on_small_sets():
    # Nissim et al. 2007: S*_β(x) = max_k e^{-kβ}·max{LS(z) : z within k add/remove steps of x}, computed by
    # breadth-first search over multisets of grid values (n ≤ 9). The package's bound must be at
    # least S* (it is a smooth *upper* bound for add/remove: ours, for Stoddard et al. 2014 §4.2.2)
    # and β-smooth in both directions.
    grid = (0.0, 0.3, 0.6, 1.0)
    cache = {}

    def med(t):
        return 0.0 if len(t) == 0 else t[(len(t) + 1) // 2 - 1]

    def nbrs(t):
        out = {t[:i] + t[i + 1:] for i in range(len(t))}
        return out | {tuple(sorted(t + (g,))) for g in grid}

    def ls(t):
        if t not in cache:
            cache[t] = max(abs(med(u) - med(t)) for u in nbrs(t))
        return cache[t]

    def exact(t, beta, depth):
        best, frontier, seen = 0.0, {t}, {t}
        for k in range(depth + 1):
            best = max(best, math.exp(-k * beta) * max(ls(u) for u in frontier))
            frontier = {v for u in frontier for v in nbrs(u)} - seen
            seen |= frontier
        return best

    rng = np.random.default_rng(15)
    for beta in (0.1, 0.5):
        S = lambda t: median_smooth_sensitivity(np.array(t), beta=beta, left=0.0, right=1.0)  # noqa: E731
        for n in range(0, 10):
            t = tuple(sorted(rng.choice(grid, size=n)))
            st = S(t)
            assert st >= exact(t, beta, 3) - 1e-12
            for u in nbrs(t):
                su = S(u)
                assert st <= math.exp(beta) * su + 1e-12 and su <= math.exp(beta) * st + 1e-12


def test_smooth_sensitivity_of_an_empty_partition_is_the_width():
    assert median_smooth_sensitivity([], beta=0.1, left=0.25, right=0.75) == pytest.approx(0.5)


def test_recursive_medians_shape_and_accuracy():
    rng = np.random.default_rng(6)
    p = rng.beta(2, 5, size=2000)
    for median in ("smooth", "exponential"):
        th = recursive_median_thresholds(p, epsilon=0.8, depth=4, median=median, random_state=1)
        assert th.size == 2**4 - 1 and np.all(np.diff(th) > 0)
        assert th[0] > 0 and th[-1] < 1
    # with ε' → ∞ the first threshold is the (lower) median of distinct values
    x = rng.random(101)
    th = recursive_median_thresholds(x, epsilon=1e7, depth=1, random_state=2)
    assert th[0] == pytest.approx(np.sort(x)[50], abs=1e-6)
    # the EM median is a point where #below and #above differ by one: next to the median
    th = recursive_median_thresholds(x, epsilon=1e7, depth=1, median="exponential", random_state=2)
    assert np.sort(x)[49] < th[0] < np.sort(x)[51]


def test_released_medians_lie_on_the_public_threshold_lattice():
    """Both medians release points of k·THRESHOLD_RESOLUTION (a fallback: the midpoint of released
    bounds), never a score plus a float, whose low bits would show the score."""
    from dpexplore.evaluate.roc import THRESHOLD_RESOLUTION

    assert THRESHOLD_RESOLUTION == 2.0 ** -20
    p = np.random.default_rng(8).beta(2, 5, size=500)
    for median in ("smooth", "exponential"):
        th, fell_back = recursive_median_thresholds(p, epsilon=2.0, depth=3, median=median, random_state=3,
                                                    return_fallbacks=True)
        assert (~fell_back).sum() >= 4
        units = th[~fell_back] / THRESHOLD_RESOLUTION
        np.testing.assert_array_equal(units, np.round(units))
    # released bounds one lattice step apart hold no lattice point strictly inside: the EM median
    # gives up (the caller falls back to the midpoint) without drawing from the generator
    from dpexplore.evaluate import roc

    rng = np.random.default_rng(0)
    left = 0.25
    assert roc._exponential_median(np.array([0.25000001]), left, left + THRESHOLD_RESOLUTION, 1.0, rng) is None
    assert rng.random() == np.random.default_rng(0).random()


def test_smooth_median_passes_a_privacy_audit_that_catches_under_noising():
    # a bimodal partition where one added record moves the median from 0.7 to 0.3
    base = np.array([0.3] * 50 + [0.7] * 51)
    neighbour = np.append(base, 0.3)
    eps = 1.0

    def mech(d, g, n):
        return np.array([recursive_median_thresholds(d, epsilon=eps, depth=1, random_state=g)[0]
                         for _ in range(n)])

    res = privacy_loss(mech, base, neighbour, n_samples=5000, bins=20, batched=True, random_state=7)
    assert not res.violates(eps)

    def under_noised(d, g, n):   # the same release with 32x too little noise must be flagged
        d = np.sort(d)
        s = median_smooth_sensitivity(d, beta=eps / 2, left=0.0, right=1.0)
        v = d[(d.size + 1) // 2 - 1] + s / (4 * eps) * g.standard_cauchy(n)
        return np.where((v > 0) & (v < 1), v, 0.5)

    res = privacy_loss(under_noised, base, neighbour, n_samples=5000, bins=20, batched=True,
                       random_state=7)
    assert res.violates(eps)


# --------------------------------------------------------------------------- ROC plumbing
def test_exact_curve_matches_sklearn_with_ties():
    y, s = _scores(300, seed=8)
    s = np.round(s, 1)                                     # many ties
    curve = roc_curve_exact(y, s)
    assert curve.attrs["auc"] == pytest.approx(roc_auc_score(y, s))
    assert (curve["fpr"].iloc[0], curve["tpr"].iloc[0]) == (0.0, 0.0)
    assert (curve["fpr"].iloc[-1], curve["tpr"].iloc[-1]) == (1.0, 1.0)


def test_noise_free_priroc_recovers_the_true_curve():
    y, s = _scores(300, seed=9)
    s = np.round(s, 2)
    for method in ("fixed_space", "recursive_medians"):
        curve = private_roc_curve(y, s, classes=CL, epsilon=1e9, thresholds=method, n_thresholds=1024,
                                  median="exponential", random_state=0)
        assert curve.attrs["auc"] == pytest.approx(roc_auc_score(y, s), abs=2e-3)
        assert area_between_curves(curve, roc_curve_exact(y, s)) < 5e-3
    curve = private_roc_curve(y, s, classes=CL, epsilon=1e9, thresholds="fixed_space", n_thresholds=100,
                              random_state=0)   # grid 0.01 apart = the rounding: exact
    assert curve.attrs["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(thresholds="recursive_medians", n_thresholds=64),
    dict(thresholds="recursive_medians", n_thresholds=16, counts_split="parallel"),
    dict(thresholds="fixed_space", n_thresholds=50, range_mechanism="laplace_bins"),
])
def test_private_curve_is_monotone_anchored_and_its_ledger_sums_to_epsilon(kwargs):
    y, s = _scores()
    eps = 0.7
    curve = private_roc_curve(y, s, classes=CL, epsilon=eps, random_state=3, **kwargs)
    assert list(curve.columns) == ["threshold", "fpr", "tpr"]
    assert np.all(np.diff(curve["fpr"]) >= -1e-12) and np.all(np.diff(curve["tpr"]) >= -1e-12)
    assert np.all(np.diff(curve["threshold"]) < 0)
    assert curve.iloc[0][["fpr", "tpr"]].tolist() == [0.0, 0.0]
    assert curve.iloc[-1][["fpr", "tpr"]].tolist() == [1.0, 1.0]
    assert len(curve) == kwargs["n_thresholds"] + 1
    assert curve.attrs["ledger"]["charged"].sum() == pytest.approx(eps, rel=1e-9)
    assert curve.attrs["auc"] == pytest.approx(curve_auc(curve))


def test_shared_accountant_gets_exactly_epsilon_and_refuses_overspend():
    y, s = _scores()
    acc = BudgetAccountant(1.0)
    private_roc_curve(y, s, classes=CL, epsilon=0.6, n_thresholds=32, accountant=acc, random_state=0)
    assert acc.spent == pytest.approx(0.6)
    before = len(acc.ledger)
    with pytest.raises(BudgetExceededError):
        private_roc_curve(y, s, classes=CL, epsilon=0.6, n_thresholds=32, accountant=acc, random_state=0)
    with pytest.raises(BudgetExceededError):
        laplace_roc_curve(y, s, classes=CL, epsilon=0.6, accountant=acc, random_state=0)
    assert len(acc.ledger) == before


def test_recursive_median_levels_spend_the_threshold_share():
    y, s = _scores()
    ledger = private_roc_curve(y, s, classes=CL, epsilon=1.0, n_thresholds=32, random_state=0).attrs["ledger"]
    levels = ledger[ledger["label"].str.startswith("thresholds")]
    assert len(levels) == 5
    assert levels["charged"].sum() == pytest.approx(0.2)
    ledger = private_roc_curve(y, s, classes=CL, epsilon=1.0, n_thresholds=32, counts_split="parallel",
                               random_state=0).attrs["ledger"]
    counts = ledger[~ledger["label"].str.startswith("thresholds")]
    assert counts["epsilon"].tolist() == pytest.approx([0.8, 0.8])
    assert counts["charged"].sum() == pytest.approx(0.8)


@pytest.mark.filterwarnings("ignore::dpexplore.evaluate.roc.DegenerateCurveWarning")
def test_private_auc_is_accurate_and_beats_the_paper_laplace_baseline():
    y, s = _scores(600, seed=10, positive_rate=0.3)
    true = roc_auc_score(y, s)
    pri = [abs(private_auc(y, s, classes=CL, epsilon=1.0, n_thresholds=16, random_state=r) - true)
           for r in range(25)]
    lap = [auc_error(y, s, laplace_roc_curve(y, s, classes=CL, epsilon=1.0, random_state=r)) for r in range(25)]
    assert np.median(pri) < 0.05
    assert np.median(pri) < np.median(lap)
    # less budget, more error
    low = [abs(private_auc(y, s, classes=CL, epsilon=0.05, n_thresholds=16, random_state=r) - true)
           for r in range(25)]
    assert np.median(low) > np.median(pri)


def test_laplace_roc_ledger_and_sensitivity_label():
    y, s = _scores()
    for sens, delta in (("paper", 21), ("tight", 11)):
        curve = laplace_roc_curve(y, s, classes=CL, epsilon=0.5, n_thresholds=10, sensitivity=sens, random_state=0)
        assert curve.attrs["ledger"]["charged"].sum() == pytest.approx(0.5)
        assert f"sensitivity {delta}" in curve.attrs["ledger"]["label"].iloc[0]
        assert len(curve) == 12


def test_score_range_is_public_and_scores_are_clipped_not_read():
    y, s = _scores()
    logits = np.log(s / (1 - s))
    curve = private_roc_curve(y, logits, classes=CL, epsilon=1e9, thresholds="fixed_space", n_thresholds=400,
                              score_range=(-3, 3), random_state=0)
    assert curve["threshold"].iloc[0] == 3 and curve["threshold"].iloc[-1] == -3
    clipped = np.clip(logits, -3, 3)
    assert curve.attrs["auc"] == pytest.approx(roc_auc_score(y, clipped), abs=0.01)


def test_degenerate_curve_is_the_diagonal_with_a_warning():
    y = np.array([1] + [0] * 30)
    s = np.linspace(0, 1, 31)
    with pytest.warns(DegenerateCurveWarning):
        for r in range(50):   # at tiny ε the single positive's noisy total is soon ≤ 0
            curve = private_roc_curve(y, s, classes=CL, epsilon=0.01, n_thresholds=4, random_state=r)
            if curve.attrs["degenerate"]:
                break
    assert curve.attrs["degenerate"]
    assert np.allclose(curve["fpr"], curve["tpr"])


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_rejected(bad):
    y, s = _scores(50)
    s[3] = bad
    with pytest.raises(ValueError, match="scores must be finite"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0)
    with pytest.raises(ValueError, match="scores must be finite"):
        laplace_roc_curve(y, s, classes=CL, epsilon=1.0)


def test_missing_labels_are_refused_with_the_shared_rule():
    y, s = _scores(50)
    y = y.astype(float)
    y[4] = np.nan
    with pytest.raises(ValueError, match=r"^y_true has missing values \(NaN\): drop those rows first$"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0)


def test_threshold_share_is_the_share_of_epsilon_for_the_thresholds():
    y, s = _scores(200)
    ledger = private_roc_curve(y, s, classes=CL, epsilon=1.0, threshold_share=0.3, random_state=0).attrs["ledger"]
    spent_on_thresholds = ledger.loc[ledger["label"].str.startswith("thresholds"), "epsilon"]
    assert spent_on_thresholds.sum() == pytest.approx(0.3)      # the k levels share 0.3·ε


def test_one_class_and_bad_epsilon_and_bad_options_are_rejected():
    y, s = _scores(50)
    with pytest.raises(ValueError, match="two classes"):
        private_roc_curve(np.ones(50), s, epsilon=1.0)
    for eps in (0, -1, np.nan, np.inf):
        with pytest.raises(ValueError, match="epsilon"):
            private_roc_curve(y, s, classes=CL, epsilon=eps)
        with pytest.raises(ValueError, match="epsilon"):
            laplace_roc_curve(y, s, classes=CL, epsilon=eps)
    with pytest.raises(TypeError, match="epsilon"):
        private_roc_curve(y, s, classes=CL, epsilon="1")
    with pytest.raises(ValueError, match="power of two"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0, n_thresholds=10)
    with pytest.raises(ValueError, match="score_range"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0, score_range=(1, 0))
    with pytest.raises(ValueError, match="thresholds"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0, thresholds="quantiles")
    with pytest.raises(ValueError, match="different numbers of rows") as refused:
        private_roc_curve(y[:-1], s, classes=CL, epsilon=1.0)
    assert str(len(s)) not in str(refused.value)          # the private count is not printed
    with pytest.raises(ValueError, match="threshold_share"):
        private_roc_curve(y, s, classes=CL, epsilon=1.0, threshold_share=1.0)


def test_bad_input_is_rejected_before_anything_is_spent():
    y, s = _scores(60)
    acc = BudgetAccountant(1.0)
    bad_scores = s.copy()
    bad_scores[0] = np.nan
    calls = [
        lambda: private_roc_curve(y, bad_scores, classes=CL, epsilon=0.5, accountant=acc),
        lambda: private_roc_curve(np.zeros(60), s, epsilon=0.5, accountant=acc),
        lambda: private_roc_curve(y, s, classes=CL, epsilon=0.0, accountant=acc),
        lambda: private_roc_curve(y, s, classes=CL, epsilon=-0.5, accountant=acc),
        lambda: private_roc_curve(y, s, classes=CL, epsilon=0.5, n_thresholds=12, accountant=acc),
        lambda: private_roc_curve(y, s, classes=CL, epsilon=0.5, median="mean", accountant=acc),
        lambda: private_roc_curve(y, s, classes=CL, epsilon=0.5, counts_split="both", accountant=acc),
        lambda: laplace_roc_curve(y, bad_scores, classes=CL, epsilon=0.5, accountant=acc),
        lambda: laplace_roc_curve(np.ones(60), s, epsilon=0.5, accountant=acc),
        lambda: laplace_roc_curve(y, s, classes=CL, epsilon=0.0, accountant=acc),
        lambda: laplace_roc_curve(y, s, classes=CL, epsilon=0.5, sensitivity="loose", accountant=acc),
        lambda: private_auc(y, bad_scores, classes=CL, epsilon=0.5, accountant=acc),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            call()
    assert acc.spent == 0 and acc.ledger.empty
    with pytest.raises(ValueError, match="two classes"):
        laplace_roc_curve(np.ones(60), s, epsilon=0.5)
    with pytest.raises(ValueError, match="two classes"):
        private_auc(np.full(60, "spam"), s, epsilon=0.5)


def test_ledger_of_every_path_sums_to_epsilon_and_matches_the_noise_used(monkeypatch):
    # every ε handed to a noise mechanism is in the ledger, and nothing more (no path over-spends)
    import dpexplore.evaluate.roc as roc

    used = []
    real_laplace = roc.laplace

    def spy_laplace(value, *, epsilon, **kw):
        used.append(("laplace", epsilon))
        return real_laplace(value, epsilon=epsilon, **kw)

    monkeypatch.setattr(roc, "laplace", spy_laplace)
    y, s = _scores()
    for kwargs in (dict(thresholds="fixed_space"), dict(counts_split="parallel"),
                   dict(range_mechanism="laplace_bins"), dict(median="exponential")):
        used.clear()
        curve = private_roc_curve(y, s, classes=CL, epsilon=0.8, n_thresholds=8, random_state=0, **kwargs)
        ledger = curve.attrs["ledger"]
        assert ledger["charged"].sum() == pytest.approx(0.8)
        counts = ledger[~ledger["label"].str.startswith("thresholds")]["epsilon"].tolist()
        assert sorted(e for _, e in used) == pytest.approx(sorted(counts))
    used.clear()
    curve = laplace_roc_curve(y, s, classes=CL, epsilon=0.3, random_state=0)
    assert [e for _, e in used] == pytest.approx([0.3])
    assert curve.attrs["ledger"]["charged"].sum() == pytest.approx(0.3)


def test_inputs_are_not_mutated_and_pandas_is_accepted():
    y, s = _scores(100)
    ys, ss = pd.Series(y.copy()), pd.Series(s.copy())
    ycopy, scopy = ys.copy(), ss.copy()
    private_roc_curve(ys, ss, classes=CL, epsilon=1.0, n_thresholds=16, random_state=0)
    laplace_roc_curve(ys, ss, classes=CL, epsilon=1.0, random_state=0)
    pd.testing.assert_series_equal(ys, ycopy)
    pd.testing.assert_series_equal(ss, scopy)


def test_seeded_runs_are_reproducible():
    y, s = _scores(200)
    a = private_roc_curve(y, s, classes=CL, epsilon=1.0, n_thresholds=32, random_state=11)
    b = private_roc_curve(y, s, classes=CL, epsilon=1.0, n_thresholds=32, random_state=np.random.default_rng(11))
    pd.testing.assert_frame_equal(a, b)


def test_fixed_space_grid():
    assert np.allclose(fixed_space_thresholds(4), [0, 0.25, 0.5, 0.75, 1])


# --------------------------------------------------------------------------- plots and explorer
def test_plots_and_explorer_build_from_library_output():
    import altair as alt

    from dpexplore.plots.roc import auc_error_chart, roc_chart, stack_curves
    from dpexplore.widgets.roc import PrivateROCExplorer

    y, s = _scores(200)
    curves = [private_roc_curve(y, s, classes=CL, epsilon=1.0, random_state=r) for r in range(2)]
    tidy = stack_curves({"PriROC": curves}, roc_curve_exact(y, s))
    assert set(tidy["curve"]) == {"PriROC", "true ROC (not private)"}
    assert isinstance(roc_chart(tidy), alt.LayerChart)
    errors = pd.DataFrame({"method": ["a"] * 4, "epsilon": [1, 1, 2, 2], "error": [0.1, 0.2, 0.05, 0.1]})
    assert isinstance(auc_error_chart(errors), alt.LayerChart)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)    # declared classes reach every draw
        explorer = PrivateROCExplorer(y, s, n_draws=2, classes=CL)
        before = explorer.summary.value
        explorer.epsilon.value = 0.1            # the observer redraws
        explorer.method.value = "laplace"
    assert explorer.summary.value != before
    assert len(explorer.curves()) == 2


def test_explorer_compares_classifiers_and_options():
    from dpexplore.widgets.roc import PrivateROCExplorer

    y, s = _scores(200)
    flat = np.full_like(s, 0.5)
    explorer = PrivateROCExplorer(y, {"good": s, "useless": flat}, n_draws=2, classes=CL)
    assert explorer.true_curve.attrs["auc"] == pytest.approx(roc_auc_score(y, s))
    explorer.classifier.value = "useless"
    assert explorer.true_curve.attrs["auc"] == pytest.approx(0.5)
    explorer.method.value = "laplace"
    assert explorer.median.disabled and explorer.split.disabled
    explorer.method.value = "recursive_medians"
    explorer.median.value = "exponential"
    assert "ε spent per draw 1" in explorer.summary.value


def test_recursive_medians_report_their_midpoint_fallbacks():
    x = np.random.default_rng(13).random(300)
    th, fell = recursive_median_thresholds(x, epsilon=1e-3, depth=3, return_fallbacks=True,
                                           random_state=0)
    assert fell.shape == th.shape and fell.dtype == bool
    assert fell.all()                           # tiny ε: every noisy median leaves its interval
    assert np.allclose(th, np.arange(1, 8) / 8)  # so the thresholds are the dyadic grid
    _, fell = recursive_median_thresholds(x, epsilon=1e7, depth=3, return_fallbacks=True,
                                          random_state=0)
    assert not fell.any()


# --------------------------------------------------------------------------- declared classes
def test_classes_are_declared_or_the_release_warns():
    from dpexplore.domain import PrivacyLeakWarning

    y, s = _scores(200)
    with pytest.warns(PrivacyLeakWarning, match="class labels from the private y"):
        private_roc_curve(y, s, epsilon=1.0, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        laplace_roc_curve(y, s, epsilon=1.0, random_state=0)
    # declared: no warning, same release as before for 0/1 labels
    import warnings as _w
    with _w.catch_warnings():
        _w.simplefilter("error", PrivacyLeakWarning)
        a = private_roc_curve(y, s, epsilon=1.0, random_state=0, classes=[0, 1])
    # the positive class is the declared one, not the larger label: [1, 0] mirrors the curve
    b = private_roc_curve(y, s, epsilon=1e9, thresholds="fixed_space", n_thresholds=64, classes=[1, 0])
    c = private_roc_curve(y, s, epsilon=1e9, thresholds="fixed_space", n_thresholds=64, classes=[0, 1])
    assert b.attrs["auc"] == pytest.approx(1 - c.attrs["auc"], abs=1e-6)
    assert a.attrs["ledger"]["charged"].sum() == pytest.approx(1.0)


def test_declared_classes_allow_a_test_set_holding_one_class():
    # with classes=None a one-class test set raises (a data-dependent outcome); declared, the
    # release runs as for any other data (the noisy empty class gives the diagonal, or not)
    s = np.linspace(0, 1, 40)
    curve = private_roc_curve(np.ones(40, int), s, epsilon=1.0, random_state=0, classes=[0, 1])
    assert curve.attrs["ledger"]["charged"].sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not among the declared classes"):
        private_roc_curve(np.full(40, 2), s, epsilon=1.0, classes=[0, 1])
    with pytest.raises(ValueError, match="two public labels"):
        private_roc_curve(np.ones(40, int), s, epsilon=1.0, classes=[0, 1, 2])
    # string labels: declared order decides which is positive
    ys = np.where(np.arange(40) % 2 == 0, "spam", "ham")
    curve = private_auc(ys, s, epsilon=1e9, thresholds="fixed_space", n_thresholds=64, classes=["ham", "spam"])
    assert curve == pytest.approx(roc_curve_exact(ys == "spam", s).attrs["auc"], abs=0.02)
