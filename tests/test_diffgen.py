"""DiffGen baseline (Mohammed et al. 2011): global specializations, budget, grid release."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.publish import diffgen as diffgen_module
from dpexplore.publish.complete import count_noise_sd
from dpexplore.publish.diffgen import DiffGen
from dpexplore.publish.partition import count_reliability
from dpexplore.publish.sparse_histogram import noise_ceiling
from dpexplore.sensitivity import sum_sensitivity

COLOUR = Taxonomy.from_spec("colour", {"type": "categorical", "tree": {"Any": {
    "warm": ["red", "orange", "yellow"], "cold": ["blue", "green"]}}})


def toy_data(n: int = 2000, seed: int = 0):
    """The class is mostly (x > 60) xor (colour is warm); z is noise."""
    rng = np.random.default_rng(seed)
    schema = Schema([Attribute.numeric("x", 0, 100, integer=True),
                     Attribute.numeric("z", 0.0, 1.0),
                     Attribute.categorical("colour", taxonomy=COLOUR)], "label", ["a", "b"])
    X = pd.DataFrame({"x": rng.integers(0, 101, n), "z": rng.random(n),
                      "colour": rng.choice(["red", "orange", "yellow", "blue", "green"], n)})
    warm = X["colour"].isin(["red", "orange", "yellow"]).to_numpy()
    signal = (X["x"].to_numpy() > 60) ^ warm
    y = pd.Series(np.where(signal ^ (rng.random(n) < 0.05), "b", "a"), name="label")
    return X, y, schema


def test_epsilon_prime_and_ledger():
    X, y, schema = toy_data()
    m = DiffGen(0.8, steps=4, random_state=0, schema=schema).fit(X, y)
    assert m.epsilon_prime_ == pytest.approx(0.8 / (2 * (2 + 2 * 4)))      # |A_num| = 2, h = 4
    ledger = m.ledger_
    assert ledger["charged"].sum() == pytest.approx(0.8)
    # specialization: |A_num| initial split points + one choice per step + ≤ one (parallel) split per step
    assert m.partitioning_epsilon_ <= 0.4 + 1e-12
    assert (ledger["label"].str.endswith("specialization")).sum() == len(m.history_) == 4
    # the two halves of a split interval are charged once (parallel composition)
    par = ledger[ledger["scope"].str.contains("split points")]
    for _, grp in par.groupby("scope"):
        assert grp["charged"].sum() == pytest.approx(grp["epsilon"].max())


def test_grid_is_the_product_of_the_cuts_and_covers_the_domain():
    X, y, schema = toy_data()
    m = DiffGen(1.0, steps=5, random_state=1, schema=schema).fit(X, y)
    shape = m.grid_shape_
    assert m.n_regions_ == int(np.prod(shape)) == len(m.partitions_)
    # every value of the public domain falls in exactly one cell, and apply() finds it
    rng = np.random.default_rng(0)
    probe = pd.DataFrame({"x": rng.integers(0, 101, 3000), "z": rng.random(3000),
                          "colour": rng.choice(list(COLOUR.leaves), 3000)})
    probe.loc[0, ["x", "z"]] = [0, 0.0]
    probe.loc[1, ["x", "z"]] = [100, 1.0]
    cell = m.apply(probe)
    parts = m.partitions_
    for a in ("x", "z"):
        r = m._regions[a]
        v = probe[a].to_numpy(dtype=float)
        top = r[1][cell] >= (101 if a == "x" else 1.0)
        assert np.all((v >= r[0][cell]) & ((v < r[1][cell]) | (top & (v <= r[1][cell]))))
    d, node = m._regions["colour"]
    leaves = COLOUR.leaf_codes(probe["colour"])
    assert np.all(np.array([COLOUR.node_codes(leaves[i], int(d[c])) for i, c in enumerate(cell)]) == node[cell])
    # single-dimensional: each attribute's cut is shared by all cells (a grid, not a tree)
    assert parts.groupby("colour")["x"].nunique().nunique() == 1


def test_large_epsilon_picks_the_best_specialization_first():
    X, y, schema = toy_data()
    m = DiffGen(1e5, steps=1, random_state=0, schema=schema).fit(X, y)
    # Max of 'colour' (warm/cold) vs x split at 60: both informative only jointly; z is noise.
    assert m.history_.loc[0, "attribute"] in ("x", "colour")
    m = DiffGen(1e5, steps=3, random_state=0, schema=schema).fit(X, y)
    assert set(m.history_["attribute"]) >= {"x", "colour"}
    assert m.score(X, y) > 0.85


def test_steps_zero_and_exhausted_candidates():
    X, y, schema = toy_data(300)
    m = DiffGen(1.0, steps=0, random_state=0, schema=schema).fit(X, y)
    assert m.n_regions_ == 1 and m.ledger_["charged"].sum() == pytest.approx(1.0)
    # only a two-level categorical attribute: at most 1 + 2 specializations exist
    Xc = X[["colour"]]
    m = DiffGen(1.0, steps=10, random_state=0, schema=schema).fit(Xc, y)
    assert len(m.history_) == 3 and m.n_regions_ == 5
    assert m.ledger_["charged"].sum() == pytest.approx(1.0)           # unused ε' reused by the counts
    m = DiffGen(1.0, steps=10, reuse_budget=False, random_state=0, schema=schema).fit(Xc, y)
    assert m.ledger_["charged"].sum() < 1.0


@pytest.mark.parametrize("reuse_budget, counts_epsilon", [(True, 1.0), (False, 0.5)])
def test_steps_zero_without_numeric_attributes_spends_what_it_reports(reuse_budget, counts_epsilon):
    """No numeric attribute and no step: phase 1 has no operation (ε' = ε/(2·0) divided by zero);
    its ε/2 goes to the counts with reuse_budget, like the ε' of steps that could not run."""
    X, y, schema = toy_data(300)
    acc = BudgetAccountant(5.0)
    m = DiffGen(1.0, steps=0, reuse_budget=reuse_budget, accountant=acc, random_state=0,
                schema=schema.subset(["colour"])).fit(X[["colour"]], y)
    assert m.epsilon_prime_ == 0.0 and m.n_regions_ == 1 and m.partitioning_epsilon_ == 0.0
    assert list(m.ledger_["label"]) == ["DiffGen cell × class counts"]
    assert m.ledger_["charged"].sum() == pytest.approx(counts_epsilon) == m.leaf_epsilon_
    assert acc.spent == pytest.approx(counts_epsilon)


def test_max_cells_caps_the_grid_without_reading_the_data():
    X, y, schema = toy_data(500)
    m = DiffGen(1.0, steps=12, max_cells=40, random_state=0, schema=schema).fit(X, y)
    assert m.n_regions_ * 2 <= 40


def test_synthetic_and_shared_split_code():
    X, y, schema = toy_data(500)
    m = DiffGen(1.0, steps=4, random_state=3, schema=schema).fit(X, y)
    syn = m.synthetic(random_state=0)
    schema.validate(syn[schema.predictors], syn["label"])
    assert len(syn) == max(1, round(m.noisy_counts_.sum()))   # the public size rule
    # one piece of code per idea: DiffGen draws its split points with DiffMulti's mechanism
    from dpexplore.publish import diffmulti
    assert diffgen_module.private_split_point is diffmulti.private_split_point


def test_sklearn_contract_and_no_mutation():
    X, y, schema = toy_data(300)
    X0, y0 = X.copy(), y.copy()
    m = DiffGen(0.5, steps=3, random_state=0, schema=schema)
    params, cloned = m.get_params(), clone(m).get_params()
    assert cloned.pop("schema").to_dict() == params.pop("schema").to_dict() and cloned == params
    m.fit(X, y)
    m.predict(X)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)


