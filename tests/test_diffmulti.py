"""DiffMulti (Al-Hussaeni et al.): split-point mechanism, budget, regions, classifier contract."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.mechanisms import exponential_interval_probabilities
from dpexplore.publish.diffgen import DiffGen
from dpexplore.publish.diffmulti import DiffMulti, fair_allocation, private_split_point, split_utilities
from dpexplore.publish.partition import WeightedRecords

# --------------------------------------------------------------------------- fixtures
CONTINENT = Taxonomy.from_spec("continent", {"type": "categorical", "tree": {"Any_Continent": {
    "New_World": ["North_America", "Australia"], "Old_World": ["Europe", "Asia"]}}})
TABLE_I = pd.DataFrame({"continent": ["North_America", "Australia", "North_America", "Europe", "Asia",
                                      "North_America"],
                        "yob": [1947, 1953, 1955, 1957, 1959, 1968]})
TABLE_I_Y = pd.Series(list("YYNNNY"), name="class")


def table_i_schema(integer: bool = False) -> Schema:
    upper = 1998 if integer else 1999   # integer [1930, 1998] = the paper's [1930, 1999)
    return Schema([Attribute.categorical("continent", taxonomy=CONTINENT),
                   Attribute.numeric("yob", 1930, upper, integer=integer)], "class", ["Y", "N"])


def toy_data(n: int = 2000, seed: int = 0):
    """Three attributes with a known signal: the class is mostly (x > 60) xor (colour is warm)."""
    rng = np.random.default_rng(seed)
    colour = Taxonomy.from_spec("colour", {"type": "categorical", "tree": {"Any": {
        "warm": ["red", "orange", "yellow"], "cold": ["blue", "green"]}}})
    schema = Schema([Attribute.numeric("x", 0, 100, integer=True),
                     Attribute.numeric("z", 0.0, 1.0),
                     Attribute.categorical("colour", taxonomy=colour)], "label", ["a", "b"])
    X = pd.DataFrame({"x": rng.integers(0, 101, n), "z": rng.random(n),
                      "colour": rng.choice(["red", "orange", "yellow", "blue", "green"], n)})
    warm = X["colour"].isin(["red", "orange", "yellow"]).to_numpy()
    signal = (X["x"].to_numpy() > 60) ^ warm
    flip = rng.random(n) < 0.05
    y = pd.Series(np.where(signal ^ flip, "b", "a"), name="label")
    return X, y, schema


# --------------------------------------------------------------------------- the worked example (§4, Ex. 4.5)
def test_worked_example_pieces_lengths_and_max_scores():
    schema = table_i_schema()
    y = schema.encode_target(TABLE_I_Y)
    edges, left, total = split_utilities(TABLE_I["yob"].to_numpy(), y, 2, 1930, 1999, integer=False)
    np.testing.assert_array_equal(np.diff(edges), [17, 6, 2, 2, 2, 9, 31])
    right = total - left
    max_scores = left.max(axis=1) + right.max(axis=1)
    np.testing.assert_array_equal(max_scores, [3, 4, 5, 4, 3, 4, 3])
    best = int(np.argmax(max_scores))   # the noise-free best split lies between 1953 and 1955
    assert (edges[best], edges[best + 1]) == (1953, 1955)


def test_worked_example_split_distribution_matches_exact_probabilities():
    schema = table_i_schema()
    y = schema.encode_target(TABLE_I_Y)
    v = TABLE_I["yob"].to_numpy()
    eps = 2.0
    edges = np.array([1930, 1947, 1953, 1955, 1957, 1959, 1968, 1999], dtype=float)
    exact = exponential_interval_probabilities(edges, [3, 4, 5, 4, 3, 4, 3], epsilon=eps, sensitivity=1)
    # by hand: P ∝ length · exp(ε u / 2)
    w = np.diff(edges) * np.exp(eps * np.array([3, 4, 5, 4, 3, 4, 3]) / 2)
    np.testing.assert_allclose(exact, w / w.sum())
    rng = np.random.default_rng(1)
    n = 10_000
    draws = np.array([private_split_point(v, y, 2, 1930, 1999, integer=False, score="max", epsilon=eps,
                                          sensitivity=1.0, domain_width=69, random_state=rng)
                      for _ in range(n)])
    freq = np.bincount(np.searchsorted(edges, draws, side="right") - 1, minlength=7)[:7] / n
    sd = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(freq - exact) < 5 * sd + 1e-3)
    # with a huge ε the split lands in the best piece
    s = private_split_point(v, y, 2, 1930, 1999, integer=False, score="max", epsilon=1e4, sensitivity=1.0,
                            domain_width=69, random_state=3)
    assert 1953 <= s < 1955


def _brute_force_integer_split(values, y, a, b, eps, utility):
    """P(s) ∝ exp(ε u(s)/2) over every integer split point s ∈ {a+1, ..., b-1}, routing x < s left."""
    s_all = np.arange(a + 1, b)
    u = []
    for s in s_all:
        left = values < s
        if utility == "max":
            u.append(max(np.sum(y[left] == 0), np.sum(y[left] == 1)) + max(np.sum(y[~left] == 0), np.sum(y[~left] == 1)))
        else:  # ncp: widths of [a, s-1] and [s, b-1] over the public width
            u.append(-(left.sum() * (s - 1 - a) + (~left).sum() * (b - 1 - s)) / (b - 1 - a))
    w = np.exp(eps * np.array(u, dtype=float) / 2)
    return s_all, w / w.sum()


@pytest.mark.parametrize("utility,eps", [("max", 1.5), ("ncp", 3.0)])
def test_integer_split_points_follow_the_exponential_mechanism_exactly(utility, eps):
    values = np.array([2, 3, 3, 7, 8, 8, 9])
    y = np.array([0, 0, 1, 1, 1, 0, 1])
    a, b = 0, 12                      # integer region {0, ..., 11}
    s_all, p = _brute_force_integer_split(values, y, a, b, eps, utility)
    rng = np.random.default_rng(7)
    n = 10_000
    draws = np.array([private_split_point(values, y, 2, a, b, integer=True, score=utility, epsilon=eps,
                                          sensitivity=1.0, domain_width=b - 1 - a, random_state=rng)
                      for _ in range(n)])
    assert set(np.unique(draws)) <= set(s_all.astype(float))
    freq = np.array([(draws == s).mean() for s in s_all])
    sd = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(freq - p) < 5 * sd + 1e-3)


def test_continuous_ncp_split_matches_the_integrated_density():
    values = np.array([0.1, 0.15, 0.5, 0.55, 0.9])
    y = np.zeros(5, dtype=int)
    eps = 20.0

    def density(s):
        nl = np.sum(values < s)
        u = -(nl * s + (5 - nl) * (1 - s)) / 1.0
        return np.exp(eps * u / 2)

    cut = [0.0, 0.3, 0.7, 1.0]
    mass = np.array([integrate.quad(density, lo, hi, points=values, limit=200)[0] for lo, hi in zip(cut[:-1], cut[1:])])
    p = mass / mass.sum()
    rng = np.random.default_rng(11)
    n = 10_000
    draws = np.array([private_split_point(values, y, 2, 0.0, 1.0, integer=False, score="ncp", epsilon=eps,
                                          sensitivity=1.0, domain_width=1.0, random_state=rng) for _ in range(n)])
    freq = np.bincount(np.searchsorted(cut, draws, side="right") - 1, minlength=3)[:3] / n
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-3)


@pytest.mark.slow
def test_split_point_privacy_loss_audit():
    """Neighbouring tables (one record removed): the empirical loss must not exceed ε."""
    values = np.array([1, 2, 2, 5, 6, 8, 9, 9])
    y = np.array([0, 0, 1, 1, 1, 0, 1, 1])
    eps = 1.0

    def mech(data, rng):
        v, lab = data
        return private_split_point(v, lab, 2, 0, 11, integer=True, score="max", epsilon=eps,
                                   sensitivity=1.0, domain_width=10, random_state=rng)

    result = privacy_loss(mech, (values, y), (values[:-1], y[:-1]), n_samples=8_000, random_state=5)
    assert not result.violates(eps)


def _package_split_distribution(values, y, a, b, eps, utility):
    """Exact probability of every integer split point s ∈ {a+1, …, b−1} under the PACKAGE's
    sampler: :func:`private_split_point` returns the probability of each piece it draws from;
    inside a piece Max is uniform (§4.3) and NCP follows exp(ε·u(s)/2), whose shape is taken from
    the brute force (only the piece masses come from the package)."""
    edges, _, _ = split_utilities(values, y, 2, a, b, integer=True)
    _, probs = private_split_point(values, y, 2, a, b, integer=True, score=utility, epsilon=eps, sensitivity=1.0,
                                   domain_width=b - 1 - a, random_state=0, return_probabilities=True)
    s_all, brute = _brute_force_integer_split(values, y, a, b, eps, utility)
    piece = np.searchsorted(edges, s_all, side="left") - 1        # piece k holds edges[k]+1 … edges[k+1]
    out = np.empty(s_all.size)
    for k in np.unique(piece):
        m = piece == k
        out[m] = probs[k] * brute[m] / brute[m].sum()
    assert np.isclose(probs.sum(), 1.0) and np.all(probs[np.unique(piece)] > 0)
    return out


@pytest.mark.parametrize("utility", ["max", "ncp"])
def test_split_point_exact_privacy_loss_over_all_neighbours(utility):
    """The package's split-point sampler, exactly: its distribution over every split point agrees
    with the brute-force exponential mechanism, and over every add/remove neighbour (each record
    removed; a record of either class added at each domain edge and in the middle) the log-ratio
    never exceeds ε. A sensitivity bound too small, a missing interval-length weight or a
    missing factor 2 in the exponent makes this fail (planted and seen to fail)."""
    rng = np.random.default_rng(3)
    eps = 1.0
    values = rng.integers(0, 15, 12)
    y = rng.integers(0, 2, 12)
    a, b = 0, 16
    p = _package_split_distribution(values, y, a, b, eps, utility)
    np.testing.assert_allclose(p, _brute_force_integer_split(values, y, a, b, eps, utility)[1], rtol=1e-9)
    neighbours = [(values[np.arange(values.size) != i], y[np.arange(values.size) != i]) for i in range(values.size)]
    neighbours += [(np.r_[values, v], np.r_[y, c]) for v in (a, 7, b - 1) for c in (0, 1)]
    worst = 0.0
    for v2, y2 in neighbours:
        q = _package_split_distribution(v2, y2, a, b, eps, utility)
        worst = max(worst, np.abs(np.log(p) - np.log(q)).max())
    assert 0.05 < worst <= eps + 1e-9


# --------------------------------------------------------------------------- fair allocation (§4.2, Eq. 10)
def test_fair_allocation_paper_examples():
    np.testing.assert_array_equal(fair_allocation([8, 2], 21), [16, 4])                 # Ex. 4.4
    np.testing.assert_array_equal(fair_allocation([8, 2], 21, fair=False), [10, 10])    # Ex. 4.2


def test_fair_allocation_uses_only_clamped_noisy_sizes():
    # a negative noisy size gets nothing; the rest share h' - 1 exactly
    np.testing.assert_array_equal(fair_allocation([-3.0, 5.0, 5.0], 11, random_state=0), [0, 5, 5])
    # all sizes ≤ 0: even split, leftover to random children, still summing to h' - 1
    alloc = fair_allocation([-1.0, -2.0, 0.0], 6, random_state=0)
    assert alloc.sum() == 5 and alloc.max() - alloc.min() <= 1
    rng = np.random.default_rng(2)
    for _ in range(200):
        sizes = rng.normal(10, 20, size=rng.integers(2, 6))
        h = int(rng.integers(0, 50))
        alloc = fair_allocation(sizes, h, random_state=rng)
        assert alloc.sum() == max(h - 1, 0) and np.all(alloc >= 0)


# --------------------------------------------------------------------------- the whole release
def test_epsilon_prime_matches_the_adult_setting():
    rng = np.random.default_rng(0)
    attrs = [Attribute.numeric(f"n{i}", 0, 10, integer=True) for i in range(6)]
    schema = Schema(attrs, "c", ["0", "1"])
    X = pd.DataFrame({f"n{i}": rng.integers(0, 11, 50) for i in range(6)})
    y = pd.Series(rng.choice(["0", "1"], 50))
    m = DiffMulti(1.0, h=5, max_depth=63, random_state=0, schema=schema).fit(X, y)
    assert m.epsilon_prime_ == pytest.approx(1.0 / 390)
    m = DiffMulti(1.0, h=5, random_state=0, schema=schema).fit(X, y)      # |g| = 6 numeric × height 7
    assert m.max_depth_ == 42 and m.epsilon_prime_ == pytest.approx(1.0 / (2 * (6 + 3 * 42)))


def _path_costs(ledger: pd.DataFrame) -> np.ndarray:
    """Cost of every root-to-node path: a spend counts for every scope below the one it was made in."""
    part = ledger[ledger["scope"].str.startswith("DiffMulti partitioning")]
    scopes = part["scope"].to_numpy()
    eps = part["epsilon"].to_numpy()
    return np.array([eps[[s == t or s.startswith(t + "/") for t in scopes]].sum() for s in scopes])


@pytest.mark.parametrize("reuse", [True, False])
def test_ledger_sums_to_epsilon_and_paths_stay_within_half(reuse):
    X, y, schema = toy_data()
    m = DiffMulti(0.7, h=60, random_state=1, reuse_budget=reuse, schema=schema).fit(X, y)
    ledger = m.ledger_
    assert ledger["charged"].sum() == pytest.approx(0.7 if reuse else m.partitioning_epsilon_ + 0.35)
    costs = _path_costs(ledger)
    assert costs.max() == pytest.approx(m.partitioning_epsilon_)
    assert costs.max() <= 0.35 + 1e-12
    labels = set(ledger["label"])
    assert {"split point x", "split point z", "attribute choice", "child sizes",
            "DiffMulti leaf × class counts"} <= labels


def test_children_budgets_sum_to_parent_minus_one():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=40, random_state=2, schema=schema).fit(X, y)
    tree = m.tree_
    assert tree.loc[0, "h"] == 40
    internal = tree[tree["children"] > 0]
    assert len(internal) >= 1
    for _, node in internal.iterrows():
        kids = tree[tree["parent"] == node["node"]]
        assert len(kids) == node["children"]
        assert kids["h"].sum() == node["h"] - 1
    assert (tree.loc[tree["children"] > 0, "h"] > 0).all()
    assert (tree["depth"] <= m.max_depth_).all()
    # at most h specializations in total
    assert len(internal) <= 40


def _contains(m, X: pd.DataFrame) -> np.ndarray:
    """Boolean (records × regions): does region r contain record i? (from the published regions)"""
    inside = np.ones((len(X), m.n_regions_), dtype=bool)
    for a in m.schema_.predictors:
        attr = m.schema_[a]
        r = m._regions[a]
        if attr.kind == "numeric":
            v = X[a].to_numpy(dtype=float)[:, None]
            top = r[1] >= (attr.upper + 1 if attr.integer else attr.upper)
            inside &= (v >= r[0]) & ((v < r[1]) | (top & (v <= r[1])))
        else:
            leaves = attr.taxonomy.leaf_codes(X[a])
            node_at = np.stack([attr.taxonomy.node_codes(leaves, int(d)) for d in r[0]], axis=1)
            inside &= node_at == r[1][None, :]
    return inside


def _grid_over_domain(schema, n, seed):
    rng = np.random.default_rng(seed)
    cols = {}
    for a in schema.predictors:
        attr = schema[a]
        if attr.kind == "numeric":
            cols[a] = (rng.integers(attr.lower, attr.upper + 1, n) if attr.integer
                       else rng.uniform(attr.lower, attr.upper, n))
            cols[a][:2] = [attr.lower, attr.upper]       # the domain's end points too
        else:
            cols[a] = rng.choice(list(attr.taxonomy.leaves), n)
    return pd.DataFrame(cols)


def test_leaf_regions_are_disjoint_and_cover_the_domain():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=80, random_state=3, schema=schema).fit(X, y)
    probe = _grid_over_domain(schema, 5000, 4)       # values anywhere in the public domain
    inside = _contains(m, probe)
    assert np.all(inside.sum(axis=1) == 1)
    np.testing.assert_array_equal(inside.argmax(axis=1), m.apply(probe))
    assert m.partitions_.shape == (m.n_regions_, 3 + 2 + 1)
    # every region is published with a count for every class (empty ones included)
    assert np.isfinite(m.partitions_[["a", "b"]].to_numpy()).all()


def test_table_i_release_publishes_every_region_and_predicts():
    schema = table_i_schema(integer=True)
    m = DiffMulti(1.0, h=6, random_state=0, schema=schema).fit(TABLE_I, TABLE_I_Y)
    probe = _grid_over_domain(schema, 500, 1)
    assert np.all(_contains(m, probe).sum(axis=1) == 1)
    assert set(m.predict(TABLE_I)) <= {"Y", "N"}
    assert m.predict_proba(TABLE_I).shape == (6, 2)
    np.testing.assert_allclose(m.predict_proba(TABLE_I).sum(axis=1), 1.0)


def test_h_zero_gives_one_region_and_large_epsilon_finds_the_signal():
    X, y, schema = toy_data()
    m0 = DiffMulti(1.0, h=0, random_state=0, schema=schema).fit(X, y)
    assert m0.n_regions_ == 1 and len(m0.tree_) == 1
    assert len(set(m0.predict(X))) == 1
    # oracle-like ε: the greedy choices recover (x > 60) xor warm; accuracy near the 95% ceiling
    m = DiffMulti(1e5, h=30, max_depth=6, random_state=0, schema=schema).fit(X, y)
    assert m.score(X, y) > 0.9
    top = m.tree_.loc[m.tree_["parent"] == -1, "attribute"].iloc[0]
    assert top in ("x", "colour")


def test_seeded_runs_are_reproducible_and_differ_across_seeds():
    X, y, schema = toy_data(500)
    a = DiffMulti(1.0, h=20, random_state=5, schema=schema).fit(X, y).partitions_
    b = DiffMulti(1.0, h=20, random_state=5, schema=schema).fit(X, y).partitions_
    c = DiffMulti(1.0, h=20, random_state=6, schema=schema).fit(X, y).partitions_
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


@pytest.mark.parametrize("utility", ["ncp", "dm"])
def test_general_purpose_utilities(utility):
    X, y, schema = toy_data(800)
    m = DiffMulti(1.0, h=30, utility=utility, n_max=10_000, random_state=0, schema=schema).fit(X, y)
    assert m.epsilon_spent_ == pytest.approx(1.0)
    assert np.all(_contains(m, _grid_over_domain(schema, 1000, 2)).sum(axis=1) == 1)


def test_synthetic_records_stay_inside_their_regions():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=30, random_state=4, schema=schema).fit(X, y)
    syn = m.synthetic(random_state=0)
    assert list(syn.columns) == ["x", "z", "colour", "label"]
    # the public size rule: the unclipped sum of the noisy counts (not Σ max(0, ⌊count⌋))
    assert len(syn) == max(1, round(m.noisy_counts_.sum()))
    schema.validate(syn[schema.predictors], syn["label"])                 # inside the public domain
    assert np.issubdtype(syn["x"].dtype, np.integer)
    # each sampled record falls in a region that released its class with a positive noisy count
    region = m.apply(syn)
    cls = pd.Categorical(syn["label"], categories=["a", "b"]).codes
    assert np.all(m.noisy_counts_[region, cls] > 0)
    gen = m.synthetic(values="generalized")
    assert len(gen) == len(syn)
    assert set(gen["colour"]) <= {"Any", "warm", "cold", "red", "orange", "yellow", "blue", "green"}
    # same seed, same records
    pd.testing.assert_frame_equal(syn, m.synthetic(random_state=0))


def test_generalize_maps_test_records_through_the_same_tree():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=30, random_state=4, schema=schema).fit(X, y)
    g = m.generalize(X.iloc[:50])
    expected = m.partitions_[schema.predictors].iloc[m.apply(X.iloc[:50])].reset_index(drop=True)
    pd.testing.assert_frame_equal(g.reset_index(drop=True), expected)
    # values outside the public range are clamped, not rejected (ours; Al-Hussaeni et al. 2018 §5.1
    # maps test records through the training regions)
    out = X.iloc[:3].copy()
    out["x"] = [-5, 200, 50]
    assert len(m.predict(out)) == 3


def test_sklearn_contract():
    X, y, schema = toy_data(400)
    m = DiffMulti(0.5, h=10, random_state=0)
    assert clone(m).get_params() == m.get_params()
    m.set_params(h=12)
    assert m.h == 12
    pipe = Pipeline([("dm", DiffMulti(0.5, h=10, random_state=0))]).set_params(dm__schema=schema).fit(X, y)
    assert len(pipe.predict(X)) == len(X)
    # integer labels come back as integers, so score() works
    yi = (y == "b").astype(int)
    schema_i = Schema([schema[a] for a in schema.predictors], "label", ["0", "1"])
    mi = DiffMulti(1.0, h=10, random_state=0, schema=schema_i).fit(X, yi)
    assert set(mi.predict(X)) <= {0, 1}
    assert 0 <= mi.score(X, yi) <= 1


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params,match", [
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"), ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": float("inf")}, "epsilon"), ({"h": -1}, "h"), ({"max_depth": -2}, "max_depth"),
    ({"utility": "gini"}, "utility"), ({"utility": "dm"}, "n_max"), ({"allocation": "greedy"}, "allocation"),
    ({"numeric_height": 0}, "numeric_height"), ({"min_width": 2.0}, "min_width"),
])
def test_bad_parameters_raise_before_spending(params, match):
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(5.0)
    kwargs = {"epsilon": 1.0, **params}
    with pytest.raises(ValueError, match=match):
        DiffMulti(accountant=acc, **kwargs, schema=schema).fit(X, y)
    assert acc.spent == 0 and acc.ledger.empty


def test_bad_types_and_data_raise_before_spending():
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(5.0)
    with pytest.raises(TypeError, match="h"):
        DiffMulti(1.0, h=2.5, accountant=acc, schema=schema).fit(X, y)
    with pytest.raises(TypeError, match="schema"):
        DiffMulti(1.0, accountant=acc, schema=schema.to_dict()).fit(X, y)
    with pytest.raises(TypeError, match="[Ss]parse"):
        import scipy.sparse as sp
        DiffMulti(1.0, accountant=acc, schema=schema.subset(["x", "z"])).fit(sp.csr_matrix(X[["x", "z"]].to_numpy()), y)
    with pytest.raises(ValueError, match="continuous"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="unknown_col|does not know"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(X.assign(unknown_col=1), y)
    bad = X.copy()
    bad.loc[3, "z"] = np.nan
    with pytest.raises(ValueError, match="NaN|missing"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(bad, y)
    with pytest.raises(ValueError, match="class"):   # a label that is not a declared class
        DiffMulti(1.0, accountant=acc, schema=schema).fit(X, pd.Series(["not-a-class"] * len(X)))
    with pytest.raises(ValueError, match="empty"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(X.iloc[:0], y.iloc[:0])
    with pytest.raises(ValueError, match="rows"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(X, y.iloc[:-1])
    out = X.copy()
    out.loc[0, "x"] = 500
    with pytest.raises(ValueError, match="x"):
        DiffMulti(1.0, accountant=acc, schema=schema).fit(out, y)
    with pytest.raises(ValueError, match="n_max"):
        DiffMulti(1.0, utility="dm", n_max=10, accountant=acc, schema=schema).fit(X, y)
    assert acc.spent == 0 and acc.ledger.empty


def test_exhausted_budget_raises_before_anything_is_spent():
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(1.0)
    acc.spend(0.6, "earlier release")
    with pytest.raises(BudgetExceededError):
        DiffMulti(0.5, h=5, accountant=acc, schema=schema).fit(X, y)
    assert acc.spent == pytest.approx(0.6) and len(acc.ledger) == 1
    # a shared accountant: this release's ledger_ only shows its own spends
    m = DiffMulti(0.4, h=5, accountant=acc, random_state=0, schema=schema).fit(X, y)
    assert m.ledger_["charged"].sum() == pytest.approx(0.4)
    assert acc.remaining == pytest.approx(0.0, abs=1e-9)


def test_inputs_are_not_mutated():
    X, y, schema = toy_data(300)
    X0, y0, spec0 = X.copy(), y.copy(), schema.to_dict()
    m = DiffMulti(1.0, h=10, random_state=0, schema=schema).fit(X, y)
    m.predict(X)
    m.synthetic(random_state=0)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    assert schema.to_dict() == spec0


def test_fitted_model_holds_no_private_records():
    X, y, schema = toy_data(300)
    m = DiffMulti(1.0, h=10, random_state=0, schema=schema).fit(X, y)
    assert not hasattr(m, "_data") and not hasattr(m, "_y")
    assert all(P.idx is None for P in m._leaves)
    assert "noisy_size" in m.tree_.columns and "n" not in m.tree_.columns


def test_unfitted_model_raises():
    with pytest.raises(AttributeError, match="fit"):
        DiffMulti(1.0).predict(pd.DataFrame({"x": [1]}))


# --------------------------------------------------------------------------- Adult
def test_adult_release_setting_and_classifier():
    from dpexplore.datasets import load_adult, train_test_split
    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
    m = DiffMulti(1.0, h=300, random_state=0, schema=schema).fit(X_tr, y_tr)
    # |g| = Σ(categorical taxonomy height − 1) = 20, plus 6 numeric × 7 (the paper: 21 + 42 = 63)
    assert m.max_depth_ == 62 and m.epsilon_prime_ == pytest.approx(1 / (2 * (6 + 3 * 62)))
    assert m.ledger_["charged"].sum() == pytest.approx(1.0)
    acc = m.train_classifier(random_state=0).score(X_te, y_te)
    majority = float(np.mean(y_te == y_tr.mode()[0]))
    assert acc > majority + 0.03


# --------------------------------------------------------------------------- pictures (notebook 03)
def test_rectangles_tile_the_plane_and_the_charts_build():
    import matplotlib.pyplot as plt

    from dpexplore.plots.diffmulti import partition_comparison, tree_figure
    from dpexplore.publish.diffgen import DiffGen
    X, y, schema = toy_data(1500)
    pair = ["x", "colour"]
    multi = DiffMulti(1.0, h=40, random_state=0, schema=schema).fit(X[pair], y)
    grid = DiffGen(1.0, steps=4, random_state=0, schema=schema).fit(X[pair], y)
    for release in (multi, grid):
        r = release.rectangles(*pair)
        assert len(r) == release.n_regions_
        # x: integer range [0, 100] drawn as [0, 101); colour: 5 leaves at positions 0..5
        assert ((r["x1"] - r["x0"]) * (r["y1"] - r["y0"])).sum() == pytest.approx(101 * 5)
        assert r["x0"].min() == 0 and r["x1"].max() == 101 and r["y0"].min() == 0 and r["y1"].max() == 5
    with pytest.raises(ValueError, match="two attributes"):
        DiffMulti(1.0, h=5, random_state=0, schema=schema).fit(X, y).rectangles("x", "z")
    spec = partition_comparison(multi.rectangles(*pair), grid.rectangles(*pair), *pair).to_dict()
    assert len(spec["hconcat"]) == 2
    fig = tree_figure(multi.tree_, max_depth=2)
    assert len(fig.axes[0].texts) >= 3
    plt.close(fig)


def test_explorer_redraws_when_a_slider_moves():
    from dpexplore.widgets.diffmulti import DiffMultiExplorer
    X, y, schema = toy_data(600)
    ex = DiffMultiExplorer(X, y, schema, x="x", y_attribute="colour", h=30, steps=3)
    first = ex.last
    ex.h_slider.value = 100
    assert ex.last is not first and ex.last[0].h == 100
    ex.eps_slider.value = 0.5
    assert ex.last[0].epsilon == pytest.approx(0.5) and ex.last[1].epsilon == pytest.approx(0.5)
    assert "regions" in ex.info.value
    ex.y_picker.value = "x"
    assert "two different" in ex.info.value


# --------------------------------------------------------------------------- added in review
def test_utility_parameter_and_unknown_keywords():
    m = DiffMulti(1.0, h=5, utility="ncp")
    assert m.utility == "ncp" and clone(m).utility == "ncp"
    X, y, schema = toy_data(300)
    assert m.set_params(random_state=0, schema=schema).fit(X, y).epsilon_spent_ == pytest.approx(1.0)
    with pytest.raises(TypeError, match="unexpected"):
        DiffMulti(1.0, depth=3)
    with pytest.raises(TypeError, match="unexpected"):
        DiffMulti(1.0, score="ncp")                       # the utility is ``utility=``


def _children_counts(child, y, n_children, n_classes=2):
    return np.bincount(child * n_classes + y, minlength=n_children * n_classes).reshape(n_children, n_classes)


def test_score_sensitivities_by_brute_force():
    """Removing any one record changes Max and NCP by ≤ 1 and DM by ≤ 2|D| + 1 (Al-Hussaeni et al. 2018 §4.2)."""
    from dpexplore.publish.diffmulti import child_scores, score_sensitivity
    rng = np.random.default_rng(0)
    for _ in range(30):
        n, k = int(rng.integers(2, 40)), int(rng.integers(2, 5))
        child, y = rng.integers(0, k, n), rng.integers(0, 2, n)
        ncp = rng.random(k)
        full = _children_counts(child, y, k)
        for i in range(n):
            keep = np.arange(n) != i
            less = _children_counts(child[keep], y[keep], k)
            for utility in ("max", "ncp", "dm"):
                diff = abs(child_scores(full, utility, ncp) - child_scores(less, utility, ncp))
                assert diff <= score_sensitivity(utility, n_max=n) + 1e-12



def test_depth_cap_binds_and_every_path_stays_within_half():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=500, max_depth=3, random_state=1, schema=schema).fit(X, y)
    assert m.epsilon_prime_ == pytest.approx(1.0 / (2 * (2 + 3 * 3)))      # |A_num| = 2, |g| = 3
    assert m.tree_["depth"].max() == 3                                    # h is ample: the cap stops it
    assert (m.tree_.loc[m.tree_["children"] > 0, "depth"] < 3).all()       # depth < |g| to split
    costs = _path_costs(m.ledger_)
    assert costs.max() == pytest.approx(m.partitioning_epsilon_) and costs.max() <= 0.5 + 1e-12
    # the root pays one split point per numeric attribute, one choice and one size vector
    root = m.ledger_[m.ledger_["scope"] == "DiffMulti partitioning/root"]
    assert sorted(root["label"]) == ["attribute choice", "child sizes", "split point x", "split point z"]
    assert m.ledger_["charged"].sum() == pytest.approx(1.0)


def test_even_allocation_measures_no_sizes_and_splits_evenly():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=30, allocation="even", random_state=0, schema=schema).fit(X, y)
    assert "child sizes" not in set(m.ledger_["label"])
    tree = m.tree_
    for _, node in tree[tree["children"] > 0].iterrows():
        kids = tree.loc[tree["parent"] == node["node"], "h"]
        assert kids.sum() == node["h"] - 1 and kids.max() - kids.min() <= 1


def test_partitions_with_one_unit_left_do_not_measure_child_sizes():
    X, y, schema = toy_data()
    m = DiffMulti(1.0, h=40, random_state=2, schema=schema).fit(X, y)
    tree = m.tree_
    internal = tree[tree["children"] > 0]
    n_measured = int((internal["h"] > 1).sum())
    assert (m.ledger_["label"] == "child sizes").sum() == n_measured
    last = internal.loc[internal["h"] == 1, "node"]
    assert len(last) > 0
    kids = tree[tree["parent"].isin(last)]
    assert kids["noisy_size"].isna().all() and (kids["h"] == 0).all()


def test_bad_flag_raises_before_spending():
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(2.0)
    with pytest.raises(TypeError, match="reuse_budget"):
        DiffMulti(1.0, reuse_budget="no", accountant=acc, schema=schema).fit(X, y)
    with pytest.raises(TypeError, match="max_depth"):
        DiffMulti(1.0, max_depth=2.5, accountant=acc, schema=schema).fit(X, y)
    assert acc.ledger.empty


# ------------------------------ declared classes, nested budgets, public caps, scikit-learn's tools
def _three_class_int_data(n: int = 300, with_rare: bool = True):
    """Integer labels 0/1/2 under a schema declaring "0", "1", "2"; class 2 occurs once or not at all."""
    X, y, schema = toy_data(n)
    yi = (y == "b").astype(int).to_numpy().copy()
    if with_rare:
        yi[0] = 2
    schema3 = Schema([schema[a] for a in schema.predictors], "label", ["0", "1", "2"])
    return X, pd.Series(yi, name="label"), schema3


@pytest.mark.parametrize("cls,kw", [(DiffMulti, {"h": 10}), (DiffGen, {"steps": 3})])
def test_classes_are_the_schemas_whatever_the_data_holds(cls, kw):
    """classes_, predictions and the synthetic target column are the schema's
    classes in its order and in y's dtype, whether or not the rare class occurs in y (old code:
    ints when every class occurs, a mix with the string '2' when one is missing)."""
    outs = []
    for with_rare in (True, False):
        X, y, schema = _three_class_int_data(with_rare=with_rare)
        m = cls(1.0, random_state=0, **kw, schema=schema).fit(X, y)
        assert m.classes_.dtype == y.dtype and m.classes_.tolist() == [0, 1, 2]
        pred = m.predict(X)
        assert pred.dtype == y.dtype and set(pred.tolist()) <= {0, 1, 2}
        syn = m.synthetic(random_state=0)
        assert set(syn["label"].tolist()) <= {0, 1, 2} and all(type(v) is not str for v in syn["label"])
        outs.append((m.classes_.dtype, tuple(m.classes_.tolist())))
    assert outs[0] == outs[1]
    # strings stay strings, in the schema's order (not y's order of appearance)
    X, y, schema = toy_data(200)
    m = cls(1.0, random_state=0, **kw, schema=Schema([schema[a] for a in schema.predictors], "label", ["b", "a"])).fit(X, y)
    assert m.classes_.tolist() == ["b", "a"]


@pytest.mark.parametrize("cls,kw", [(DiffMulti, {"h": 20}), (DiffMulti, {"h": 20, "reuse_budget": False}),
                                    (DiffMulti, {"h": 20, "allocation": "even"}), (DiffGen, {"steps": 4})])
@pytest.mark.parametrize("sibling", [2.0, 0.3])
def test_nested_in_a_parallel_branch_spends_exactly_its_epsilon(cls, kw, sibling):
    """Inside acc.parallel/acc.branch next to a sibling that spent more, the old
    code read its partitioning cost off the (unmoved) global total and gave the counts the whole ε
    again (branch cost ≈ 1.46 at ε = 1). The branch must cost exactly ε, and epsilon_spent_ say so."""
    X, y, schema = toy_data(400)
    budget, eps = 10.0, 1.0
    acc = BudgetAccountant(budget)
    with acc.parallel("halves"):
        with acc.branch("sibling"):
            acc.spend(sibling, "sibling analysis")
        with acc.branch("release"):
            m = cls(eps, accountant=acc, random_state=0, **kw, schema=schema).fit(X, y)
            branch_cost = budget - acc.remaining
    assert branch_cost <= eps * (1 + 1e-9)
    assert m.epsilon_spent_ == pytest.approx(branch_cost, rel=1e-9)
    assert branch_cost == pytest.approx(m.partitioning_epsilon_ + m.leaf_epsilon_, rel=1e-9)
    if kw.get("reuse_budget", True):
        assert branch_cost == pytest.approx(eps, rel=1e-9)
    else:
        assert m.leaf_epsilon_ == pytest.approx(eps / 2) and 0 < m.partitioning_epsilon_ <= eps / 2 * (1 + 1e-9)
    assert acc.spent == pytest.approx(max(sibling, branch_cost), rel=1e-9)


@pytest.mark.parametrize("cls,kw", [(DiffMulti, {"h": 5}), (DiffGen, {"steps": 2})])
def test_tiny_epsilon_synthetic_is_capped_by_a_public_limit(cls, kw):
    """At ε = 1e-12 the noisy counts are ~1e12: synthetic() clamps its size to the public
    max_synthetic_rows instead of trying to allocate petabytes (old code: MemoryError or worse)."""
    X, y, schema = toy_data(100)
    m = cls(1e-12, random_state=0, max_synthetic_rows=500, **kw, schema=schema).fit(X, y)
    assert 1 <= len(m.synthetic(random_state=0)) <= 500
    assert len(m.synthetic(random_state=0, n=10**15)) == 500
    assert m.released_counts().min() >= 0      # no int64 overflow either
    m.predict(X)                               # the release itself still works


def _private_objects(obj, seen=None):
    """Every numpy array reachable from a fitted object (through dicts, lists, __dict__/__slots__)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _private_objects(v, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _private_objects(v, seen)
    elif hasattr(obj, "__slots__") and type(obj).__module__.startswith("dpexplore.publish"):
        for k in obj.__slots__:
            yield from _private_objects(getattr(obj, k, None), seen)


@pytest.mark.parametrize("cls,kw", [(DiffMulti, {"h": 30}), (DiffGen, {"steps": 5})])
def test_no_non_private_diagnostics_ride_on_the_release(cls, kw):
    """The fitted object (what a pickle carries) holds DP outputs and public data only: no record
    indices or per-record arrays, no true counts (the leaf × class counts it holds are noisy)."""
    import pickle
    X, y, schema = toy_data(500)
    m = cls(1.0, random_state=0, **kw, schema=schema).fit(X, y)
    arrays = list(_private_objects(vars(m)))
    assert all(a.shape[:1] != (len(X),) for a in arrays), "a per-record array rides on the release"
    true = np.bincount(m._leaf_index(WeightedRecords(X, schema)) * 2 + schema.encode_target(y), minlength=m.noisy_counts_.size)
    assert not any(a.size == true.size and np.array_equal(a.ravel(), true) for a in arrays)
    fitted = set(vars(m)) - set(m.get_params())
    assert not [k for k in fitted if k.lstrip("_").startswith(("true", "score", "candidates", "run", "n_"))
                and k != "n_features_in_"]
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(X), m.predict(X))


