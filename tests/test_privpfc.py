"""PrivPfC (Su et al. 2018): quality, sensitivity, candidate pool, selection, release, estimator."""
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy
from dpexplore.histogram import LevelCodes
from dpexplore.models.histogram import HistogramClassifier, generalize
from dpexplore.publish.privpfc import (CONSTANT_SENSITIVITY, GridScorer, PrivPfC, PrivPfCRun, PrivPfCSelNF,
                                       cell_quality, enumerate_grids, grid_quality, grid_threshold,
                                       quality_sensitivity, run_privpfc, win_probability)

# Level sizes of the reference Adult taxonomies (Su et al. 2018 §5.1: DiffGen's hierarchies), schema order.
ADULT_LEVELS = [(1, 2, 4, 8, 16), (1, 2, 3, 5, 8), (1, 6, 11), (1, 3, 7, 17), (1, 2, 4), (1, 2, 3, 7),
                (1, 3, 14), (1, 4, 6), (1, 2, 5), (1, 2), (1, 5, 20), (1, 2, 5, 10), (1, 5, 10), (1, 6, 19, 41)]


def make_table(n=4000, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    classes = ["no", "yes", "maybe"][:n_classes]
    schema = Schema([
        Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 2, 2)), integer=True),
        Attribute.categorical("colour", taxonomy=Taxonomy.from_spec("colour", {"type": "categorical", "tree": {
            "Any": {"warm": ["red", "orange"], "cold": ["blue", "green", "cyan"]}}})),
        Attribute.categorical("sex", ["F", "M"]),
        Attribute.numeric("hours", 0, 80, Taxonomy.equal_width("hours", 0, 80, (4, 2)), integer=True),
    ], "y", classes)
    X = pd.DataFrame({"age": rng.integers(0, 101, n),
                      "colour": rng.choice(["red", "orange", "blue", "green", "cyan"], n),
                      "sex": rng.choice(["F", "M"], n), "hours": rng.integers(0, 81, n)})
    score = (X["age"] > 40).astype(float) + 0.8 * X["colour"].isin(["red", "orange"]) + rng.normal(0, 0.5, n)
    if n_classes == 2:
        y = np.where(score > 1.0, "yes", "no")
    else:
        y = np.where(score > 1.3, "yes", np.where(score > 0.5, "maybe", "no"))
    return schema, X, pd.Series(y, name="y")


@pytest.fixture(scope="module")
def table():
    return make_table()


# --------------------------------------------------------------------------- win probability
def test_win_probability_matches_the_closed_form_table():
    # Su et al. 2018 §4.2 closed form (Appendix, Lemma 3), tabulated by us independently of this code
    gaps = [0, 1, 2, 5, 10, 20, 50]
    assert np.allclose(win_probability(gaps, 0.06), [0.5, 0.51499, 0.52993, 0.57403, 0.64327, 0.75904, 0.93777], atol=1e-5)
    assert np.allclose(win_probability(gaps, 0.6), [0.5, 0.64327, 0.75904, 0.93777, 0.99504, 0.99998, 1.0], atol=1e-5)
    assert win_probability(-7, 0.3) == pytest.approx(1 - win_probability(7, 0.3))


@pytest.mark.parametrize("gap, eps", [(0, 0.5), (3, 0.5), (20, 0.6), (-4, 0.2)])
def test_win_probability_against_monte_carlo(gap, eps):
    rng = np.random.default_rng(11)
    z = rng.laplace(0, 1 / eps, size=(2, 1_000_000))
    empirical = np.mean(gap + z[0] >= z[1])
    assert empirical == pytest.approx(win_probability(gap, eps), abs=2e-3)


def test_binary_quality_is_the_expected_accuracy_of_the_noisy_histogram_classifier():
    """Eq. 1 vs a simulation of the classifier it models: argmax of noisy counts per cell."""
    counts = np.array([[30, 10], [5, 5], [0, 0], [2, 40], [3, 4], [12, 9]])
    eps = 0.3
    rng = np.random.default_rng(5)
    reps = 200_000
    noisy = counts[None] + rng.laplace(0, 1 / eps, size=(reps,) + counts.shape)
    winner = np.argmax(noisy, axis=2)                          # (reps, cells)
    correct = np.take_along_axis(np.broadcast_to(counts, noisy.shape), winner[..., None], axis=2)[..., 0]
    simulated = correct.sum(axis=1).mean()
    assert simulated == pytest.approx(grid_quality(counts, eps), abs=0.05)
    assert np.allclose(cell_quality(counts, eps), (np.broadcast_to(counts, noisy.shape)
                       * (np.arange(2) == winner[..., None])).sum(axis=2).mean(axis=0), atol=0.03)


def test_toy_grid_quality_values():
    counts = np.array([[30, 10], [5, 5], [0, 0], [2, 40]])
    assert grid_quality(counts, 0.06) == pytest.approx(66.022, abs=1e-3)
    assert grid_quality(counts, 0.6) == pytest.approx(74.9996, abs=1e-4)
    # top-two approximation: a third class never counts, ordering of classes is irrelevant
    assert grid_quality([[30, 1, 10], [40, 2, 0]], 0.5) == pytest.approx(grid_quality([[10, 30], [0, 40]], 0.5))


