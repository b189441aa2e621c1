"""fit(source): the histogram methods run on the CountTable (occupied cells as weighted records).

Engine equivalence (pandas, DuckDB over Parquet, DuckDB SQL over a DataFrame; Spark in
tests/test_fit_source_spark.py): the same table, schema and seed give an identical release.
The record path fit(X, y, schema) keeps its releases. A fit from a source never reads rows
once the count table is built, and its work depends on the occupied cells, not the records.
"""
import copy

import numpy as np
import pandas as pd
import pytest

from dpexplore import sources
from dpexplore.budget import BudgetAccountant
from dpexplore.counts import CountTable
from dpexplore.histogram import LevelCodes
from dpexplore.inputs import source_input
from dpexplore.publish.privpfc import GridScorer, PrivPfC, run_privpfc
from _fixtures import TableSource, engine_sources, schema  # noqa: F401 (pytest fixtures)
from _fixtures import fit_frame as frame  # noqa: F401 (a pytest fixture)


def privpfc_release(model):
    return (model.grid_, model.n_hat_, model.tau_, model.counts_.copy(),
            model.synthetic(random_state=0), model.synthetic(random_state=1, values="sampled"))


def assert_same_privpfc(a, b):
    ga, na, ta, ca, sa, xa = a
    gb, nb, tb, cb, sb, xb = b
    assert ga == gb and na == nb and ta == tb
    np.testing.assert_array_equal(ca, cb)
    pd.testing.assert_frame_equal(sa, sb)
    pd.testing.assert_frame_equal(xa, xb)


# ---------------------------------------------------------------------------- source_input
def test_source_input_recognises_sources_only(frame, schema):
    X, y = frame[schema.predictors], frame[schema.target]
    assert source_input(X, y, schema) is None                     # the record path
    src = sources.pandas(frame, schema)
    table, got = source_input(src, None, None)
    assert table.equals(src.count_table()) and got is src.schema
    sub = schema.subset(["age", "color"])
    table, got = source_input(src, None, sub)                    # a subset of the predictors: projected
    assert got.predictors == ["age", "color"] and table.equals(src.count_table().project(["age", "color"]))


