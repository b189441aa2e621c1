"""Count once, release many: a source counts its table once per schema, and every later fit of
any method on it (or on a view of it) reuses that count.

Exactness first: a table derived from a finer one by aggregation equals the table a scan of the
records gives, under every schema a method asks for; a schema that cannot be derived exactly
(other public domains, bins that cut a built leaf) is counted by a scan, with its checks.
"""
import numpy as np
import pandas as pd
import pytest

from dpexplore import Attribute, Schema, Taxonomy, sources
from dpexplore.counts import CountTable
from dpexplore.sources import _tables
from dpexplore.sources._backend import ExpressionSource
from dpexplore.sources._pandas_engine import PandasSource
from _fixtures import engine_sources, schema  # noqa: F401 (pytest fixtures)
from _fixtures import fit_frame as frame  # noqa: F401 (a pytest fixture)


def scans(monkeypatch):
    """Count the engines' scans: a DuckDB/Spark group-by or aggregate, a pandas build."""
    calls = []
    for cls, name in [(ExpressionSource, "run"), (PandasSource, "_build")]:
        original = getattr(cls, name)

        def spy(self, *args, _original=original, **kwargs):
            calls.append(type(self).__name__)
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(cls, name, spy)
    return calls


def recount(frame, schema):
    X, y = frame[schema.predictors], frame[schema.target]
    return CountTable.from_frame(X, y, schema)


def coarser(schema):
    """A coarser public schema over three predictors: age in 5 bins (unions of its 10 leaves), x
    cut at 0.3…04 only (one of its leaf edges), color with a flat taxonomy (the same categories)."""
    x_tax = Taxonomy.from_spec("x", {"type": "numeric", "levels": [[0.0, 1.0], [0.0, 0.30000000000000004, 1.0]]})
    return Schema([Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (5,)), integer=True),
                   Attribute.categorical("color", ["blue", "red", "orange"]),
                   Attribute.numeric("x", 0.0, 0.9, x_tax)], schema.target, schema.classes)


def cut(schema, name, edges):
    """``schema`` with the numeric attribute ``name`` on new leaf edges (same public range)."""
    attr = schema[name]
    tax = Taxonomy.from_spec(name, {"type": "numeric", "levels": [[edges[0], edges[-1]], list(edges)]})
    attrs = [Attribute.numeric(name, attr.lower, attr.upper, tax, integer=attr.integer) if n == name else a
             for n, a in schema.attributes.items()]
    return Schema(attrs, schema.target, schema.classes)


@pytest.mark.parametrize("kind", ["pandas", "duckdb-parquet", "duckdb-sql"])
def test_coarser_and_smaller_views_are_aggregated_not_scanned(kind, frame, schema, tmp_path, monkeypatch):
    src = engine_sources(frame, schema, tmp_path)[kind]
    calls = scans(monkeypatch)
    src.count_table()
    assert len(calls) == 1                                   # one scan counts and checks
    views = [schema.subset(["color", "age"]), coarser(schema),
             cut(schema, "x", [0.0, 0.1, 0.7, 1.0]),        # a union of leaves
             cut(schema, "x", [0.0, 0.1, 0.95, 1.0])]       # an edge above the public range cuts no value
    for view in views:
        table = src.with_schema(view).count_table()
        assert table == recount(frame, view)
        assert table.schema is view
    assert len(calls) == 1                                   # none of them scanned the data again
    fresh = engine_sources(frame, schema, tmp_path)[kind]   # a scan under the coarse schema gives the same
    assert fresh.with_schema(coarser(schema)).count_table() == recount(frame, coarser(schema))


def test_views_that_cut_a_leaf_or_change_a_domain_are_scanned_with_their_checks(frame, schema, tmp_path,
                                                                                monkeypatch):
    src = engine_sources(frame, schema, tmp_path)["duckdb-sql"]
    src.count_table()
    calls = scans(monkeypatch)
    bins = cut(schema, "age", [0.0, 33.0, 66.5, 100.0])       # 33 and 66.5 are no leaf edges of age
    assert _tables.leaf_maps(schema, bins) is None
    assert src.with_schema(bins).count_table() == recount(frame, bins)
    assert len(calls) == 1
    assert src.with_schema(bins).count_table() == recount(frame, bins)   # counted once, then kept
    assert len(calls) == 1
    narrow = Schema([Attribute.numeric("age", 0, 50, Taxonomy.equal_width("age", 0, 50, (5,)), integer=True)],
                    schema.target, schema.classes)      # a narrower public range: its own checks run
    assert _tables.leaf_maps(schema, narrow) is None
    with pytest.raises(ValueError, match="outside its public range"):
        src.with_schema(narrow).count_table()
    assert src.with_schema(schema).count_table() is src.count_table()