# --------------------------------------------------------------------------- sensitivity
@pytest.mark.parametrize("eps, expected", [(0.05, 1.088901), (0.1, 1.088877), (0.2, 1.088781), (0.5, 1.088325),
                                           (0.6, 1.087990), (1, 1.083969), (2, 1.080388), (5, 1.011519),
                                           (10, 1.000136), (100, 1.0)])
def test_sensitivity_table(eps, expected):
    assert quality_sensitivity(eps) == pytest.approx(expected, abs=2e-6)


def test_sensitivity_small_epsilon_limit_and_bound():
    # h(ξ) = 1 - e^{-εξ}(2 - ε²ξ²)/4 peaks at εξ = 1+√3 with value 1 + e^{-(1+√3)}(1+√3)/2
    peak = 1 + math.exp(-(1 + math.sqrt(3))) * (1 + math.sqrt(3)) / 2
    assert quality_sensitivity(1e-4) == pytest.approx(peak, abs=1e-5)
    assert quality_sensitivity(1e-7) == pytest.approx(peak, abs=1e-5)
    values = [quality_sensitivity(e) for e in np.logspace(-5, 2, 60)]
    # f_ε(x) = h(ξ) for some ξ, so the integer maximum never exceeds the continuous peak;
    # it is not monotone in ε (the integer maximiser jumps), but stays in [1, peak] (Fig. 2)
    assert max(values) <= peak + 1e-12 and min(values) >= 1.0
    assert max(values) <= CONSTANT_SENSITIVITY


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("eps", [0.05, 0.3, 2.0])
def test_brute_force_neighbours_never_move_quality_more_than_sensitivity(n_classes, eps):
    """Adding or removing one record changes one count by 1: |Δ cell quality| ≤ Δ(ε) (Lemma 1/2)."""
    hi = int(min(60, 8 / eps))
    grid = np.array(list(itertools.product(range(hi + 1), repeat=n_classes)), dtype=float)
    worst = 0.0
    base = cell_quality(grid, eps)
    for j in range(n_classes):
        bumped = grid.copy()
        bumped[:, j] += 1
        worst = max(worst, np.abs(cell_quality(bumped, eps) - base).max())
    delta = quality_sensitivity(eps)
    assert worst <= delta + 1e-9
    if n_classes == 2:
        assert worst == pytest.approx(delta, abs=1e-9)  # the bound is attained (tight)


def test_quality_is_not_monotone():
    # Su et al. 2018 Appendix, proof of Lemma 1 (case x ≤ 0): adding a minority record can lower
    # the score, hence the factor 2 in the EM
    change = cell_quality([1, 28], 0.1) - cell_quality([0, 28], 0.1)
    assert change == pytest.approx(-0.0889, abs=5e-4)


# --------------------------------------------------------------------------- enumeration
@pytest.mark.parametrize("tau, per_layer", [
    (244, [1, 35, 543, 3493, 7410, 5020, 899, 17]),
    (977, [1, 35, 564, 5012, 19639, 29301, 15579, 2710, 92]),
])
def test_enumeration_counts_on_the_adult_taxonomies(tau, per_layer):
    pool = enumerate_grids(ADULT_LEVELS, 10**9, tau)
    # per-layer pool sizes: ours, for Su et al. 2018 §4.4's enumeration
    assert list(np.bincount((pool > 0).sum(axis=1))) == per_layer


def test_enumeration_is_canonical_capped_and_complete():
    levels = [(1, 2, 4), (1, 3), (1, 2, 5, 10), (1, 4)]
    tau = 40
    pool = enumerate_grids(levels, 10**6, tau)
    sizes = np.array([np.prod([levels[j][d] for j, d in enumerate(g)]) for g in pool])
    assert len({tuple(g) for g in pool}) == len(pool)                      # no duplicates
    assert np.all(sizes <= tau)
    expected = {g for g in itertools.product(*[range(len(ls)) for ls in levels])
                if np.prod([levels[j][d] for j, d in enumerate(g)]) <= tau}
    assert {tuple(g) for g in pool} == expected                            # every grid ≤ τ
    layers = (pool > 0).sum(axis=1)
    assert np.all(np.diff(layers) >= 0) and tuple(pool[0]) == (0, 0, 0, 0)  # level-wise from the root
    for theta in (1, 7, 30):
        capped = enumerate_grids(levels, theta, tau)
        assert len(capped) == theta and np.array_equal(capped, pool[:theta])
    assert len(enumerate_grids(levels, 5, 0.5)) == 1  # τ < 1: only the all-root grid


def test_pool_depends_on_n_hat_not_on_the_data():
    s1, X1, y1 = make_table(seed=1)
    s2, X2, y2 = make_table(seed=2, n_classes=2)
    y2 = pd.Series(np.where(X2["sex"] == "F", "yes", "no"), name="y")  # a different signal
    a = PrivPfC(epsilon=0.5, theta=40, random_state=9, schema=s1).fit(X1, y1)
    b = PrivPfC(epsilon=0.5, theta=40, random_state=9, schema=s2).fit(X2, y2)
    assert a.n_hat_ == b.n_hat_ and a.tau_ == b.tau_
    assert list(a.diagnostics(X1, y1)["depths"]) == list(b.diagnostics(X2, y2)["depths"])
    assert not np.allclose(a.diagnostics(X1, y1)["quality"], b.diagnostics(X2, y2)["quality"])
    assert grid_threshold(1000, 0.6) == pytest.approx(120)


