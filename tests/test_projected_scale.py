"""Count once, release many, for the projected histogram: its own equal-width bins (Vinterbo
2012, §2.1) are counted in the same scan as the source's table when s is public before the fit,
whichever method scans first (the scan counts at the common refinement of the schema's leaves
and the bins), later fits on the source scan nothing, and the public heuristics (eqs. 10-11) are
computed once per argument tuple. Every release stays the one the records give."""
import math

import numpy as np
import pytest

from dpexplore import Attribute, Schema, Taxonomy, datasets, sources
from dpexplore.budget import BudgetAccountant
from dpexplore.limits import MAX_RECORDS
from dpexplore.models.naive_bayes import PrivateNaiveBayes
from dpexplore.publish import projected as ph
from dpexplore.publish.diffmulti import DiffMulti
from dpexplore.publish.privpfc import PrivPfC
from dpexplore.sources import _spark_engine, _tables, bins
from _fixtures import engine_sources, schema, to_spark  # noqa: F401 (pytest fixtures)
from _fixtures import fit_frame as frame  # noqa: F401 (a pytest fixture)
from test_sources_cache import cut, recount, scans


def release(model):
    return [model.n_bins_, model.k_, list(model.selected_), model.counts_.codes.copy(),
            model.counts_.values.copy(), model.n_hat_]


def assert_same(a, b):
    assert a[:3] == b[:3] and a[-1] == b[-1]
    for u, v in zip(a[3:5], b[3:5]):
        np.testing.assert_array_equal(u, v)


def records_release(frame, schema, **params):
    model = ph.ProjectedHistogram(random_state=3, schema=schema, **params)
    return release(model.fit(frame[schema.predictors], frame[schema.target]))


# ---------------------------------------------------------------------------- one scan, then none
@pytest.mark.parametrize("kind", ["duckdb-parquet", "duckdb-sql"])
@pytest.mark.parametrize("params", [{"n_bins": 7, "k": 2}, {"n_bins": 5}])
def test_public_bins_are_counted_in_the_first_scan_and_reused(kind, params, frame, schema, tmp_path, monkeypatch):
    ref = records_release(frame, schema, **params)
    src = engine_sources(frame, schema, tmp_path)[kind]
    calls = scans(monkeypatch)
    first = release(ph.ProjectedHistogram(random_state=3, **params).fit(src))
    assert len(calls) == 1                       # the table and the bins: one checking group-by
    later = release(ph.ProjectedHistogram(random_state=3, **params).fit(src))
    assert len(calls) == 1                       # a later fit scans nothing
    assert_same(first, ref)
    assert_same(later, ref)
    binned = ph.binned_schema(schema, first[0])
    assert src.with_schema(binned).count_table() == recount(frame, binned)
    assert len(calls) == 1


def test_a_subset_schema_counts_its_own_bins_along(frame, schema, tmp_path, monkeypatch):
    subset = schema.subset(["age", "x", "color"])
    ref = records_release(frame, subset, n_bins=6)
    src = engine_sources(frame, schema, tmp_path)["duckdb-sql"]
    calls = scans(monkeypatch)
    assert_same(release(ph.ProjectedHistogram(random_state=3, n_bins=6, schema=subset).fit(src)), ref)
    assert len(calls) == 1


def test_bins_that_depend_on_the_noisy_count_are_counted_after_it(frame, schema, tmp_path, monkeypatch):
    """n_bins='projected' with k from eq. 10: s is known only once n̂ is drawn, so the bins take
    a second group-by (after the table's checks); the release is still the records' one."""
    assert ph.ProjectedHistogram(n_bins="projected")._public_bin_count(len(schema.predictors)) is None
    ref = records_release(frame, schema, n_bins="projected")
    src = engine_sources(frame, schema, tmp_path)["duckdb-sql"]
    calls = scans(monkeypatch)
    assert_same(release(ph.ProjectedHistogram(random_state=3, n_bins="projected").fit(src)), ref)
    assert len(calls) == 2
    assert_same(release(ph.ProjectedHistogram(random_state=3, n_bins="projected").fit(src)), ref)
    assert len(calls) == 2


def test_a_bad_record_still_fails_before_any_spend(frame, schema):
    bad = frame.assign(age=frame["age"].where(frame.index != 5, 1000))
    acc = BudgetAccountant(10.0)
    src = sources.duckdb(bad, schema)
    with pytest.raises(ValueError, match="'age'.*outside its public range"):
        ph.ProjectedHistogram(epsilon=1.0, n_bins=4, accountant=acc).fit(src)
    assert acc.spent == 0 and "0 schema" in repr(src._tables)


