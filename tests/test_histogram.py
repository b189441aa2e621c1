"""Cell codes, counts, noise on every cell, and synthetic rows from a histogram."""
import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.histogram import (LevelCodes, cell_codes, class_counts, decode_cells, noisy_counts,
                                 sparse_class_counts, synthetic_from_counts)


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 5000
    schema = Schema([
        Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 2)), integer=True),
        Attribute.categorical("colour", taxonomy=Taxonomy.from_spec("colour", {"type": "categorical", "tree": {
            "Any": {"warm": ["red", "orange"], "cold": ["blue", "green", "cyan"]}}})),
        Attribute.categorical("sex", ["F", "M"]),
    ], "y", ["a", "b", "c"])
    X = pd.DataFrame({"age": rng.integers(0, 101, n), "colour": rng.choice(["red", "orange", "blue", "green", "cyan"], n),
                      "sex": rng.choice(["F", "M"], n)})
    y = pd.Series(rng.choice(["a", "b", "c"], n))
    return schema, X, y


def test_counts_match_a_groupby(table):
    schema, X, y = table
    codes = LevelCodes(X, schema)
    grid = {"age": 2, "colour": 1, "sex": 1}
    shape = codes.grid_shape(grid)
    assert shape == (4, 2, 2)
    cells = codes.cell_codes(grid)
    counts = class_counts(cells, schema.encode_target(y), int(np.prod(shape)), 3)
    expected = pd.crosstab([pd.Series(schema["age"].taxonomy.generalize(X["age"], 2)),
                            pd.Series(schema["colour"].taxonomy.generalize(X["colour"], 1)), X["sex"]], y)
    assert counts.sum() == len(X)
    for (age, colour, sex), row in expected.iterrows():
        idx = np.ravel_multi_index((schema["age"].taxonomy.labels(2).index(age),
                                    schema["colour"].taxonomy.labels(1).index(colour),
                                    ["F", "M"].index(sex)), shape)
        assert list(counts[idx]) == list(row)


def test_cell_codes_round_trip_and_root_dimensions():
    a, b = np.array([0, 1, 2, 1]), np.array([3, 0, 1, 2])
    cells = cell_codes([a, np.zeros(4, int), b], (3, 1, 4))
    assert list(cells) == [3, 4, 9, 6]
    back = decode_cells(cells, (3, 1, 4))
    assert np.array_equal(back[0], a) and np.array_equal(back[2], b)


def test_noise_goes_on_every_cell_including_empty_ones():
    counts = np.zeros((1000, 2))
    noisy = noisy_counts(counts, epsilon=0.5, random_state=1)
    assert np.all(noisy != 0)
    assert abs(noisy.var() - 2 / 0.5**2) < 0.15 * 8
    geo = noisy_counts(counts, epsilon=0.5, mechanism="geometric", random_state=1)
    assert np.all(geo == np.round(geo)) and geo.std() > 1
    with pytest.raises(ValueError, match="mechanism"):
        noisy_counts(counts, epsilon=1, mechanism="gauss")


def test_synthetic_rows_follow_the_counts(table):
    schema, X, y = table
    codes = LevelCodes(X, schema)
    grid = (1, 1, 0)
    counts = class_counts(codes.cell_codes(grid), schema.encode_target(y), 4, 3).astype(float)
    counts[0, 0] = -3.4  # negative noisy counts give no rows
    counts[1, 1] = 2.6
    syn = synthetic_from_counts(counts, grid, schema)
    assert list(syn.columns) == ["age", "colour", "sex", "y"]
    assert len(syn) == int(np.rint(np.clip(counts, 0, None)).sum())
    assert set(syn["sex"]) == {"Any"} and set(syn["age"]) <= {"[0, 50]", "(50, 100]"}
    sampled = synthetic_from_counts(counts, grid, schema, values="sampled", random_state=2)
    schema.validate(sampled[schema.predictors], sampled["y"])  # sampled values stay in the domain
    gen = schema["age"].taxonomy.generalize(sampled["age"], 1)
    assert np.array_equal(gen, syn["age"].to_numpy())  # each value lies inside its cell
    assert sampled["age"].dtype.kind == "i"


def test_level_codes_validate_input(table):
    schema, X, y = table
    with pytest.raises(ValueError, match="unknown column"):
        LevelCodes(X, schema, ["age", "zip"])
    bad = X.copy()
    bad.loc[0, "colour"] = "purple"
    with pytest.raises(ValueError, match="colour"):
        LevelCodes(bad, schema)
    before = X.copy()
    LevelCodes(X, schema)
    pd.testing.assert_frame_equal(X, before)


def test_sparse_counts_agree_with_dense(table):
    schema, X, y = table
    codes = LevelCodes(X, schema)
    grid = (2, 2, 1)
    n_cells = int(np.prod(codes.grid_shape(grid)))
    cells = codes.cell_codes(grid)
    dense = class_counts(cells, schema.encode_target(y), n_cells, 3)
    where, sparse = sparse_class_counts(cells, schema.encode_target(y), 3)
    assert np.array_equal(dense[where], sparse)
    assert dense.sum() == sparse.sum() and np.all(dense[np.setdiff1d(np.arange(n_cells), where)] == 0)
    with pytest.raises(ValueError, match="sparse_class_counts"):
        class_counts(cells, schema.encode_target(y), 10**9, 3)
