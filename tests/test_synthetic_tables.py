"""Complete, plausible, capped synthetic tables from every publisher (README, "Synthetic tables").

* every declared column comes back, in schema order, numbers as numbers (int64 for integer attributes); columns the release
  carries no information on are drawn uniformly (the papers) or from a paid DP one-way marginal
  (``marginal_share`` > 0, an extension), and ``column_sources_`` says which;
* the synthetic size follows a public rule (the release's DP total clamped to [1, cap]);
* tiny ε finishes in bounded memory (every size that follows from ε or a noisy count is capped);
* integer, boolean and string targets give the same release;
* PrivPfC's ``min_records_per_cell`` keeps thousand-cell grids off small tables.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from dpexplore.budget import BudgetAccountant
from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.exceptions import FewRecordsWarning
from dpexplore.limits import MIN_SYNTHETIC_ROWS
from dpexplore.publish import DiffGen, PrivPfC
from dpexplore.publish.histogram_release import HistogramRelease
from dpexplore.publish.privpfc import enumerate_grids
from dpexplore.publish.projected import EmptySyntheticWarning
from dpexplore.registry import all_methods, get_method
from privacy_audit import assert_flagged, assert_private, weakened_noise

#: every registered private publisher, built with its registry entry's small ``test_params``
PUBLISHERS = [spec.name for spec in all_methods("publisher", private=True)]
TARGETS = {"int": [0, 1], "bool": [False, True], "str": ["no", "yes"]}


def messy(n: int = 1500, seed: int = 0, target: str = "int"):
    """An analyst-like table: integer age, a long-tailed count (mean ≈ 3 on [0, 40]), a skewed
    8-level categorical, integer hours; the target as int 0/1, bool or "no"/"yes"."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    visits = np.minimum(rng.negative_binomial(1, 0.25, n), 40)
    region = rng.choice(list("abcdefgh"), n, p=[.4, .2, .1, .1, .08, .06, .04, .02])
    hours = rng.integers(0, 80, n)
    logit = 0.06 * (age - 45) + 0.25 * (visits - 3) + (region == "a") - 0.03 * (hours - 40)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.DataFrame({"age": age, "visits": visits, "region": region, "hours": hours})
    yv = {"int": pd.Series(y, name="y"), "bool": pd.Series(y.astype(bool), name="y"),
          "str": pd.Series(np.where(y == 1, "yes", "no"), name="y")}[target]
    schema = Schema([
        Attribute.numeric("age", 0, 96, Taxonomy.equal_width("age", 0, 96, (2, 2, 2, 2, 2)), integer=True),
        Attribute.numeric("visits", 0, 40, Taxonomy.equal_width("visits", 0, 40, (2, 2, 2, 5)), integer=True),
        Attribute.categorical("region", list("abcdefgh")),
        Attribute.numeric("hours", 0, 80, Taxonomy.equal_width("hours", 0, 80, (2, 2, 2, 2, 5)), integer=True)],
        "y", TARGETS[target])
    return X, yv, schema


def _fit(name, X, y, schema, **kw):
    spec = get_method(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySyntheticWarning)
        return spec.build(schema, **{**spec.test_params, "random_state": 3, **kw}).fit(X, y)


def _released(model) -> np.ndarray:
    """The released counts of a histogram release (a sparse histogram: its cells' codes and
    values); the synthetic table of any other release (a function of the release and the seed)."""
    if not isinstance(model, HistogramRelease):
        return _syn(model, random_state=0)[model.schema_.predictors].to_numpy()
    counts = getattr(model, model._released)
    if hasattr(counts, "codes"):
        return np.concatenate([counts.codes.astype(float), counts.values])
    return counts


def _syn(model, **kw) -> pd.DataFrame:
    """synthetic() with the values ``tables.release`` asks of the method (its registry entry's
    ``synthetic_kwargs``: PrivPfC's default writes node labels, its entry draws inside each node)."""
    return model.synthetic(**{**get_method(type(model).__name__).synthetic_kwargs, **kw})


def _dp_total(model) -> float:
    """The release's DP total, from which the synthetic size follows (``synthetic_size``)."""
    if not isinstance(model, HistogramRelease):
        pytest.skip(f"{type(model).__name__} is not a histogram release: its size rule is its own")
    return float(model._size_total()[0])