# ---------------------------------------------------------------------------- the source side
def test_tables_counted_along_equal_a_recount(frame, schema, tmp_path, monkeypatch):
    src = engine_sources(frame, schema, tmp_path)["duckdb-parquet"]
    views = [cut(schema, "age", [0.0, 33.0, 66.5, 100.0]),             # cuts a leaf: counted at the refinement
             cut(schema, "age", [0.0, 45.0, 100.0]),                    # cuts another one: refined too
             schema.subset(["color", "x"]),                             # derivable: mapped codes
             Schema([Attribute.numeric("x", 0.0, 0.9, Taxonomy.equal_width("x", 0.0, 0.9, (3,))),
                     Attribute.categorical("code", ["1", "2", "3"])], schema.target, schema.classes)]
    calls = scans(monkeypatch)
    assert src.count_table(along=views) == recount(frame, schema)
    assert len(calls) == 1
    for view in views:
        assert src.with_schema(view).count_table() == recount(frame, view)
    assert len(calls) == 1


def test_only_schemas_with_the_same_domains_are_counted_along(frame, schema, monkeypatch):
    narrow = Schema([Attribute.numeric("age", 0, 50, Taxonomy.equal_width("age", 0, 50, (5,)), integer=True)],
                    schema.target, schema.classes)     # a narrower range: its own checks must run
    src = sources.duckdb(frame, schema)
    calls = scans(monkeypatch)
    src.count_table(along=[narrow])
    assert len(calls) == 1
    with pytest.raises(ValueError, match="outside its public range"):
        src.with_schema(narrow).count_table()
    with pytest.raises(ValueError, match="same target and a subset"):
        sources.duckdb(frame, schema).count_table(along=[Schema([schema["age"]], "flag", ["False", "True"])])


def test_pandas_counts_the_views_along_too(frame, schema, monkeypatch):
    src = sources.pandas(frame, schema)
    view = cut(schema, "age", [0.0, 33.0, 66.5, 100.0])
    calls = scans(monkeypatch)
    assert src.count_table(along=[view]) == recount(frame, schema)
    assert src.with_schema(view).count_table() == recount(frame, view)
    assert len(calls) == 1


def test_the_refinement_derives_every_schema_and_adds_only_missing_edges(schema):
    views = [cut(schema, "age", [0.0, 33.0, 66.5, 100.0]), bins.binned_schema(schema, 3),
             schema.subset(["color", "x"])]
    fine = _tables.refinement(schema, views)
    for other in [schema, *views]:
        assert _tables.leaf_maps(fine, other) is not None
    age = _tables.inner_edges(fine["age"])
    assert set(_tables.inner_edges(schema["age"])) <= set(age) and {33.0, 66.5} <= set(age)
    assert len(age) == len(set(age)) and np.all(np.diff(age) > 0) and age.max() < 100.0
    assert fine["color"] is schema["color"]               # categories: the schema's leaves already
    assert _tables.refinement(schema, [schema.subset(["color", "x"])]) is schema   # nothing to add
    narrow = Schema([Attribute.numeric("age", 0, 50, Taxonomy.equal_width("age", 0, 50, (7,)), integer=True)],
                    schema.target, schema.classes)
    assert _tables.refinement(schema, [narrow]) is schema  # other public domains: not counted along


@pytest.mark.skipif(_spark_engine.find_java() is None, reason="Spark needs Java")
def test_spark_counts_along_too(spark, frame, schema, monkeypatch):
    src = sources.spark(to_spark(spark, frame), schema)
    view = cut(schema, "age", [0.0, 33.0, 66.5, 100.0])
    calls = scans(monkeypatch)
    assert src.count_table(along=[view]) == recount(frame, schema)
    assert src.with_schema(view).count_table() == recount(frame, view)
    assert len(calls) == 1


# ---------------------------------------------------------------------------- public s and the heuristics
@pytest.mark.parametrize("params", [{}, {"n_bins": "projected", "k": 2}, {"n_bins": "projected"},
                                    {"neighbours": "substitution"}, {"n_bins": 9}])
@pytest.mark.parametrize("d", [1, 2, 3, 8, 14, 20])
def test_public_bin_count_is_the_s_of_every_possible_noisy_count(params, d):
    model = ph.ProjectedHistogram(**params)
    s = model._public_bin_count(d)
    if "n_bins" in params and not isinstance(params["n_bins"], str):
        assert s == params["n_bins"]
        return
    n_hats = np.concatenate([[2.0, math.e, 3.0], np.geomspace(2.0, MAX_RECORDS, 400)])
    dims = [d] if model.n_bins == "literal" else [min(model.k, d)] if model.k else range(1, d + 1)
    possible = {ph.bin_count(n, dim) for n in n_hats for dim in dims}
    if model.neighbours == "substitution":
        assert s is None                         # n̂ = n, not clipped: s is not public
    elif s is None:
        assert len(possible) > 1
    else:
        assert possible == {s}