# --------------------------------------------------------------------------- scoring
@pytest.mark.parametrize("n_classes", [2, 3])
def test_scorer_matches_direct_counting(n_classes):
    schema, X, y = make_table(n=1500, seed=4, n_classes=n_classes)
    codes = LevelCodes(X, schema)
    scorer = GridScorer(codes, schema.encode_target(y), schema.n_classes)
    pool = enumerate_grids(scorer.level_sizes, 200, 64)
    q = scorer.score(pool, 0.4)
    assert len(pool) > 40
    for i in [0, 1, 5, 20, 40, len(pool) - 1]:
        grid = dict(zip(schema.predictors, pool[i]))
        G = pd.DataFrame({a: schema[a].taxonomy.generalize(X[a], d) for a, d in grid.items()})
        ref = pd.crosstab(G.astype(str).agg("|".join, axis=1), y).to_numpy()  # non-empty cells only
        assert q[i] == pytest.approx(grid_quality(ref, 0.4), rel=1e-12)
        assert scorer.counts(pool[i]).sum() == len(X)
    assert np.array_equal(scorer.score(pool[::-1], 0.4), q[::-1])  # order-independent, cached
    # every grid (shared passes per last attribute, coarser depths by column sums) equals a
    # fresh count of that grid alone, including grids that refine one attribute at several depths
    fresh = GridScorer(codes, schema.encode_target(y), schema.n_classes)
    assert np.allclose(fresh.score(pool, 0.7), [grid_quality(scorer.counts(g), 0.7) for g in pool],
                       rtol=1e-12, atol=0)
    assert ((pool[:, 0] > 0) & (pool[:, 0] < 3)).any() and (pool[:, 0] == 3).any()


# --------------------------------------------------------------------------- selection and release
def test_selection_frequencies_match_exact_exponential_mechanism():
    schema, X, y = make_table(n=300, seed=6)
    codes = LevelCodes(X, schema)
    scorer = GridScorer(codes, schema.encode_target(y), schema.n_classes)
    # a huge noise-to-signal ratio makes τ exceed every grid, so the pool is fixed across runs
    # (ε_size = 0.06 keeps N̂ far from 0: P[N̂ < 0] = e^-18 / 2)
    kwargs = dict(epsilon=0.2, theta=12, noise_to_signal=1e6, shares=(0.3, 0.4, 0.3))
    rng = np.random.default_rng(2024)
    runs = [run_privpfc(scorer, random_state=rng, **kwargs) for _ in range(3000)]
    pool = runs[0].pool
    assert all(np.array_equal(r.pool, pool) for r in runs)
    # exact EM probabilities from an independent computation of the qualities
    q = np.array([grid_quality(scorer.counts(g), 0.3 * 0.2) for g in pool])
    logits = 0.4 * 0.2 * q / (2 * quality_sensitivity(0.06))
    p = np.exp(logits - logits.max())
    p /= p.sum()
    assert np.allclose(runs[0].probabilities, p)
    observed = np.bincount([r.index for r in runs], minlength=len(pool))
    keep = p * len(runs) >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(p[keep], p[~keep].sum()) * len(runs)
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    assert p.max() < 0.9  # the test has power: the distribution is not a point mass


def test_each_mechanism_is_called_once_with_the_epsilon_the_ledger_reports(table, monkeypatch):
    """Spy on the mechanisms: one Laplace for N̂ (ε_size), ONE exponential mechanism (ε_sel, the
    quality sensitivity Δ(ε_pert)), one Laplace on every (cell, class) count (ε_pert); their
    ε add up to what the ledger reports, so no path spends more than reported."""
    from dpexplore import mechanisms
    schema, X, y = table
    calls = []
    real_laplace, real_exponential = mechanisms.laplace, mechanisms.exponential

    def laplace(value, *, epsilon, sensitivity=1.0, random_state=None):
        calls.append(("laplace", epsilon, sensitivity, np.shape(value)))
        return real_laplace(value, epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)

    def exponential(utilities, *, epsilon, sensitivity, random_state=None, return_probabilities=False):
        calls.append(("exponential", epsilon, sensitivity, np.shape(utilities)))
        return real_exponential(utilities, epsilon=epsilon, sensitivity=sensitivity, random_state=random_state,
                                return_probabilities=return_probabilities)

    monkeypatch.setattr(mechanisms, "laplace", laplace)
    monkeypatch.setattr(mechanisms, "exponential", exponential)
    model = PrivPfC(epsilon=0.8, theta=70, random_state=2, schema=schema).fit(X, y)
    size = int(np.prod([schema[a].taxonomy.level_sizes[d] for a, d in model.grid_.items()]))
    assert [c[0] for c in calls] == ["laplace", "exponential", "laplace"]
    assert calls[0][1:] == (pytest.approx(0.024), 1.0, ())
    assert calls[1][1:] == (pytest.approx(0.296), pytest.approx(quality_sensitivity(0.48)), (len(model.diagnostics(X, y)),))
    assert calls[2][1:] == (pytest.approx(0.48), 1.0, (size, 2))
    assert sum(c[1] for c in calls) == pytest.approx(model.ledger_["charged"].sum()) == pytest.approx(0.8)
    # τ = 0.2·N̂·ε_pert (Eq. 6) and the pool is exactly Enumerate(T, Θ, τ): nothing else decides it
    assert model.tau_ == pytest.approx(0.2 * model.n_hat_ * 0.48)
    levels = [schema[a].taxonomy.level_sizes for a in schema.predictors]
    assert np.array_equal(np.array(list(model.diagnostics(X, y)["depths"])), enumerate_grids(levels, 70, model.tau_))
    assert len(model.diagnostics(X, y)) <= 70


