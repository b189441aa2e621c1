"""The CountTable: exact counts over occupied (leaf × class) cells, and the views derived from it."""
import pickle
import re

import numpy as np
import pandas as pd
import pytest

from dpexplore import Attribute, Schema, Taxonomy
from dpexplore.counts import CountTable, group_counts
from dpexplore.histogram import LevelCodes, class_counts, sparse_class_counts
from _fixtures import frame, make_schema, reference, schema  # noqa: F401 (pytest fixtures)


@pytest.fixture(scope="module")
def table(frame, schema):
    return CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)


def test_matches_brute_force_reference(table, frame, schema):
    uniq, counts = reference(frame, schema)
    for i, n in enumerate(schema.predictors):
        assert table.leaf_codes[n].dtype == np.int32
        np.testing.assert_array_equal(table.leaf_codes[n], uniq[:, i])
    assert table.class_codes.dtype == np.int64 and table.counts.dtype == np.int64
    np.testing.assert_array_equal(table.class_codes, uniq[:, -1])
    np.testing.assert_array_equal(table.counts, counts)
    assert table.n_records == len(frame)
    assert table.class_totals()[2] == 0  # the declared class that never occurs


def test_constructor_canonicalises(table, schema):
    rng = np.random.default_rng(1)
    m = table.counts.size
    # shuffled, each cell split in two pieces, plus zero-count cells: the same table
    order = rng.permutation(2 * m)
    lc = {n: np.concatenate([c, c])[order] for n, c in table.leaf_codes.items()}
    half = table.counts // 2
    w = np.concatenate([half, table.counts - half])[order]
    rebuilt = CountTable(schema, lc, np.concatenate([table.class_codes] * 2)[order], w)
    assert rebuilt == table
    assert (rebuilt.counts > 0).all()


def test_constructor_rejects_bad_arrays(table, schema):
    lc = dict(table.leaf_codes)
    with pytest.raises(ValueError, match="class_codes must lie in 0..2"):
        CountTable(schema, lc, table.class_codes + 3, table.counts)
    with pytest.raises(ValueError, match="counts must be ≥ 0"):
        CountTable(schema, lc, table.class_codes, -table.counts)
    bad = dict(lc, age=lc["age"] + 100)
    with pytest.raises(ValueError, match="age must lie in 0..9"):
        CountTable(schema, bad, table.class_codes, table.counts)
    with pytest.raises(ValueError, match="every predictor"):
        CountTable(schema, {"age": lc["age"]}, table.class_codes, table.counts)


def test_equality_sees_any_difference(table, schema):
    other = CountTable(schema, table.leaf_codes, table.class_codes, table.counts + (np.arange(table.counts.size) == 0))
    assert other != table and not other.equals(table)
    assert table == pickle.loads(pickle.dumps(table))


def test_grid_counts_equal_the_record_path(table, frame, schema):
    X, y = frame[schema.predictors], schema.encode_target(frame[schema.target])
    codes = LevelCodes(X, schema)
    for grid in ([0, 0, 0, 0, 0], [1, 2, 1, 1, 1], [2, 2, 2, 1, 1], {"age": 1, "color": 2}):
        shape = codes.grid_shape(grid)
        expected = class_counts(codes.cell_codes(grid), y, int(np.prod(shape)), schema.n_classes)
        np.testing.assert_array_equal(table.grid_counts(grid), expected)
    # a grid on a subset of the attributes
    sub = LevelCodes(X, schema, ["x", "flag"])
    expected = class_counts(sub.cell_codes([2, 1]), y, int(np.prod(sub.grid_shape([2, 1]))), 3)
    np.testing.assert_array_equal(table.grid_counts([2, 1], ["x", "flag"]), expected)


def test_cell_codes_and_sparse_counts(table, frame, schema):
    X, y = frame[schema.predictors], schema.encode_target(frame[schema.target])
    grid = [2, 2, 2, 1, 1]
    cells_ref, counts_ref = sparse_class_counts(LevelCodes(X, schema).cell_codes(grid), y, 3)
    cells = table.cell_codes(grid)
    uniq, inverse = np.unique(cells, return_inverse=True)
    counts = np.zeros((uniq.size, 3), dtype=np.int64)
    np.add.at(counts, (inverse, table.class_codes), table.counts)
    np.testing.assert_array_equal(uniq, cells_ref)
    np.testing.assert_array_equal(counts, counts_ref)


def test_marginal_and_dense_at_coarser_levels(table, frame, schema):
    y = schema.encode_target(frame[schema.target])
    tax = schema["color"].taxonomy
    node = tax.generalize(frame["color"], 1)
    labels = tax.labels(1)
    m = table.marginal(["color", "flag"], {"color": 1})
    assert m.depths == {"color": 1, "flag": 1} and m.shape == (2, 2)
    got = {(labels[c], f, k): int(n) for c, f, k, n in zip(m.codes["color"], m.codes["flag"], m.class_codes, m.counts)}
    want = pd.Series(1, index=pd.MultiIndex.from_arrays([node, frame["flag"].astype(str).map({"False": 0, "True": 1}).to_numpy(), y]))
    want = want.groupby(level=[0, 1, 2]).sum()
    assert got == {k: int(v) for k, v in want.items()}
    dense = table.dense(["color", "flag"], [1, 1])
    assert dense.shape == (2, 2, 3) and dense.sum() == len(frame)
    for (lab, f, k), v in got.items():
        assert dense[labels.index(lab), f, k] == v
    np.testing.assert_array_equal(table.dense(["age"], [1])[:, :].sum(axis=0), table.class_totals())
    with pytest.raises(ValueError, match="max_entries"):
        table.dense(max_entries=10)