def test_the_heuristics_simulate_once_per_public_argument_tuple(monkeypatch):
    ph._simulated_k.cache_clear()
    ph._bin_masses.cache_clear()
    runs = []
    simulate = ph._simulated_codes
    monkeypatch.setattr(ph, "_simulated_codes", lambda *a: runs.append(a[:3]) or simulate(*a))
    k = ph.estimate_k(5_000.4, 6, 2, 4)
    assert ph.estimate_k(5_000.0, 6, 2, 4) == k and len(runs) == 1       # the same rounded n
    assert ph.estimate_k(5_001.0, 6, 2, 4) >= 1 and len(runs) == 2      # another n: simulated
    masses = ph.bin_masses(5)
    masses[:] = 0.0                                                      # the caller's copy
    assert ph.bin_masses(5).sum() == pytest.approx(1.0) and len(runs) == 3
    gamma = ph.estimate_gamma(5_000.0, 6, 2, 2, 5)
    assert len(runs) == 3 and gamma == ph.estimate_gamma(5_000.0, 6, 2, 2, 5)
    ph._simulated_k.cache_clear()
    ph._bin_masses.cache_clear()
    assert ph.estimate_k(5_000.0, 6, 2, 4) == k                          # recomputed: the same k


# ---------------------------------------------------------------------------- after another method's first scan
@pytest.fixture(scope="module")
def wide():
    """14 predictors: a default projected histogram's s (= 2) is public before the fit (§2.1)
    and its bin edge, the double before ½, cuts a leaf of every numeric taxonomy (1/2/4/8
    equal-width bins). Values at and around that edge and at the bounds are in the table."""
    frame, schema = datasets.make_synthetic(n_samples=3000, n_numeric=7, n_categorical=7, random_state=5)
    edge = [0.5, np.nextafter(0.5, 0.0), np.nextafter(0.5, 1.0), 0.0, 1.0]
    frame = frame.copy()
    for j, name in enumerate(schema.numeric):
        frame.loc[: len(edge) - 1, name] = np.roll(edge, j)
    return frame, schema


FIRST = {"PrivPfC": lambda: PrivPfC(epsilon=2.0, random_state=1),
         "DiffMulti": lambda: DiffMulti(epsilon=2.0, random_state=1, h=8),
         "PrivateNaiveBayes": lambda: PrivateNaiveBayes(epsilon=2.0, random_state=1)}


def test_the_default_bins_are_the_default_projected_histograms_and_no_union_of_leaves(wide):
    _, schema = wide
    [default] = bins.default_bins(schema)
    assert [s.to_dict() for s in ph.ProjectedHistogram()._count_along(None, schema)] == [default.to_dict()]
    assert ph.ProjectedHistogram(n_bins=5)._count_along(None, schema)[0].to_dict() != default.to_dict()
    assert _tables.leaf_maps(schema, default) is None      # not derivable from the schema's own table
    assert bins.default_bins(schema.subset(schema.predictors[:5])) == []     # s depends on n̂ there


@pytest.mark.parametrize("kind", ["duckdb-parquet", "duckdb-sql", "pandas"])
@pytest.mark.parametrize("first", list(FIRST))
def test_a_default_projected_histogram_after_another_method_scans_nothing(kind, first, wide, tmp_path, monkeypatch):
    frame, schema = wide
    ref = records_release(frame, schema)
    src = engine_sources(frame, schema, tmp_path)[kind]
    calls = scans(monkeypatch)
    FIRST[first]().fit(src)
    scanned = len(calls)
    assert scanned == 1
    assert_same(release(ph.ProjectedHistogram(random_state=3).fit(src)), ref)
    assert len(calls) == scanned                  # the bins were counted in the first scan
    binned = ph.binned_schema(schema, ref[0])
    assert src.with_schema(binned).count_table() == recount(frame, binned)
    assert src.count_table() == recount(frame, schema)
    assert len(calls) == scanned


@pytest.mark.parametrize("kind", ["duckdb-sql", "pandas"])
def test_a_projected_histogram_with_other_bins_counts_them_once(kind, wide, tmp_path, monkeypatch):
    frame, schema = wide
    ref = records_release(frame, schema, n_bins=5)
    src = engine_sources(frame, schema, tmp_path)[kind]
    calls = scans(monkeypatch)
    FIRST["PrivateNaiveBayes"]().fit(src)
    assert_same(release(ph.ProjectedHistogram(random_state=3, n_bins=5).fit(src)), ref)
    assert len(calls) == 2                        # its 5 bins: one more scan, then kept
    assert_same(release(ph.ProjectedHistogram(random_state=3, n_bins=5).fit(src)), ref)
    assert len(calls) == 2


@pytest.mark.skipif(_spark_engine.find_java() is None, reason="Spark needs Java")
def test_spark_counts_the_default_bins_in_the_first_scan(spark, wide, monkeypatch):
    frame, schema = wide
    ref = records_release(frame, schema)
    src = sources.spark(to_spark(spark, frame), schema)
    calls = scans(monkeypatch)
    FIRST["PrivateNaiveBayes"]().fit(src)
    assert_same(release(ph.ProjectedHistogram(random_state=3).fit(src)), ref)
    assert len(calls) == 1