# ----------------------------------------------------------------------------- targets
@pytest.mark.parametrize("name", PUBLISHERS)
def test_integer_boolean_and_string_targets_give_the_same_release(name):
    """Same seed → same released cells whatever the target's dtype; predictions, synthetic
    labels and score in y's own type (old ProjectedHistogram predicted strings for 0/1)."""
    releases, preds = {}, {}
    for target in TARGETS:
        X, y, schema = messy(600, target=target)
        model = _fit(name, X, y, schema, epsilon=2.0)
        releases[target] = _released(model)
        p = model.predict(X)
        assert p.dtype == y.to_numpy().dtype or (target == "str" and set(p) <= {"no", "yes"}), (target, p.dtype)
        assert list(model.classes_) == TARGETS[target]
        assert 0.0 <= model.score(X, y) <= 1.0
        syn = _syn(model, random_state=0)
        assert list(syn.columns) == schema.predictors + ["y"]
        assert set(syn["y"]) <= set(TARGETS[target])
        if target != "str":
            assert syn["y"].dtype == y.dtype
        preds[target] = np.asarray([TARGETS[target].index(v) for v in p])
    np.testing.assert_array_equal(releases["int"], releases["bool"])
    np.testing.assert_array_equal(releases["int"], releases["str"])
    np.testing.assert_array_equal(preds["int"], preds["bool"])
    np.testing.assert_array_equal(preds["int"], preds["str"])


# ----------------------------------------------------------------------------- columns, size
@pytest.mark.parametrize("name", PUBLISHERS)
def test_every_declared_column_in_schema_order_with_numbers_as_numbers(name):
    X, y, schema = messy(800)
    model = _fit(name, X, y, schema, epsilon=1.0)
    syn = _syn(model, random_state=0)
    assert list(syn.columns) == schema.predictors + ["y"]     # PH kept only its projection before
    for c in ["age", "visits", "hours", "y"]:
        assert syn[c].dtype == X.assign(y=y)[c].dtype, c
    schema.validate(syn[schema.predictors], syn["y"])             # inside the declared domain
    assert set(model.column_sources_) == set(schema.predictors + ["y"])
    assert {v["source"] for v in model.column_sources_.values()} <= {"modelled", "uniform"}