def test_noise_scales_record_count_and_every_cell_including_empty_ones():
    """N̂ - N ~ Laplace(1/ε_size) and noisy - true ~ Laplace(1/ε_pert) on every (cell, class),
    empty cells included (Alg. 2 lines 3 and 7), checked with KS tests over seeded runs."""
    schema, X, y = make_table(n=400, seed=13)
    keep = (X["age"] < 50).to_numpy()                 # ages ≥ 50 absent: empty cells at age depth ≥ 1
    X, y = X[keep].reset_index(drop=True), y[keep].reset_index(drop=True)
    scorer = GridScorer(LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    kwargs = dict(epsilon=2.0, theta=12, shares=(0.2, 0.3, 0.5), noise_to_signal=1e6)  # fixed pool
    rng = np.random.default_rng(77)
    n_hat, noise, empty_noise = [], [], []
    for _ in range(600):
        run = run_privpfc(scorer, random_state=rng, **kwargs)
        n_hat.append(run.n_hat - len(X))
        true = scorer.counts(run.grid)
        assert run.noisy_counts.shape == true.shape  # every cell of the grid, every class
        diff = run.noisy_counts - true
        noise.append(diff.ravel())
        empty_noise.append(diff[true.sum(axis=1) == 0].ravel())
    assert stats.kstest(n_hat, stats.laplace(scale=1 / 0.4).cdf).pvalue > 1e-3
    noise, empty_noise = np.concatenate(noise), np.concatenate(empty_noise)
    assert stats.kstest(noise, stats.laplace(scale=1 / 1.0).cdf).pvalue > 1e-3
    assert empty_noise.size > 200
    assert stats.kstest(empty_noise, stats.laplace(scale=1 / 1.0).cdf).pvalue > 1e-3
    # the tests have power: a scale of 1/ε (total budget) instead of 1/ε_pert is rejected
    assert stats.kstest(noise, stats.laplace(scale=1 / 2.0).cdf).pvalue < 1e-6


def test_ledger_spends_exactly_epsilon_with_labels(table):
    schema, X, y = table
    acc = BudgetAccountant(2.0)
    model = PrivPfC(epsilon=0.5, theta=50, random_state=1, accountant=acc, schema=schema).fit(X, y)
    ledger = model.ledger_
    assert list(ledger["label"]) == ["record count", "grid selection", "histogram counts"]
    assert np.allclose(ledger["epsilon"], [0.015, 0.185, 0.3])
    assert ledger["charged"].sum() == pytest.approx(0.5)
    assert acc.remaining == pytest.approx(1.5)
    assert model.epsilon_split_["histogram counts"] == pytest.approx(0.3)


def test_release_has_every_cell_with_noise(table):
    schema, X, y = table
    model = PrivPfC(epsilon=1.0, theta=200, random_state=3, schema=schema).fit(X, y)
    size = int(model.diagnostics(X, y).loc[model.diagnostics(X, y)["chosen"], "size"].iloc[0])
    assert model.counts_.shape == (size, 2)
    assert size == np.prod([schema[a].taxonomy.level_sizes[d] for a, d in model.grid_.items()])
    assert np.all(model.counts_ != np.round(model.counts_))  # noise on every entry, empty cells too
    assert model.levels_ == {a: d + 1 for a, d in model.grid_.items()}
    assert model.diagnostics(X, y)["size"].max() <= max(model.tau_, 1)
    assert model.diagnostics(X, y)["probability"].sum() == pytest.approx(1.0)
    hist = model.noisy_histogram()
    assert len(hist) == size and list(hist.columns[-2:]) == ["no", "yes"]


def test_large_epsilon_recovers_the_best_grid_and_its_classifier(table):
    schema, X, y = table
    model = PrivPfC(epsilon=1e4, theta=500, random_state=0, schema=schema).fit(X, y)
    cand = model.diagnostics(X, y)
    assert cand["chosen"].idxmax() == cand["quality"].idxmax()
    assert model.grid_["age"] > 0 and model.grid_["colour"] > 0  # the informative attributes
    exact = HistogramClassifier(schema=schema, grid=model.grid_).fit(X, y)
    top = np.sort(exact.counts_, axis=1)
    clear = (top[:, -1] > top[:, -2])[exact.cells(X)]  # noise breaks exact ties at random
    assert clear.mean() > 0.9
    assert np.array_equal(model.predict(X)[clear], exact.predict(X)[clear])
    assert model.score(X, y) >= exact.score(X, y) - 0.01


def test_synthetic_rows_and_generalised_test_records(table):
    schema, X, y = table
    model = PrivPfC(epsilon=1.0, theta=100, random_state=4, schema=schema).fit(X, y)
    syn = model.synthetic(random_state=0)
    assert list(syn.columns) == schema.predictors + ["y"]
    assert len(syn) == pytest.approx(len(X), rel=0.1)
    for a, d in model.grid_.items():
        assert set(syn[a]) <= set(schema[a].taxonomy.labels(d))
    G = model.generalize(X)
    assert np.array_equal(model.predict(G), model.predict(X))
    assert np.array_equal(model.predict(syn[schema.predictors]).shape, (len(syn),))


def test_reproducible_and_sensitivity_modes(table):
    schema, X, y = table
    a = PrivPfC(epsilon=0.3, theta=60, random_state=12, schema=schema).fit(X, y)
    b = PrivPfC(epsilon=0.3, theta=60, random_state=12, schema=schema).fit(X, y)
    assert np.array_equal(a.counts_, b.counts_) and a.grid_ == b.grid_
    c = PrivPfC(epsilon=0.3, theta=60, sensitivity="constant", random_state=12, schema=schema).fit(X, y)
    assert c.quality_sensitivity_ == 1.1 and a.quality_sensitivity_ == pytest.approx(quality_sensitivity(0.18))


def test_multiclass_uses_top_two_quality():
    schema, X, y = make_table(n=3000, seed=8, n_classes=3)
    model = PrivPfC(epsilon=1.0, theta=100, random_state=2, schema=schema).fit(X, y)
    assert model.counts_.shape[1] == 3
    row = model.diagnostics(X, y).iloc[5]
    counts = GridScorer(LevelCodes(X, schema), schema.encode_target(y), 3).counts(row["depths"])
    assert row["quality"] == pytest.approx(grid_quality(counts, model.epsilon_split_["histogram counts"]))
    assert model.score(X, y) > y.value_counts(normalize=True).max()


def test_selnf_is_labelled_and_takes_the_argmax(table):
    schema, X, y = table
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        model = PrivPfCSelNF(epsilon=0.1, theta=100, random_state=0, schema=schema).fit(X, y)
    assert model.diagnostics(X, y)["chosen"].idxmax() == model.diagnostics(X, y)["quality"].idxmax()
    assert "grid selection" not in set(model.ledger_["label"])


# --------------------------------------------------------------------------- input handling
@pytest.mark.parametrize("params, error, match", [
    (dict(epsilon=0), ValueError, "epsilon"),
    (dict(epsilon=-1), ValueError, "epsilon"),
    (dict(epsilon=float("nan")), ValueError, "epsilon"),
    (dict(epsilon=1, theta=0), ValueError, "theta"),
    (dict(epsilon=1, theta=2.5), TypeError, "theta"),
    (dict(epsilon=1, shares=(0.5, 0.5)), ValueError, "shares"),
    (dict(epsilon=1, shares=(0.1, -0.2, 1.1)), ValueError, "shares"),
    (dict(epsilon=1, noise_to_signal=0), ValueError, "noise_to_signal"),
    (dict(epsilon=1, sensitivity="1.0"), ValueError, "sensitivity"),
])
def test_bad_parameters_fail_before_spending(table, params, error, match):
    schema, X, y = table
    acc = BudgetAccountant(5.0)
    with pytest.raises(error, match=match):
        PrivPfC(accountant=acc, **params, schema=schema).fit(X, y)
    assert acc.ledger.empty


def test_a_subset_of_the_schema_columns_is_released_on_those_columns_only(table):
    """X may carry some of the schema's predictors (as for every method, see
    inputs.check_release_input): the grid then spans exactly X's columns."""
    schema, X, y = table
    model = PrivPfC(epsilon=1, random_state=0, schema=schema).fit(X.drop(columns="sex"), y)
    assert set(model.grid_) == set(X.columns) - {"sex"}
    assert "sex" not in model.schema_.predictors
    assert "sex" not in model.synthetic(random_state=0).columns


def test_bad_data_fails_before_spending(table):
    schema, X, y = table
    acc = BudgetAccountant(5.0)
    with pytest.raises(ValueError, match="class"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X, pd.Series(["not-a-class"] * len(X)))
    with pytest.raises(ValueError, match="weight"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X.assign(weight=1), y)
    with pytest.raises(ValueError, match="empty"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X.iloc[:0], y.iloc[:0])
    with pytest.raises(ValueError, match="age"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X.assign(age=X["age"].astype(float).where(X.index > 3)), y)
    with pytest.raises(ValueError, match="rows"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X, y.iloc[:-1])
    with pytest.raises(ValueError, match="missing"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X, y.where(y.index > 5))
    with pytest.raises(ValueError, match="not among"):
        PrivPfC(epsilon=1, accountant=acc, schema=schema).fit(X, y.replace("yes", "maybe"))
    with pytest.raises(ValueError, match="epsilon"):
        PrivPfC(epsilon=float("inf"), accountant=acc, schema=schema).fit(X, y)
    assert acc.ledger.empty
    small = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError):
        PrivPfC(epsilon=1, accountant=small, schema=schema).fit(X, y)
    assert small.ledger.empty