@pytest.mark.parametrize("cls,grid", [(DiffMulti, {"epsilon": [0.5, 2.0], "h": [5, 20]}),
                                      (DiffGen, {"epsilon": [0.5, 2.0], "steps": [2, 6]})])
def test_sklearn_tools_numpy_arrays_and_own_ledgers(cls, grid):
    """Issue 15: GridSearchCV over ε and a method parameter, cross_val_score, clone and pickle work,
    on DataFrames and NumPy arrays; each fit's ε is in its own ledger_."""
    import pickle
    import warnings
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from dpexplore.domain import PrivacyLeakWarning
    X, y, schema = toy_data(600)
    Xn = X[["x", "z"]]
    gs = GridSearchCV(cls(random_state=0, schema=schema.subset(["x", "z"])), grid, cv=3).fit(Xn, y)
    assert set(gs.best_params_) == set(grid)
    best = gs.best_estimator_
    assert best.ledger_["charged"].sum() == pytest.approx(best.epsilon) == pytest.approx(best.epsilon_spent_)
    assert list(best.feature_names_in_) == ["x", "z"] and best.n_features_in_ == 2
    scores = cross_val_score(cls(1.0, random_state=0, schema=schema.subset(["x", "z"])), Xn, y, cv=3)
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
    # NumPy input: columns x0, x1, … and an inferred schema, with a PrivacyLeakWarning
    arr, yi = Xn.to_numpy(), (y == "b").astype(int).to_numpy()
    with pytest.warns(PrivacyLeakWarning):
        m = cls(1.0, random_state=0).fit(arr, yi)
    assert m.n_features_in_ == 2 and not hasattr(m, "feature_names_in_")
    assert m.classes_.tolist() == [0, 1] and m.predict(arr).dtype == yi.dtype
    with pytest.raises(ValueError, match="features"):
        m.predict(arr[:, :1])
    c = clone(m)
    assert c.get_params() == m.get_params() and not hasattr(c, "classes_")
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(arr), m.predict(arr))
    assert back.ledger_.equals(m.ledger_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        m2 = clone(m).fit(arr, yi)
    assert m2.accountant_ is not m.accountant_ and m2.ledger_["charged"].sum() == pytest.approx(1.0)


def test_deep_trees_are_refused_before_spending():
    """Public sizes that could fail mid-tree (paths deeper than MAX_TREE_DEPTH) are refused
    before the first spend."""
    X, y, schema = toy_data(200)
    acc = BudgetAccountant(5.0)
    with pytest.raises(ValueError, match="MAX_TREE_DEPTH"):
        DiffMulti(1.0, h=5000, max_depth=5000, accountant=acc, schema=schema).fit(X, y)
    assert acc.ledger.empty and not hasattr(DiffMulti(1.0), "accountant_")