@pytest.mark.parametrize("params,err,match", [
    ({"epsilon": 0}, ValueError, "epsilon"), ({"epsilon": float("nan")}, ValueError, "epsilon"),
    ({"steps": -1}, ValueError, "steps"), ({"steps": 2.5}, TypeError, "steps"),
    ({"utility": "gain"}, ValueError, "utility"), ({"utility": "dm"}, ValueError, "n_max"),
])
def test_bad_parameters(params, err, match):
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(2.0)
    with pytest.raises(err, match=match):
        DiffGen(**{"epsilon": 1.0, **params}, accountant=acc, schema=schema).fit(X, y)
    assert acc.ledger.empty


def test_bad_data_and_budget():
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="class"):   # a label that is not a declared class
        DiffGen(1.0, accountant=acc, schema=schema).fit(X, pd.Series(["not-a-class"] * 100))
    with pytest.raises(ValueError, match="does not know"):
        DiffGen(1.0, accountant=acc, schema=schema).fit(X.assign(w=1), y)
    acc.spend(0.5, "other")
    with pytest.raises(BudgetExceededError):
        DiffGen(0.6, accountant=acc, schema=schema).fit(X, y)
    assert len(acc.ledger) == 1


def test_flag_checks_and_unknown_parameters():
    with pytest.raises(TypeError, match="unexpected"):
        DiffGen(1.0, score="ncp")                          # the utility is ``utility=``
    X, y, schema = toy_data(100)
    acc = BudgetAccountant(2.0)
    with pytest.raises(TypeError, match="reuse_budget"):
        DiffGen(1.0, reuse_budget=None, accountant=acc, schema=schema).fit(X, y)
    assert acc.ledger.empty