def test_inputs_not_mutated_sklearn_contract_and_schema_warning(table):
    schema, X, y = table
    X0, y0 = X.copy(), y.copy()
    model = PrivPfC(epsilon=1, theta=30, random_state=0, schema=schema)
    model.fit(X, y).predict(X)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    twin = clone(model).set_params(theta=10)
    assert twin.get_params()["theta"] == 10 and not hasattr(twin, "counts_")
    pipe = Pipeline([("pfc", PrivPfC(epsilon=1, theta=30, random_state=0, schema=schema))])
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.5
    with pytest.warns(PrivacyLeakWarning):
        PrivPfC(epsilon=1, theta=10, random_state=0).fit(X, y)


def test_selection_privacy_loss_between_neighbours_is_at_most_epsilon_sel():
    """Exact EM probabilities on D and D - t (t placed where the quality moves most): the largest
    log-ratio over all candidate grids stays within ε_sel (the EM with Δ(ε_pert) is ε_sel-DP)."""
    eps, split = 0.5, (0.2, 0.4, 0.4)
    eps_sel, eps_pert = eps * 0.4, eps * 0.4
    gap = round((1 + math.sqrt(3)) / eps_pert + 0.5)  # the worst-case lead (Lemma 1)
    schema = Schema([Attribute.categorical("a", ["u", "v"]), Attribute.categorical("b", ["p", "q", "r"])],
                    "y", ["no", "yes"])
    rows = [("u", "p", "yes")] * (gap + 3) + [("u", "p", "no")] * 3 + [("v", "q", "no")] * 40 + \
           [("v", "r", "yes")] * 25 + [("u", "q", "no")] * 9
    frame = pd.DataFrame(rows, columns=["a", "b", "y"])
    worst = 0.0
    for drop in [0, gap + 3, gap + 6]:  # remove a majority record, a minority record, another cell's
        neighbour = frame.drop(index=drop)
        probs = []
        for data in (frame, neighbour):
            scorer = GridScorer(LevelCodes(data[["a", "b"]], schema), schema.encode_target(data["y"]), 2)
            run = run_privpfc(scorer, epsilon=eps, shares=split, theta=100, noise_to_signal=1e6, random_state=0)
            probs.append(run.probabilities)
        assert len(probs[0]) == len(probs[1]) == 4
        worst = max(worst, np.abs(np.log(probs[0]) - np.log(probs[1])).max())
    assert 0.3 * eps_sel < worst <= eps_sel + 1e-12