def test_node_codes_use_the_taxonomy(table, schema):
    for n in schema.predictors:
        tax = schema[n].taxonomy
        for d in range(tax.height):
            np.testing.assert_array_equal(table.node_codes(n, d), tax.node_codes(table.leaf_codes[n], d))
    with pytest.raises(ValueError, match="depth for 'age'"):
        table.node_codes("age", 7)
    with pytest.raises(ValueError, match="unknown column"):
        table.node_codes("nope", 0)


def test_partition_restrict_project_match_recounting(table, frame, schema):
    X, y = frame[schema.predictors], frame[schema.target]
    parts = table.partition("age", 1)
    assert len(parts) == 2
    node = schema["age"].taxonomy.node_codes(schema["age"].taxonomy.leaf_codes(X["age"]), 1)
    for i, part in enumerate(parts):
        rows = node == i
        assert part == CountTable.from_frame(X[rows], y[rows], schema)
    assert sum(p.n_records for p in parts) == table.n_records
    # an empty part keeps its place (the list length is public)
    empty = table.restrict(table.class_codes == 2)
    assert empty.n_records == 0 and len(empty.partition("color", 2)) == 4
    blue = table.where(color=[schema["color"].taxonomy.leaves.index("blue")])
    assert blue == CountTable.from_frame(X[X["color"] == "blue"], y[X["color"] == "blue"], schema)
    sub = schema.subset(["flag", "x"])
    assert table.project(["flag", "x"]) == CountTable.from_frame(X[["flag", "x"]], y, sub)
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        table.restrict(np.ones(3, dtype=bool))


def test_weighted_frame_round_trips(table, schema):
    w = table.as_weighted_frame()
    assert list(w.columns) == schema.predictors + ["label", "weight"]
    schema.validate(w[schema.predictors], w["label"])  # representatives lie in the public domain
    again = CountTable.from_codes(schema, schema.leaf_codes(w[schema.predictors]),
                                  schema.encode_target(w["label"]), w["weight"].to_numpy())
    assert again == table
    assert w["age"].dtype == np.int64 and w["x"].max() <= 0.9  # clipped to the attribute's range
    with pytest.raises(ValueError, match="already a column"):
        table.as_weighted_frame(weight="age")


def test_repr_and_pickle_carry_no_size(table):
    text = repr(table)
    assert str(table.n_records) not in text and str(table.n_occupied) not in text
    # 5 int32 leaf codes + int64 class + int64 count per occupied cell, nothing per record
    assert len(pickle.dumps(table)) < 1500 + 36 * table.n_occupied + len(pickle.dumps(table.schema))


def test_group_counts_large_domain_uses_lexsort():
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 5, 300) for _ in range(3)]
    small_codes, small_sums = group_counts(cols, [5, 5, 5])
    big_codes, big_sums = group_counts(cols, [2 ** 31, 2 ** 31, 5])  # key would overflow int64
    for a, b in zip(small_codes, big_codes):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(small_sums, big_sums)


@pytest.mark.parametrize("mutate", [
    lambda f: f.assign(age=f["age"].astype(float).where(f.index != 3)),
    lambda f: f.assign(x=f["x"].where(f.index != 5, 0.95)),
    lambda f: f.assign(x=f["x"].where(f.index != 5, np.inf)),
    lambda f: f.assign(color=f["color"].where(f.index != 2, "green")),
    lambda f: f.assign(label=f["label"].where(f.index != 1, "z")),
    lambda f: f.assign(age=f["age"].astype(str)),
])
def test_from_frame_errors_match_fit(frame, schema, mutate):
    bad = mutate(frame.copy())
    with pytest.raises(ValueError) as fit_error:
        schema.validate(bad[schema.predictors], bad["label"])
    with pytest.raises(ValueError, match=re.escape(str(fit_error.value))):
        CountTable.from_frame(bad[schema.predictors], bad["label"], schema)


def test_one_class_present_is_counted_not_refused(frame, schema):
    one = frame[frame["label"] == "a"]
    t = CountTable.from_frame(one[schema.predictors], one["label"], schema)
    assert set(t.class_codes.tolist()) == {0}


def test_schema_without_taxonomy_refused():
    s = Schema([Attribute.numeric("v", 0, 1)], "y", ["0", "1"])
    with pytest.raises(ValueError, match="'v' has no taxonomy"):
        CountTable.from_frame(pd.DataFrame({"v": [0.5]}), pd.Series(["0"]), s)