@pytest.mark.parametrize("name", PUBLISHERS)
def test_synthetic_size_is_the_dp_total_clamped_and_n_overrides(name):
    """The size is a public rule: round(DP total) raised to the public floor and capped at
    max_synthetic_rows (a total below the floor says so); ``n=`` too."""
    X, y, schema = messy(600)
    model = _fit(name, X, y, schema, epsilon=0.05, max_synthetic_rows=100_000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        syn = model.synthetic(random_state=0)
    expected = min(max(round(_dp_total(model)), MIN_SYNTHETIC_ROWS), 100_000)
    below = [w for w in caught if issubclass(w.category, FewRecordsWarning) and "public floor" in str(w.message)]
    assert len(below) == (_dp_total(model) < MIN_SYNTHETIC_ROWS)
    assert len(syn) == expected or (name == "ProjectedHistogram" and len(syn) == 0
                                    and model.counts_.values.size == 0)
    assert len(syn) < 3 * len(X)               # DiffGen/DiffMulti made ~27x the rows at small ε before
    if len(syn):
        assert len(model.synthetic(random_state=0, n=250)) == 250
    capped = _fit(name, X, y, schema, epsilon=0.05, max_synthetic_rows=40)
    assert len(capped.synthetic(random_state=0)) <= 40
    assert len(capped.synthetic(random_state=0, n=10**9)) <= 40


def test_small_epsilon_region_releases_no_longer_inflate_the_table():
    """At ε = 0.01 DiffGen/DiffMulti synthesized ~165k rows from ~6k, because
    every noisy count of an empty cell was kept at max(0, ⌊count⌋)."""
    X, y, schema = messy(1500)
    for name in ("DiffMulti", "DiffGen"):
        model = _fit(name, X, y, schema, epsilon=0.01)
        paper = int(model.released_counts().sum())
        syn = model.synthetic(random_state=0)
        assert len(syn) == min(max(round(model.noisy_counts_.sum()), MIN_SYNTHETIC_ROWS), model.max_synthetic_rows)
        assert paper > 5 * len(X) or model.n_regions_ < 50  # the old rule really did inflate


# ----------------------------------------------------------------------------- marginal_share
def _forced_unmodelled(name):
    """Parameters under which a publisher models the fewest predictors (so the others are filled):
    its registry entry's ``coarsest_params``."""
    return dict(get_method(name).coarsest_params)


@pytest.mark.parametrize("name", PUBLISHERS)
def test_marginal_share_fills_unmodelled_columns_from_paid_marginals(name):
    X, y, schema = messy(3000)
    share, eps = 0.3, 4.0
    model = _fit(name, X, y, schema, epsilon=eps, marginal_share=share, **_forced_unmodelled(name))
    sources = model.column_sources_
    filled = [a for a in schema.predictors if sources[a]["source"] == "marginal"]
    assert len(filled) >= 3
    ledger = model.ledger_
    rows = ledger[ledger["label"].str.startswith("marginal: ")]
    # every predictor not released at single leaves, then the class for the methods whose classifier
    # or counts need its own marginal (the projected histogram's threshold, the partitions' class shares)
    paid = list(model.marginals_)
    pays_class = name in ("ProjectedHistogram", "DiffMulti", "DiffGen")
    assert paid[-1:] == [schema.target] if pays_class else schema.target not in paid
    predictors_paid = [a for a in paid if a != schema.target]
    assert set(filled) <= set(predictors_paid) and predictors_paid == [a for a in schema.predictors if a in paid]
    assert list(rows["label"]) == [f"marginal: {a}" for a in paid]        # one clear row per column
    assert rows["epsilon"].sum() == pytest.approx(share * eps)
    assert model.epsilon_spent_ == pytest.approx(eps)
    for a in filled:
        assert sources[a]["epsilon"] == pytest.approx(share * eps / len(paid))
        assert len(model.marginals_[a]) == len(schema[a].taxonomy.leaves)
        # a two-way table with its privately chosen parent (the class, a modelled column or an earlier
        # unmodelled one), whose sum over the parent is the one-way marginal
        parent = model.marginal_parents_[a]
        assert parent == schema.target or schema.predictors.index(parent) < schema.predictors.index(a) \
            or sources[parent]["source"] == "modelled"
        width = schema.n_classes if parent == schema.target else len(schema[parent].taxonomy.leaves)
        assert model.joint_marginals_[a].shape == (len(schema[a].taxonomy.leaves), width)
        assert sources[a]["given"] == parent
        np.testing.assert_allclose(model.joint_marginals_[a].sum(axis=1), model.marginals_[a])
    syn = _syn(model, random_state=0)
    if "visits" in filled:   # the long tail survives: mean ≈ 3, not ≈ 20 (uniform over [0, 40])
        assert abs(syn["visits"].mean() - X["visits"].mean()) < 1.5
    if "region" in filled:
        share_a = (syn["region"] == "a").mean()
        assert abs(share_a - (X["region"] == "a").mean()) < 0.08           # not 1/8
    # the paper's rule for comparison: uniform over the declared domain
    paper = _fit(name, X, y, schema, epsilon=eps, **_forced_unmodelled(name))
    assert {paper.column_sources_[a]["source"] for a in filled} == {"uniform"}
    if "visits" in filled:
        assert _syn(paper, random_state=0)["visits"].mean() > 15


def test_marginal_share_serves_modelled_columns_too():
    """Every predictor's marginal is paid (one ledger row each), modelled ones included: their
    values inside a released cell follow it; the projected histogram also pays the class's."""
    X, y, schema = messy(800)
    model = _fit("ProjectedHistogram", X, y, schema, epsilon=1.0, k=4, marginal_share=0.25)
    assert all(v["source"] == "modelled" for v in model.column_sources_.values())
    rows = model.ledger_[model.ledger_["label"].str.startswith("marginal: ")]
    columns = schema.predictors + [schema.target]
    assert list(rows["label"]) == [f"marginal: {a}" for a in columns]
    assert rows["epsilon"].sum() == pytest.approx(0.25)
    assert all(model.column_sources_[a]["marginal_epsilon"] == pytest.approx(0.25 / 5) for a in columns)
    assert model.epsilon_spent_ == pytest.approx(1.0)


def test_marginal_share_zero_is_the_papers_release():
    """Default 0: bit-for-bit the release (same seed) it was before the option existed."""
    X, y, schema = messy(800)
    for name in PUBLISHERS:
        a = _fit(name, X, y, schema, epsilon=1.0)
        b = _fit(name, X, y, schema, epsilon=1.0, marginal_share=0.0)
        np.testing.assert_array_equal(_released(a), _released(b))
        assert not a.ledger_["label"].str.startswith("marginal").any()


@pytest.mark.parametrize("name", PUBLISHERS)
@pytest.mark.parametrize("bad,match", [({"marginal_share": 1.0}, "marginal_share"),
                                       ({"marginal_share": -0.1}, "marginal_share"),
                                       ({"max_synthetic_rows": 0}, "max_synthetic_rows")])
def test_bad_new_parameters_fail_before_any_spend(name, bad, match):
    X, y, schema = messy(300)
    X0, y0 = X.copy(), y.copy()
    acc = BudgetAccountant(5.0)
    with pytest.raises(ValueError, match=match):
        _fit(name, X, y, schema, epsilon=1.0, accountant=acc, **bad)
    assert acc.spent == 0 and len(acc.ledger) == 0
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)