def test_numeric_split_halves_get_their_own_points_in_parallel():
    """Budget per step ≤ 2ε' (one choice + one parallel pair of split points): the total
    specialization spend never exceeds |A_num|·ε' + 2·steps·ε' = ε/2."""
    X, y, schema = toy_data()
    m = DiffGen(1.0, steps=8, random_state=5, schema=schema).fit(X, y)
    assert m.partitioning_epsilon_ <= 0.5 + 1e-12
    n_num_steps = int(m.history_["attribute"].isin(["x", "z"]).sum())
    expected = (2 + len(m.history_)) * m.epsilon_prime_
    # each numeric step adds at most one (parallel) ε' for the new halves' split points
    assert expected - 1e-12 <= m.partitioning_epsilon_ <= expected + n_num_steps * m.epsilon_prime_ + 1e-12


def noise_features(n: int = 2000, seed: int = 0):
    """Three integer columns independent of the class, which is "a" in 80 % of the rows."""
    rng = np.random.default_rng(seed)
    schema = Schema([Attribute.numeric(c, 0, 100, integer=True) for c in ("u", "v", "w")], "label", ["b", "a"])
    X = pd.DataFrame({c: rng.integers(0, 101, n) for c in ("u", "v", "w")})
    y = pd.Series(np.where(rng.random(n) < 0.8, "a", "b"), name="label")
    return X, y, schema


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_regions_do_not_follow_the_noise_below_the_majority_class(seed):
    """On a fine grid most (region, class) counts are pure noise: clamping each at 0 decided a
    region of one or two records by that noise and pulled the fallback's class shares towards
    uniform. The classifier reads the consistent counts and the released class totals instead,
    and so predicts the majority class "a" (the second declared class) where the features say
    nothing."""
    X, y, schema = noise_features(seed=seed)
    m = DiffGen(1.0, steps=20, random_state=seed, schema=schema).fit(X, y)
    assert m.n_regions_ >= 256                       # a fine grid: a few records per region
    X_test, y_test, _ = noise_features(seed=100 + seed)
    assert m.score(X_test, y_test) >= 0.76           # the majority class alone is right for 80 %
    proba = m.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_regions_whose_class_mix_is_noise_predict_the_class_shares(seed, epsilon):
    """With features independent of the class, the regions' class mix is binomial sampling plus
    noise: the counts' reliability is low, so every region whose noisy total is not clearly above
    the noise predicts the class shares' larger class "a" (with the plain pseudo-count, some of
    them followed their noise)."""
    X, y, schema = noise_features(seed=seed)
    m = DiffGen(epsilon, steps=20, random_state=seed, schema=schema, marginal_share=0.25).fit(X, y)
    noise_sd = count_noise_sd(m.leaf_epsilon_, sensitivity=sum_sensitivity())
    assert count_reliability(m.noisy_counts_, m._class_shares(), noise_sd) < 0.3
    unclear = m.noisy_counts_.sum(axis=1) <= noise_ceiling(noise_sd / np.sqrt(2), m.noisy_counts_.size)
    assert unclear.mean() > 0.8                                # most regions hold a few records
    predicted = np.asarray(m.classes_)[m._region_probabilities().argmax(axis=1)]
    assert set(predicted[unclear]) == {"a"}
    X_test, y_test, _ = noise_features(seed=100 + seed)
    assert np.mean(m.predict(X_test) == "b") <= 0.015
    assert m.score(X_test, y_test) >= 0.78


def test_regions_whose_class_mix_is_signal_follow_their_counts():
    """When the regions' class mix is signal (the toy class is x > 60 xor warm), the reliability
    is near 1 and the regions predict their own classes, not the shares."""
    X, y, schema = toy_data()
    m = DiffGen(1.0, steps=10, random_state=0, schema=schema).fit(X, y)
    noise_sd = count_noise_sd(m.leaf_epsilon_, sensitivity=sum_sensitivity())
    assert count_reliability(m.noisy_counts_, m._class_shares(), noise_sd) > 0.9
    X_test, y_test, _ = toy_data(seed=5)
    assert set(m.predict(X_test)) == {"a", "b"}
    assert m.score(X_test, y_test) >= 0.88


@pytest.mark.parametrize("seed", [0, 4, 6])
def test_the_paid_class_marginal_keeps_the_majority_class_at_small_epsilon(seed):
    """At ε = 0.1 on a fine grid the sum of the noisy leaf counts of a class carries the noise of
    every region, and which class is larger was a coin toss (seed 0 predicted "b" everywhere:
    0.48). With ``marginal_share`` the class's one noisy marginal is paid too (ledger "marginal:
    label") and the class shares combine both by inverse variance."""
    X, y, schema = noise_features(seed=seed)
    m = DiffGen(0.1, steps=20, random_state=seed, schema=schema, marginal_share=0.25).fit(X, y)
    assert m.n_regions_ >= 128                      # a fine grid: a few records per region
    assert "marginal: label" in list(m.ledger_["label"])
    assert m.epsilon_spent_ == pytest.approx(0.1)
    assert m.classes_[np.argmax(m._class_shares())] == "a"
    X_test, y_test, _ = noise_features(seed=100 + seed)
    assert m.score(X_test, y_test) >= 0.74