def test_exact_multiclass_quality_diagnostic():
    from dpexplore.publish.privpfc import exact_cell_quality
    two = np.array([[30, 10], [5, 5], [0, 0], [2, 40], [1, 0]])
    assert np.allclose(exact_cell_quality(two, 0.06), cell_quality(two, 0.06), atol=5e-4)  # k = 2: Eq. 1 = Eq. 5
    three = np.array([[30, 10, 5], [5, 5, 5], [2, 40, 39], [12, 11, 10]])
    rng = np.random.default_rng(1)
    noisy = three[None] + rng.laplace(0, 1 / 0.3, size=(200_000,) + three.shape)
    win = noisy.argmax(axis=2)
    simulated = np.take_along_axis(np.broadcast_to(three, noisy.shape), win[..., None], axis=2)[..., 0].mean(axis=0)
    assert np.allclose(exact_cell_quality(three, 0.3), simulated, atol=0.05)
    assert exact_cell_quality(three, 0.3)[1] == pytest.approx(5.0, abs=1e-3)  # equal counts: n either way
    # Eq. 5 ignores the third class: it overestimates when a third class is close to the top two
    assert cell_quality(three, 0.3)[3] > exact_cell_quality(three, 0.3)[3] + 0.2


# --------------------------------------------------------------------------- plots and explorer
def test_plots_take_tidy_data(table):
    from dpexplore.plots.privpfc import (candidates_chart, counts_chart, error_chart, grid_levels_chart,
                                         selection_chart, sensitivity_chart)
    from dpexplore.evaluate.privpfc import counts_comparison, grid_levels, sensitivity_curve
    schema, X, y = table
    model = PrivPfC(epsilon=1.0, theta=300, random_state=0, schema=schema).fit(X, y)
    spec = candidates_chart(model.diagnostics(X, y), tau=model.tau_, n_records=len(X), max_points=40).to_dict()
    shown = pd.DataFrame(spec["layer"][0]["data"]["values"] if "values" in spec["layer"][0].get("data", {})
                         else next(iter(spec["datasets"].values())))
    assert len(shown) <= 41 and shown["chosen"].any()
    assert shown["quality"].max() == model.diagnostics(X, y)["quality"].max()  # the best grids are kept
    levels = grid_levels(model.grid_, schema)
    assert levels["chosen"].sum() == len(schema.predictors)
    assert levels.loc[levels["chosen"] & levels["refined"], "attribute"].tolist() == \
        [a for a, d in model.grid_.items() if d > 0]
    comp = counts_comparison(model, X, y, n_cells=3)
    assert set(comp["kind"]) == {"true", "noisy"} and comp.groupby("kind")["count"].size().tolist() == [6, 6]
    true_total = comp[comp.kind == "true"]["count"].sum()
    assert true_total <= len(X)
    curve = sensitivity_curve([0.1, 1.0])
    assert np.allclose(curve["sensitivity"], [1.088877, 1.083969], atol=1e-6)
    for chart in (sensitivity_chart(curve), selection_chart(model.diagnostics(X, y)), grid_levels_chart(levels),
                  counts_chart(comp), error_chart(pd.DataFrame({"epsilon": [0.1, 1], "error": [0.2, 0.1]}), {"majority": 0.3})):
        assert chart.to_dict()