def test_bad_n_is_refused_with_its_name():
    X, y, schema = messy(300)
    model = _fit("DiffGen", X, y, schema, epsilon=1.0)
    with pytest.raises(ValueError, match="n must be"):
        model.synthetic(n=0)


# ----------------------------------------------------------------------------- tiny ε
TINY = textwrap.dedent("""
    import json, resource, sys, warnings
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # a regression fails, not the machine
    warnings.simplefilter("ignore")
    sys.path.insert(0, {tests!r})
    from test_synthetic_tables import PUBLISHERS, _fit, messy
    X, y, schema = messy(300)
    out = {{}}
    for name in PUBLISHERS:
        model = _fit(name, X, y, schema, epsilon=1e-9, random_state=0, max_synthetic_rows=5000)
        out[name] = [len(model.synthetic(random_state=0)), len(model.synthetic(random_state=0, n=10**12))]
    print(json.dumps(out))
""")


def test_tiny_epsilon_fit_and_synthetic_stay_within_public_caps():
    """ε = 1e-9: PrivPfC tried 30 GiB, DiffGen/DiffMulti 6-12 TiB, ProjectedHistogram 48 GiB.
    Every publisher now fits and synthesizes under a 3 GiB address-space limit."""
    tests = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", TINY.format(tests=tests)], capture_output=True, text=True,
                         timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = json.loads(res.stdout.strip().splitlines()[-1])
    assert set(rows) == set(PUBLISHERS)
    for name, (default, huge) in rows.items():
        assert default <= 5000 and huge <= 5000, name


# ----------------------------------------------------------------------------- min_records_per_cell
def test_min_records_per_cell_keeps_thousand_cell_grids_off_a_small_table():
    """3,000 rows at ε = 4: the paper's pool reaches τ ≈ 1,440 cells and the quality score (a
    training accuracy) picks a 1,280-cell grid (≈ 2 records per cell). With
    min_records_per_cell = 20 no candidate has more than N̂/20 cells."""
    X, y, schema = messy(3000)
    paper = _fit("PrivPfC", X, y, schema, epsilon=4.0, theta=10_000)
    capped = _fit("PrivPfC", X, y, schema, epsilon=4.0, theta=10_000, min_records_per_cell=20)
    sizes = lambda m: m.diagnostics(X, y)["size"]   # noqa: E731  (the pool is public: it follows from N̂)
    assert sizes(paper).max() >= 1200
    assert paper.counts_.shape[0] >= 1200 and paper.expected_occupancy_ < 5
    assert sizes(capped).max() <= capped.n_hat_ / 20
    assert capped.counts_.shape[0] <= capped.n_hat_ / 20
    assert capped.expected_occupancy_ >= 20
    assert capped.expected_occupancy_ == pytest.approx(capped.n_hat_ / capped.counts_.shape[0])
    assert capped.epsilon_spent_ == pytest.approx(paper.epsilon_spent_)      # post-processing: no ε
    with pytest.raises(ValueError, match="min_records_per_cell"):
        PrivPfC(min_records_per_cell=0, schema=schema).fit(X, y)