@pytest.mark.parametrize("call, message", [
    (lambda src, X, schema: source_input(src, np.zeros(3), None), "y must be None when X is a Source"),
    (lambda src, X, schema: source_input(X, None, schema), "requires y to be passed"),
    (lambda src, X, schema: source_input(src, None, schema.with_target("label", ["a", "b"])), "schema must be None"),
    (lambda src, X, schema: source_input(src, None, "schema"), "must be a dpexplore Schema"),
])
def test_source_input_bad_input(frame, schema, call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(sources.pandas(frame, schema), frame[schema.predictors], schema)


# ---------------------------------------------------------------------------- PrivPfC
def test_privpfc_weighted_scorer_equals_record_scorer(frame, schema):
    """The record path now runs on the CountTable: same qualities, counts and release as the
    former per-record scorer (GridScorer over LevelCodes), seed for seed."""
    X, y = frame[schema.predictors], frame[schema.target]
    rows = GridScorer(LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    cells = GridScorer.from_table(CountTable.from_frame(X, y, schema))
    assert cells.n_rows == rows.n_rows == len(frame)
    for seed in range(4):
        a = run_privpfc(rows, epsilon=2.0, random_state=seed)
        b = run_privpfc(cells, epsilon=2.0, random_state=seed)
        np.testing.assert_array_equal(a.qualities, b.qualities)
        assert a.index == b.index and a.n_hat == b.n_hat
        np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)
    for grid in ([0, 0, 0, 0, 0], [1, 2, 1, 1, 1], [2, 1, 0, 1, 0]):
        np.testing.assert_array_equal(rows.counts(grid), cells.counts(grid))
        assert cells.counts(grid).dtype == np.int64
    model = PrivPfC(epsilon=2.0, random_state=7, schema=schema).fit(X, y)
    run = run_privpfc(rows, epsilon=2.0, random_state=7)
    assert list(model.grid_.values()) == list(run.grid) and model.n_hat_ == run.n_hat
    np.testing.assert_array_equal(model.counts_, run.noisy_counts)


def test_privpfc_engine_equivalence(frame, schema, tmp_path):
    X, y = frame[schema.predictors], frame[schema.target]
    reference = PrivPfC(epsilon=3.0, random_state=11, schema=schema).fit(X, y)
    ref = privpfc_release(reference)
    for name, src in engine_sources(frame, schema, tmp_path).items():
        model = PrivPfC(epsilon=3.0, random_state=11).fit(src)
        assert_same_privpfc(privpfc_release(model), ref)
        assert list(model.classes_) == list(schema.classes)      # the schema's strings
        assert model.n_features_in_ == len(schema.predictors)
        assert list(model.feature_names_in_) == schema.predictors
        np.testing.assert_array_equal(model.predict(X), reference.predict(X))
        assert model.epsilon_spent_ == pytest.approx(3.0)


def test_privpfc_fit_from_table_never_reads_rows(frame, schema):
    X, y = frame[schema.predictors], frame[schema.target]
    src = TableSource(CountTable.from_frame(X, y, schema))
    model = PrivPfC(epsilon=3.0, random_state=5).fit(src)
    assert_same_privpfc(privpfc_release(model), privpfc_release(PrivPfC(epsilon=3.0, random_state=5, schema=schema).fit(X, y)))


def test_privpfc_work_depends_on_cells_not_records(frame, schema, monkeypatch):
    """A table and the same table with every count ×1000 (a 1000× larger data set with the
    same occupied cells): the scorer makes the same bincount calls on arrays of the same length."""
    small = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    big = CountTable(schema, small.leaf_codes, small.class_codes, small.counts * 1000)
    calls = {}
    original = GridScorer._bincount

    def spy(self, key, minlength):
        calls.setdefault(id(self), []).append((key.size, minlength))
        return original(self, key, minlength)

    monkeypatch.setattr(GridScorer, "_bincount", spy)
    scorers = [GridScorer.from_table(t) for t in (small, big)]
    pool = np.array([[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [2, 1, 0, 0, 0], [1, 2, 1, 1, 1], [0, 1, 2, 1, 1]])
    for s in scorers:
        s.score(pool, 0.5)
        s.counts([2, 2, 1, 1, 1])
    a, b = (calls[id(s)] for s in scorers)
    assert a == b and all(size == small.n_occupied for size, _ in a)
    assert scorers[1].n_rows == 1000 * scorers[0].n_rows


def test_privpfc_source_bad_input_before_any_spend(frame, schema):
    src = sources.pandas(frame, schema)
    acc = BudgetAccountant(10.0)
    with pytest.raises(ValueError, match="y must be None"):
        PrivPfC(epsilon=1.0, accountant=acc).fit(src, frame[schema.target])
    with pytest.raises(ValueError, match="requires y to be passed"):
        PrivPfC(epsilon=1.0, accountant=acc).fit(frame[schema.predictors])
    with pytest.raises(ValueError, match="schema must be None"):
        PrivPfC(epsilon=1.0, accountant=acc, schema=schema.with_target("label", ["b", "a"])).fit(src)
    bad = frame.assign(age=frame["age"].where(frame.index != 5, 1000))      # outside the public range
    with pytest.raises(ValueError, match="outside its public range"):
        PrivPfC(epsilon=1.0, accountant=acc).fit(sources.pandas(bad, schema))
    # a schema whose taxonomy went missing after the Source was made
    broken = sources.pandas(frame, schema)
    broken.schema = copy.deepcopy(schema)
    broken.schema["color"].taxonomy = None
    with pytest.raises(ValueError, match="attribute 'color' has no taxonomy"):
        PrivPfC(epsilon=1.0, accountant=acc).fit(broken)
    assert acc.spent == 0


def test_privpfc_source_subset_schema(frame, schema):
    sub = schema.subset(["age", "x", "color"])
    src = sources.pandas(frame, schema)
    model = PrivPfC(epsilon=2.0, random_state=3, schema=sub).fit(src)
    ref = PrivPfC(epsilon=2.0, random_state=3, schema=sub).fit(frame[sub.predictors], frame[schema.target])
    assert list(model.grid_) == sub.predictors
    assert_same_privpfc(privpfc_release(model), privpfc_release(ref))


# ---------------------------------------------------------------------------- ProjectedHistogram
from dpexplore.publish import projected as ph  # noqa: E402


def projected_release(model):
    return (model.selected_, model.n_hat_, model.n_bins_, model.k_, model.threshold_,
            model.counts_.codes.copy(), model.counts_.values.copy(), model.synthetic(random_state=0))


def assert_same_projected(a, b):
    assert a[:5] == b[:5]
    np.testing.assert_array_equal(a[5], b[5])
    np.testing.assert_array_equal(a[6], b[6])
    pd.testing.assert_frame_equal(a[7], b[7])


def edge_frame(frame, schema, n_bins):
    """``frame`` plus rows whose numeric values sit on every bin start t_b and the doubles around it."""
    extra = []
    for b, row in enumerate(frame.head(60).itertuples(index=False)):
        extra.append(row._asdict())
    rows = pd.DataFrame(extra)
    out = [frame]
    for name in schema.numeric:
        attr = schema[name]
        starts = ph.bin_starts(attr.lower, attr.upper, n_bins)
        values = [v for t in starts for v in (np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf))]
        if attr.integer:
            values = [float(np.floor(v)) for v in values] + [float(np.ceil(v)) for v in values]
        values = [min(max(v, attr.lower), attr.upper) for v in values]
        block = rows.iloc[np.arange(len(values)) % len(rows)].reset_index(drop=True)
        block[name] = np.asarray(values).astype(frame[name].dtype)
        out.append(block)
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("n_bins", [2, 7, 13])
def test_projected_bins_reproduce_discretise_bit_for_bit(frame, schema, n_bins, tmp_path):
    """The binned schema's leaves are exactly discretise's bins, also at the doubles around each
    bin start, in pandas and DuckDB."""
    data = edge_frame(frame, schema, n_bins)
    for name in schema.numeric:
        attr = schema[name]
        for b, t in enumerate(ph.bin_starts(attr.lower, attr.upper, n_bins), start=1):
            assert ph.discretise(t, attr.lower, attr.upper, n_bins) == b
            assert ph.discretise(np.nextafter(t, -np.inf), attr.lower, attr.upper, n_bins) == b - 1
    binned = ph.binned_schema(schema, n_bins)
    model = ph.ProjectedHistogram(n_bins=n_bins)
    model.schema_ = schema
    expected, sizes = model._codes(data[schema.predictors], schema.predictors, n_bins)
    leaves = binned.leaf_codes(data[schema.predictors])
    np.testing.assert_array_equal(np.column_stack([leaves[a] for a in schema.predictors]), expected)
    for src in engine_sources(data, schema, tmp_path).values():
        codes, got_sizes, y_codes, weights = ph._binned_cells(src, schema, n_bins)
        assert got_sizes == sizes and weights.sum() == len(data)
        rows = np.column_stack([expected, schema.encode_target(data[schema.target])])
        uniq, counts = np.unique(rows, axis=0, return_counts=True)
        np.testing.assert_array_equal(np.column_stack([codes, y_codes]), uniq)
        np.testing.assert_array_equal(weights, counts)


def test_projected_weighted_scores_equal_record_scores(frame, schema):
    model = ph.ProjectedHistogram()
    model.schema_ = schema
    codes, _ = model._codes(frame[schema.predictors], schema.predictors, 5)
    y = schema.encode_target(frame[schema.target])
    uniq, counts = np.unique(np.column_stack([codes, y]), axis=0, return_counts=True)
    for selected in ([], [0], [1, 3]):
        np.testing.assert_array_equal(ph.candidate_scores(codes, y, selected),
                                      ph.candidate_scores(uniq[:, :-1], uniq[:, -1], selected, weights=counts))
    assert ph.discernibility(codes, y, [0, 2]) == ph.discernibility(uniq[:, :-1], uniq[:, -1], [0, 2], counts)
    with pytest.raises(ValueError, match="weights must hold"):
        ph.discernibility(uniq[:, :-1], uniq[:, -1], [0], counts[:-1])


PROJECTED_SETTINGS = [dict(), dict(k=2, n_bins=7), dict(k=3, neighbours="substitution", n_bins="projected")]


@pytest.mark.parametrize("settings", PROJECTED_SETTINGS)
def test_projected_engine_equivalence(frame, schema, settings, tmp_path):
    data = edge_frame(frame, schema, 7)
    X, y = data[schema.predictors], data[schema.target]
    reference = ph.ProjectedHistogram(epsilon=3.0, random_state=4, **settings, schema=schema).fit(X, y)
    ref = projected_release(reference)
    for name, src in engine_sources(data, schema, tmp_path).items():
        model = ph.ProjectedHistogram(epsilon=3.0, random_state=4, **settings).fit(src)
        assert_same_projected(projected_release(model), ref)
        assert list(model.classes_) == list(schema.classes) and model.n_features_in_ == len(schema.predictors)
        np.testing.assert_array_equal(model.predict_proba(X), reference.predict_proba(X))
        assert model.epsilon_spent_ == pytest.approx(3.0)


def test_projected_fit_from_source_reads_no_rows(frame, schema, monkeypatch):
    """After the count tables are built the fit never touches rows: every row access raises."""
    src = sources.pandas(frame, schema)
    for name in ("_iter_frames", "_xy"):
        monkeypatch.setattr(type(src), name, lambda *a, **k: (_ for _ in ()).throw(AssertionError("row access")))
    monkeypatch.setattr(type(src), "_build", lambda self: CountTable.from_frame(
        frame[self.schema.predictors], frame[self.schema.target], self.schema))   # the engine's group-by
    model = ph.ProjectedHistogram(epsilon=3.0, random_state=4, k=2).fit(src)
    ref = ph.ProjectedHistogram(epsilon=3.0, random_state=4, k=2, schema=schema).fit(frame[schema.predictors], frame[schema.target])
    assert_same_projected(projected_release(model), projected_release(ref))


def test_projected_source_bad_input_before_any_spend(frame, schema):
    acc = BudgetAccountant(10.0)
    src = sources.pandas(frame, schema)
    with pytest.raises(ValueError, match="y must be None"):
        ph.ProjectedHistogram(epsilon=1.0, accountant=acc).fit(src, frame[schema.target])
    with pytest.raises(ValueError, match="requires y to be passed"):
        ph.ProjectedHistogram(epsilon=1.0, accountant=acc).fit(frame[schema.predictors])
    bad = frame.assign(color=frame["color"].where(frame.index != 3, "purple"))
    with pytest.raises(ValueError, match="outside its declared categories"):
        ph.ProjectedHistogram(epsilon=1.0, accountant=acc).fit(sources.pandas(bad, schema))
    assert acc.spent == 0


# ---------------------------------------------------------------------------- HistogramClassifier
def test_histogram_classifier_from_source(frame, schema, tmp_path):
    from dpexplore.models.histogram import HistogramClassifier
    X, y = frame[schema.predictors], frame[schema.target]
    grid = {"age": 1, "x": 2, "color": 1}
    ref = HistogramClassifier(schema=schema, grid=grid).fit(X, y)
    for src in engine_sources(frame, schema, tmp_path).values():
        model = HistogramClassifier(schema=schema, grid=grid).fit(src)
        np.testing.assert_array_equal(model.counts_, ref.counts_)
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    with pytest.raises(ValueError, match="y must be None"):
        HistogramClassifier(schema=schema).fit(sources.pandas(frame, schema), y)


# ---------------------------------------------------------------------------- DiffMulti, DiffGen (helper P2b)
from dpexplore.publish import diffgen as dg_module  # noqa: E402
from dpexplore.publish import diffmulti as dm_module  # noqa: E402
from dpexplore.publish.diffgen import DiffGen  # noqa: E402
from dpexplore.publish.diffmulti import DiffMulti  # noqa: E402

from dpexplore.publish.partition import RegionRelease  # noqa: E402
from dpexplore.registry import all_methods, get_method  # noqa: E402

#: fast parameters per registered region publisher (test_every_region_publisher_has_params)
REGION_PARAMS = {"DiffMulti": {"epsilon": 2.0, "h": 12}, "DiffGen": {"epsilon": 2.0, "steps": 6}}
REGISTERED_REGIONS = [spec.name for spec in all_methods("publisher", private=True)
                      if issubclass(spec.load(), RegionRelease)]


def _region_method(name: str):
    return lambda **kw: get_method(name).build(**{**REGION_PARAMS[name], **kw})


REGION_METHODS = {name: _region_method(name) for name in REGISTERED_REGIONS if name in REGION_PARAMS}
REGION_CASES = [(name, util) for name in REGION_METHODS for util in ("max", "ncp")]


def test_every_region_publisher_has_params():
    assert sorted(REGION_PARAMS) == sorted(REGISTERED_REGIONS) == ["DiffGen", "DiffMulti"]


def leaf_frame(frame, schema):
    """``frame`` with every numeric value replaced by its leaf's representative value (what a
    fit from a source sees): on it the record path and the weighted path see the same data."""
    table = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    out = frame.copy()
    for name in schema.numeric:
        rep = np.asarray(table.representative_values(name), dtype=float)
        rep = np.floor(rep) if schema[name].integer else rep
        out[name] = rep[schema[name].taxonomy.leaf_codes(frame[name])].astype(frame[name].dtype)
    return out


def region_release(model):
    extra = model.tree_.copy() if hasattr(model, "tree_") else model.history_.copy()
    return (model.noisy_counts_.copy(), model.partitions_.copy(), extra, model.epsilon_spent_,
            model.synthetic(random_state=0), model.synthetic(values="generalized"))


def assert_same_region(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    pd.testing.assert_frame_equal(a[2], b[2])
    assert a[3] == b[3]
    pd.testing.assert_frame_equal(a[4], b[4])
    pd.testing.assert_frame_equal(a[5], b[5])


@pytest.mark.parametrize("name, utility", REGION_CASES)
def test_region_weighted_cells_equal_records_at_leaf_resolution(frame, schema, name, utility):
    """On data whose numeric values already sit at leaf resolution the weighted path (the
    occupied cells, weight = count) and the record path release exactly the same thing, seed
    for seed: every count is the same sum, only computed over cells."""
    data = leaf_frame(frame, schema)
    X, y = data[schema.predictors], data[schema.target]
    for seed in range(3):
        ref = REGION_METHODS[name](utility=utility, random_state=seed, schema=schema).fit(X, y)
        model = REGION_METHODS[name](utility=utility, random_state=seed).fit(sources.pandas(frame, schema))
        assert_same_region(region_release(model), region_release(ref))
        np.testing.assert_array_equal(model.predict(frame[schema.predictors]), ref.predict(frame[schema.predictors]))


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_engine_equivalence(frame, schema, name, tmp_path):
    reference = REGION_METHODS[name](random_state=11).fit(sources.pandas(frame, schema))
    ref = region_release(reference)
    X = frame[schema.predictors]
    for engine, src in engine_sources(frame, schema, tmp_path).items():
        model = REGION_METHODS[name](random_state=11).fit(src)
        assert_same_region(region_release(model), ref)
        assert list(model.classes_) == list(schema.classes)       # the schema's strings
        assert model.classes_.dtype == object
        assert model.n_features_in_ == len(schema.predictors)
        assert list(model.feature_names_in_) == schema.predictors
        np.testing.assert_array_equal(model.predict_proba(X), reference.predict_proba(X))
        assert model.epsilon_spent_ == pytest.approx(2.0)


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_source_numeric_resolution_is_the_leaves(frame, schema, name):
    """A source fit sees one value per numeric leaf: the raw values inside a leaf do not matter
    (the record path reads them, so it may differ), and split points need not be leaf edges."""
    moved = frame.copy()
    codes = schema["x"].taxonomy.leaf_codes(frame["x"])
    edges = schema["x"].taxonomy.edges(schema["x"].taxonomy.height - 1)
    lo = np.maximum(edges[codes], schema["x"].lower)
    moved["x"] = lo + (np.minimum(edges[codes + 1], schema["x"].upper) - lo) * 0.999   # same leaves
    a = REGION_METHODS[name](random_state=2).fit(sources.pandas(frame, schema))
    b = REGION_METHODS[name](random_state=2).fit(sources.pandas(moved, schema))
    assert_same_region(region_release(a), region_release(b))


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_fit_from_table_never_reads_rows(frame, schema, name):
    X, y = frame[schema.predictors], frame[schema.target]
    src = TableSource(CountTable.from_frame(X, y, schema))
    model = REGION_METHODS[name](random_state=5).fit(src)
    assert_same_region(region_release(model),
                       region_release(REGION_METHODS[name](random_state=5).fit(sources.pandas(frame, schema))))


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_work_depends_on_cells_not_records(frame, schema, name, monkeypatch):
    """The same occupied cells with every count ×1000 (a 1000× larger table): every array the
    split scores, split points and partition counts walk has at most one entry per occupied
    cell, never one per record."""
    small = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    big = CountTable(schema, small.leaf_codes, small.class_codes, small.counts * 1000)
    sizes = []

    def spy(fn):
        def wrapped(*args, **kwargs):
            sizes.append(len(args[1]))            # y: one entry per row the function walks
            return fn(*args, **kwargs)
        return wrapped

    for module in (dm_module, dg_module):
        for fname in ("numeric_children", "split_utilities"):
            if hasattr(module, fname):
                monkeypatch.setattr(module, fname, spy(getattr(dm_module, fname)))
    cat = dm_module.categorical_children

    def cat_spy(nav, node, leaf_codes, y, *rest):
        sizes.append(len(y))
        return cat(nav, node, leaf_codes, y, *rest)

    monkeypatch.setattr(dm_module, "categorical_children", cat_spy)
    monkeypatch.setattr(dg_module, "categorical_children", cat_spy)
    for table in (small, big):
        sizes.clear()
        model = REGION_METHODS[name](epsilon=20.0, random_state=1).fit(TableSource(table))
        assert sizes and max(sizes) <= table.n_occupied < len(frame)
        assert model.noisy_counts_.sum() == pytest.approx(table.n_records, rel=0.05)   # weights were used
    assert big.n_records == 1000 * small.n_records


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_source_subset_schema(frame, schema, name):
    sub = schema.subset(["age", "color"])
    src = sources.pandas(frame, schema)
    model = REGION_METHODS[name](random_state=3, schema=sub).fit(src)
    ref = REGION_METHODS[name](random_state=3).fit(sources.pandas(frame[sub.predictors + [schema.target]], sub))
    assert model.schema_.predictors == ["age", "color"] and list(model.feature_names_in_) == ["age", "color"]
    assert_same_region(region_release(model), region_release(ref))


@pytest.mark.parametrize("name", REGION_METHODS)
def test_region_source_bad_input_before_any_spend(frame, schema, name):
    make = REGION_METHODS[name]
    acc = BudgetAccountant(10.0)
    src = sources.pandas(frame, schema)
    with pytest.raises(ValueError, match="y must be None"):
        make(accountant=acc).fit(src, frame[schema.target])
    with pytest.raises(ValueError, match="requires y to be passed"):
        make(accountant=acc).fit(frame[schema.predictors])
    with pytest.raises(ValueError, match="schema must be None"):
        make(accountant=acc, schema=schema.with_target("label", ["b", "a"])).fit(src)
    with pytest.raises(ValueError, match="outside its public range"):
        make(accountant=acc).fit(sources.pandas(frame.assign(age=frame["age"].where(frame.index != 5, 1000)), schema))
    with pytest.raises(ValueError, match="n_max=10 is below"):       # the same rule as the record path
        make(accountant=acc, utility="dm", n_max=10).fit(src)
    for attribute in ("age", "color"):        # a numeric and a categorical taxonomy gone missing
        broken = sources.pandas(frame, schema)
        broken.schema = copy.deepcopy(schema)
        broken.schema[attribute].taxonomy = None
        with pytest.raises(ValueError, match=f"attribute '{attribute}' has no taxonomy"):
            make(accountant=acc).fit(broken)
    assert acc.spent == 0 and acc.ledger.empty


# ------------------------------------------------ DiffMulti, DiffGen from a source: privacy audit (helper P2b)
def _region_audit_setup():
    from dpexplore.domain import Attribute, Schema, Taxonomy
    x_tax = Taxonomy.from_spec("x", {"type": "numeric", "levels": [[0, 3], [0, 0.5, 1.5, 2.5, 3]]})  # one leaf per integer
    abcd = Taxonomy.from_spec("c", {"type": "categorical", "tree": {"Any": {"ab": ["a", "b"], "cd": ["c", "d"]}}})
    numeric = Schema([Attribute.numeric("x", 0, 3, x_tax, integer=True)], "label", ["0", "1", "2"])
    categorical = Schema([Attribute.categorical("c", taxonomy=abcd)], "label", ["0", "1", "2"])
    y, y2 = ["0", "0", "1", "1"], ["0", "0", "1", "1", "2"]     # D' adds one record of the rare class 2 …
    return {   # … at the domain's edge (x = 3, c = "d"); the probe is that corner
        "DiffMulti": (DiffMulti, {"h": 1}, numeric, pd.DataFrame({"x": [0, 1, 1, 2], "label": y}),
                      pd.DataFrame({"x": [0, 1, 1, 2, 3], "label": y2}), pd.DataFrame({"x": [3]})),
        "DiffGen": (DiffGen, {"steps": 1}, categorical, pd.DataFrame({"c": list("abbc"), "label": y}),
                    pd.DataFrame({"c": list("abbcd"), "label": y2}), pd.DataFrame({"c": ["d"]})),
    }


def _region_audit_run(name):
    cls, kw, schema, _, _, probe = _region_audit_setup()[name]

    def run(data, rng):   # the public API: fit(source); output = the released corner count > 1
        m = cls(epsilon=1.0, random_state=rng, **kw).fit(sources.pandas(data, schema))
        return repr((m.classes_.tolist(), bool(m.noisy_counts_[int(m.apply(probe)[0]), 2] > 1.0)))
    return run


@pytest.mark.parametrize("name", ["DiffMulti", "DiffGen"])
def test_region_source_fit_privacy_audit(name):
    from privacy_audit import assert_flagged, assert_private, weakened_noise
    _, _, _, D, D2, _ = _region_audit_setup()[name]
    res = assert_private(_region_audit_run(name), D, D2, 1.0, n_samples=600, seed=0)
    print(f"\nAUDIT | {name} fit(source): rare class at the edge | claimed ε = 1.0 | "
          f"lower bound {res.epsilon_lower:.3f} | point {res.epsilon_hat:.3f}")
    with weakened_noise(3):
        res = assert_flagged(_region_audit_run(name), D, D2, 1.0, n_samples=800, seed=1)
    print(f"AUDIT | {name} fit(source), weakened_noise(3) (broken) | claimed ε = 1.0 | "
          f"lower bound {res.epsilon_lower:.3f} | point {res.epsilon_hat:.3f}")


# ---------------------------------------------------------------------------- streamed test-set evaluation
def test_score_source_streams_and_equals_the_in_memory_score(tmp_path):
    """A big test table is scored batch by batch through its engine; the accuracy equals
    ``score`` on the same rows in memory, for a record-path model and a binarised NB."""
    import duckdb

    from dpexplore.datasets import load_adult
    from dpexplore.evaluate import score_source
    from dpexplore.models import PrivateNaiveBayes
    from dpexplore.publish import PrivPfC

    frame, schema = load_adult()
    train, test = frame.iloc[:30_000], frame.iloc[30_000:]
    path = tmp_path / "test.parquet"
    duckdb.from_df(test).write_parquet(str(path))
    test_source = sources.parquet(str(path), schema)
    model = PrivPfC(epsilon=1.0, random_state=0).fit(sources.pandas(train, schema))
    X_test, y_test = schema.split(test)
    expected = float(np.mean(model.predict(X_test).astype(str) == y_test.astype(str).to_numpy()))
    assert score_source(model, test_source, batch_rows=4_096) == pytest.approx(expected, abs=1e-12)
    nb = PrivateNaiveBayes(epsilon=1.0, random_state=0).fit(sources.pandas(train, schema))
    assert score_source(nb, test_source) == pytest.approx(nb.score(nb.binarizer_.transform(X_test), y_test))
    with pytest.raises(TypeError, match="Source"):
        score_source(model, test)