def test_a_failed_count_caches_nothing_and_cached_counts_are_read_only(frame, schema):
    bad = frame.assign(age=frame["age"].where(frame.index != 3, 1000))
    src = sources.duckdb(bad, schema)
    for _ in range(2):                                       # raised again: nothing was kept
        with pytest.raises(ValueError, match="outside its public range"):
            src.count_table()
    assert src._count_table is None and "0 schema" in repr(src._tables)
    table = sources.duckdb(frame, schema).count_table()
    for array in (table.counts, table.class_codes, table.leaf_codes["age"]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0


# ---------------------------------------------------------------------------- every method's view
def _methods(schema):
    from dpexplore.models.histogram import HistogramClassifier
    from dpexplore.models.naive_bayes import PrivateNaiveBayes
    from dpexplore.publish.diffgen import DiffGen
    from dpexplore.publish.diffmulti import DiffMulti
    from dpexplore.publish.privpfc import PrivPfC
    from dpexplore.publish.projected import ProjectedHistogram
    return {
        "PrivPfC": lambda: PrivPfC(epsilon=2.0, random_state=1),
        "PrivPfC on a subset": lambda: PrivPfC(epsilon=2.0, random_state=1, schema=schema.subset(["age", "color"])),
        "ProjectedHistogram": lambda: ProjectedHistogram(epsilon=2.0, random_state=1, k=2, n_bins=7),
        "DiffMulti": lambda: DiffMulti(epsilon=2.0, random_state=1, h=8),
        "DiffGen": lambda: DiffGen(epsilon=2.0, random_state=1, steps=4),
        "PrivateNaiveBayes": lambda: PrivateNaiveBayes(epsilon=2.0, random_state=1),
        "HistogramClassifier": lambda: HistogramClassifier(schema=schema, grid={"age": 1, "x": 2, "color": 1}),
    }


def _release(model, X):
    if hasattr(model, "theta_"):             # Naive Bayes: its noisy parameters (it predicts on indicators)
        return [model.theta_.copy(), model.class_prior_.copy()]
    fitted = set(model.feature_names_in_)      # a method fitted on a subset predicts from it
    out = [np.asarray(model.predict(X[[c for c in X.columns if c in fitted]]))]
    if hasattr(model, "synthetic"):
        out.append(model.synthetic(random_state=0))
    return out


def _same(a, b):
    for u, v in zip(a, b):
        if isinstance(u, pd.DataFrame):
            pd.testing.assert_frame_equal(u, v)
        else:
            np.testing.assert_array_equal(u, v)


def test_every_method_counts_once_and_later_fits_reuse_the_count(frame, schema, tmp_path, monkeypatch):
    """On one DuckDB source: the first fit scans (once for the table, once more for the
    projected histogram's own bins); every later fit of any method scans nothing, and each
    method's release equals its release from a fresh source. Every table a method asked for
    equals the table a scan of the records gives under that schema."""
    X = frame[schema.predictors]
    methods = _methods(schema)
    fresh = {name: _release(make().fit(engine_sources(frame, schema, tmp_path)["duckdb-sql"]), X)
             for name, make in methods.items()}
    asked = []
    get = _tables.CountCache.get
    monkeypatch.setattr(_tables.CountCache, "get",
                        lambda self, s, build: asked.append(s) or get(self, s, build))
    calls = scans(monkeypatch)
    src = engine_sources(frame, schema, tmp_path)["duckdb-sql"]
    for round_ in range(2):
        for name, make in methods.items():
            before = len(calls)
            _same(_release(make().fit(src), X), fresh[name])
            expected = 0 if round_ else int(name in ("PrivPfC", "ProjectedHistogram"))
            assert len(calls) - before == expected, (round_, name)
    assert {_tables.schema_key(s) for s in asked} >= {_tables.schema_key(schema)}
    for view in list(asked):                                # derived or scanned: what a recount gives
        assert src.with_schema(view).count_table() == recount(frame, view)