def test_min_records_per_cell_only_moves_tau():
    """Same seed, same N̂: the option only lowers τ (Alg. 2 line 4), so the pool is the paper's
    Enumerate at min(τ, N̂/m)."""
    X, y, schema = messy(1000)
    capped = _fit("PrivPfC", X, y, schema, epsilon=2.0, min_records_per_cell=10)
    paper = _fit("PrivPfC", X, y, schema, epsilon=2.0)
    assert capped.n_hat_ == paper.n_hat_
    assert capped.tau_ == pytest.approx(min(paper.tau_, paper.n_hat_ / 10))
    levels = [schema[a].taxonomy.level_sizes for a in schema.predictors]
    assert len(enumerate_grids(levels, 200, capped.tau_)) <= len(enumerate_grids(levels, 200, paper.tau_))


# ----------------------------------------------------------------------------- audit of the filler
EPS = 1.0
AUDIT_SCHEMA = Schema([Attribute.numeric("age", 0, 10, Taxonomy.equal_width("age", 0, 10, (2,)))],
                      "y", ["no", "yes"])
A_D = (pd.DataFrame({"age": [1, 2, 3, 4, 1, 2]}), pd.Series(["no", "yes"] * 3, name="y"))
A_D1 = (pd.concat([A_D[0], pd.DataFrame({"age": [10]})], ignore_index=True),
        pd.concat([A_D[1], pd.Series(["no"], name="y")], ignore_index=True))   # + one record at the edge


def _marginal_run(cls, params):
    def run(data, rng):
        X, y = data
        model = cls(epsilon=EPS, random_state=rng, marginal_share=0.9, **params, schema=AUDIT_SCHEMA).fit(X, y)
        assert model.column_sources_["age"]["source"] == "marginal"
        assert model.marginal_parents_["age"] == "y"          # the only candidate parent
        # age's two-way table with the class: leaf (5, 10] × class "no", 0 vs 1 record
        return int(np.clip(np.floor(model.joint_marginals_["age"][1, 0]), -1, 1))
    return run


# (publisher, parameters, how much the broken variant weakens the noise: age's two-way table then
# runs at 2.7 times the claim; with the class its only candidate parent, nothing is spent on the
# choice; DiffGen pays the class's marginal too, so age's share is half of 0.9·ε)
AUDIT_PATHS = {"PrivPfC": (PrivPfC, {"theta": 1, "shares": (0.3, 0.3, 0.4)}, 3),
               "DiffGen": (DiffGen, {"steps": 0}, 6)}


@pytest.mark.parametrize("name", list(AUDIT_PATHS))
def test_marginal_filler_is_private_and_a_broken_variant_is_flagged(name):
    cls, params, weaken = AUDIT_PATHS[name]
    run = _marginal_run(cls, params)
    with threadpool_limits(1):
        res = assert_private(run, A_D, A_D1, EPS, n_samples=400, seed=0)
        with weakened_noise(weaken):
            broken = assert_flagged(run, A_D, A_D1, EPS, n_samples=400, seed=1)
    print(f"\n| {name} marginal filler | claimed ε {EPS} | lower bound {res.epsilon_lower:.3f} "
          f"| noise ÷ {weaken}: {broken.epsilon_lower:.3f} |")


@pytest.mark.parametrize("name", ["PrivPfC", "DiffGen"])
def test_marginal_filler_from_a_source_equals_the_record_fit(name):
    """fit(source) counts the marginals on the CountTable (leaf codes weighted by counts): the same
    release, ledger and synthetic table as fit(X, y, schema) for the same seed."""
    from dpexplore.sources import pandas as from_pandas
    X, y, schema = messy(800, target="str")
    spec = get_method(name)
    params = {**spec.test_params, **_forced_unmodelled(name)}
    a = spec.load()(epsilon=2.0, random_state=0, marginal_share=0.3, **params).fit(
        from_pandas(X.assign(y=y), schema))
    b = _fit(name, X, y, schema, epsilon=2.0, random_state=0, marginal_share=0.3, **_forced_unmodelled(name))
    assert a.column_sources_ == b.column_sources_
    for col in a.marginals_:
        np.testing.assert_array_equal(a.marginals_[col], b.marginals_[col])
    pd.testing.assert_frame_equal(_syn(a, random_state=0), _syn(b, random_state=0))