def test_explorer_reuses_cached_qualities(table):
    from dpexplore.widgets.privpfc import PrivPfCExplorer
    schema, X, y = table
    ex = PrivPfCExplorer(X.iloc[:3000], y.iloc[:3000], X.iloc[3000:], y.iloc[3000:], schema, epsilon=0.5, theta=300)
    run = run_privpfc(ex.scorer, epsilon=0.5, theta=300, random_state=0)
    assert np.array_equal(ex.last_run.grid, run.grid) and np.allclose(ex.last_run.noisy_counts, run.noisy_counts)
    keys = set(ex.scorer._cache)
    ex.sel_share.value = 0.2          # moves ε_sel and ε_size only: ε_pert unchanged, nothing rescored
    ex.seed.value = 3
    assert set(ex.scorer._cache) == keys and "error" in ex.status.value
    res = ex.compute()
    assert set(res["comparison"]["kind"]) == {"true", "noisy"}
    assert res["comparison"].query("kind == 'true'")["count"].sum() <= len(X)
    ex.epsilon.value = 1.0
    assert len(ex.scorer._cache) == len(keys) + 1
    ex.pert_share.value = 0.8         # leaves nothing for the record count: refused, with a message
    assert "too small" in ex.status.value


def test_test_records_are_generalised_exactly_as_the_release(table):
    """The classifier's cells of a table (raw or generalised values) are the scorer's cells: the
    true counts recounted through the prediction path equal the counts the release perturbed."""
    schema, X, y = table
    scorer = GridScorer(LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    for depths in enumerate_grids(scorer.level_sizes, 60, 10**6)[[1, 7, 25, 59]]:
        grid = dict(zip(schema.predictors, depths.tolist()))
        clf = HistogramClassifier(schema=schema, grid=grid).fit(X, y)
        assert np.array_equal(clf.counts_, scorer.counts(depths))
        assert np.array_equal(clf.cells(X), LevelCodes(X, schema).cell_codes(grid))
        assert np.array_equal(clf.cells(generalize(X, grid, schema)), clf.cells(X))
    model = PrivPfC(1.0, 100, (0.03, 0.37, 0.60), 5, schema=schema).fit(X, y)  # issue's positional order
    assert model.random_state == 5 and model.theta == 100
    manual = HistogramClassifier.from_counts(model.counts_, model.grid_, schema)
    assert np.array_equal(model.predict(X), manual.predict_cells(LevelCodes(X, schema).cell_codes(model.grid_)))


def test_error_sweep_reproduces_the_estimator(table):
    from dpexplore.evaluate.privpfc import error_sweep
    schema, X, y = table
    Xtr, Xte, ytr, yte = X.iloc[:3000], X.iloc[3000:], y.iloc[:3000], y.iloc[3000:]
    res = error_sweep(Xtr, ytr, Xte, yte, schema, [0.2, 1.0], 2, theta=80, desc="test")
    assert set(res["method"]) == {"PrivPfC histogram classifier", "tree on PrivPfC synthetic data",
                                  "SelNF histogram (non-private)"}
    hist = res[res.method == "PrivPfC histogram classifier"].set_index(["epsilon", "seed"])["error"]
    for eps in (0.2, 1.0):
        for seed in (0, 1):
            model = PrivPfC(epsilon=eps, theta=80, random_state=seed, schema=schema).fit(Xtr, ytr)
            assert hist[(eps, seed)] == pytest.approx(1 - model.score(Xte, yte), abs=1e-12)
    tree = res[res.method == "tree on PrivPfC synthetic data"]["error"]
    assert tree.between(0, 0.5).all()


def test_compare_counts_spread_covers_large_and_small_cells(table):
    from dpexplore.evaluate.privpfc import compare_counts
    schema, X, y = table
    model = PrivPfC(epsilon=1.0, theta=300, random_state=0, schema=schema).fit(X, y)
    true = HistogramClassifier(schema=schema, grid=model.grid_).fit(X, y).counts_
    n = model.counts_.shape[0]
    assert n > 6
    comp = compare_counts(true, model.counts_, model.grid_, schema, n_cells=6, pick="spread")
    noisy_totals = comp[comp.kind == "noisy"].groupby("cell", sort=False)["count"].sum().to_numpy()
    totals = np.sort(model.counts_.sum(axis=1))
    assert noisy_totals[0] == pytest.approx(totals[-1]) and noisy_totals[-1] == pytest.approx(totals[0])
    assert len(noisy_totals) == 6
    with pytest.raises(ValueError, match="pick"):
        compare_counts(true, model.counts_, model.grid_, schema, pick="random")
    with pytest.raises(ValueError, match="shape"):
        compare_counts(true[:-1], model.counts_, model.grid_, schema)


def test_integer_labels_and_integer_coded_categories_round_trip():
    """sklearn convention: predictions come back in the type of y (the schema stores text), and
    integer-coded categories are matched to their leaves by text at predict time as at fit time."""
    schema, X, y = make_table(n=2000, seed=21)
    sex = Taxonomy.from_spec("sex", {"type": "categorical", "tree": {"Any": ["0", "1"]}})
    schema = Schema([schema["age"], schema["colour"], Attribute.categorical("sex", taxonomy=sex), schema["hours"]],
                    "y", ["0", "1"])
    Xi = X.assign(sex=(X["sex"] == "M").astype(int))
    yi = pd.Series((y == "yes").astype(int), name="y")
    model = PrivPfC(epsilon=2.0, theta=300, random_state=0, schema=schema).fit(Xi, yi)
    pred = model.predict(Xi)
    assert pred.dtype.kind == "i" and set(np.unique(pred)) <= {0, 1}
    assert list(model.classes_) == [0, 1]
    assert model.score(Xi, yi) > yi.value_counts(normalize=True).max()
    assert set(model.synthetic(random_state=0)["y"]) <= {0, 1}      # synthetic labels typed like y, too
    assert set(model.weighted_table()["y"]) <= {0, 1}
    clf = HistogramClassifier(schema=schema, grid={"sex": 1, "age": 1}).fit(Xi, yi)
    assert np.array_equal(clf.cells(Xi), clf.cells(Xi.assign(sex=Xi["sex"].astype(str))))
    assert clf.predict(Xi).dtype.kind == "i"


# ---------------------------------------- no private diagnostics, public caps, scikit-learn's tools
def test_pickle_carries_no_candidate_qualities(table):
    import pickle
    schema, X, y = table
    model = PrivPfC(epsilon=1.0, theta=100, random_state=0, schema=schema).fit(X, y)
    state = pickle.loads(pickle.dumps(model)).__dict__
    assert "candidates_" not in state and "run_" not in state
    assert not any(isinstance(v, (pd.DataFrame, PrivPfCRun)) for v in state.values())
    cand = model.diagnostics(X, y)                       # the non-private view, on demand
    assert cand["chosen"].sum() == 1 and cand["probability"].sum() == pytest.approx(1.0)


def test_synthetic_size_is_capped_before_rows_are_made(table):
    schema, X, y = table
    for seed in range(20):   # a fit with a positive noisy count (each is positive w.p. ½)
        model = PrivPfC(epsilon=1e-9, theta=50, random_state=seed, schema=schema).fit(X, y)
        if model.counts_.max() > 2e7:
            break
    # the size rule clamps n̂ to the public cap instead of materialising the noise (tried 30 GiB
    # before, then refused): never more than max_synthetic_rows rows, read when synthetic() runs
    model.set_params(max_synthetic_rows=5_000)
    assert len(model.synthetic()) <= 5_000
    assert len(model.synthetic(n=10**12)) == 5_000
    capped = PrivPfC(epsilon=1e-9, theta=50, random_state=seed, max_synthetic_rows=2_000, schema=schema).fit(X, y)
    assert 1 <= len(capped.synthetic()) <= 2_000
    assert len(capped.synthetic(n=10**12)) == 2_000
    assert len(model.weighted_table()) <= model.counts_.size


def test_sklearn_tools_with_arrays_and_frames(table):
    import pickle
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score
    schema, X, y = table
    search = GridSearchCV(PrivPfC(random_state=0, theta=50, schema=schema),
                          {"epsilon": [0.5, 4.0], "sensitivity": ["exact", "constant"]}, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X.to_numpy(dtype=object), y.to_numpy())
        scores = cross_val_score(PrivPfC(2.0, theta=50, random_state=0, schema=schema), X, y, cv=3)
    assert search.best_estimator_.ledger_["charged"].sum() == pytest.approx(search.best_params_["epsilon"])
    assert len(scores) == 3 and np.all(np.isfinite(scores))
    model = PrivPfC(1.0, theta=50, random_state=0, schema=schema).fit(X, y)
    assert not hasattr(clone(model), "counts_")
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
    np.testing.assert_array_equal(model.predict(X.to_numpy(dtype=object)), model.predict(X))


def test_enumerate_grids_cache_hands_out_copies_and_depends_on_floor_tau():
    from dpexplore.publish.privpfc import enumerate_grids

    sizes = [[1, 2, 4], [1, 3], [1, 5, 10]]
    first = enumerate_grids(sizes, 50, 12.7)
    first[:] = -1                                                  # a caller may scribble on it
    again = enumerate_grids(sizes, 50, 12.7)
    assert (again >= 0).all()
    assert np.array_equal(again, enumerate_grids(sizes, 50, 12.0))   # cell counts are integers
    assert not np.array_equal(again, enumerate_grids(sizes, 50, 11.9))   # 12-cell grids drop out
