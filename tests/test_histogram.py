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


# --------------------------------------------------------------------------- added
def test_counts_refuse_codes_out_of_range_instead_of_shifting_them():
    cells = np.array([0, 1, 1])
    # class code 2 with n_classes = 2 would otherwise be counted as class 0 of the next cell
    with pytest.raises(ValueError, match="y_codes"):
        class_counts(cells, np.array([0, 1, 2]), 3, 2)
    with pytest.raises(ValueError, match="cells"):
        class_counts(np.array([0, 3]), np.array([0, 1]), 3, 2)
    with pytest.raises(ValueError, match="one length"):
        class_counts(cells, np.array([0, 1]), 3, 2)
    with pytest.raises(ValueError, match="y_codes"):
        sparse_class_counts(cells, np.array([0, -1, 1]), 2)
    with pytest.raises(ValueError, match="integer"):
        class_counts(np.array([0.5]), np.array([0]), 3, 2)
    assert class_counts(cells, np.array([0, 1, 1]), 3, 2).tolist() == [[1, 0], [0, 2], [0, 0]]


def test_cell_codes_check_their_input():
    with pytest.raises(ValueError, match=r"level_codes\[1\]"):
        cell_codes([np.array([0, 1]), np.array([0, 4])], (2, 4))
    with pytest.raises(ValueError, match="int64"):
        cell_codes([np.zeros(2, int)] * 4, (2**20, 2**20, 2**20, 2**20))
    with pytest.raises(ValueError, match="one code array"):
        cell_codes([np.zeros(2, int)], (2, 2))


def test_geometric_noisy_counts_have_the_geometric_variance():
    from dpexplore.mechanisms import geometric_variance
    counts = np.full((20_000, 2), 5)
    noisy = noisy_counts(counts, epsilon=0.7, mechanism="geometric", random_state=np.random.default_rng(3))
    var = geometric_variance(epsilon=0.7)
    assert abs(noisy.mean() - 5) < 4 * np.sqrt(var / noisy.size)
    assert abs(noisy.var() - var) < 0.1 * var
    with pytest.raises(ValueError, match="integers"):
        noisy_counts(np.array([[2.7, 1.0]]), epsilon=1.0, mechanism="geometric")  # no silent truncation
    with pytest.raises(ValueError, match="epsilon"):
        noisy_counts(counts, epsilon=0.0)
    assert np.all(counts == 5)  # not mutated


def test_synthetic_rows_bad_input(table):
    schema, X, y = table
    counts = np.ones((4, 3))
    with pytest.raises(ValueError, match="depth"):
        synthetic_from_counts(counts, (1, -1, 0), schema)
    with pytest.raises(ValueError, match="one depth per predictor"):
        synthetic_from_counts(counts, (1, 1), schema)
    with pytest.raises(ValueError, match="unknown column"):
        synthetic_from_counts(counts, {"age": 1, "zip": 1}, schema)
    with pytest.raises(ValueError, match="finite"):
        synthetic_from_counts(np.full((4, 3), np.nan), (1, 1, 0), schema)
    with pytest.raises(ValueError, match="values"):
        synthetic_from_counts(counts, (1, 1, 0), schema, values="raw")
    with pytest.raises(ValueError, match="4 cells"):
        synthetic_from_counts(counts, (2, 1, 0), schema)


def test_sampled_integers_respect_a_lower_bound_inside_a_node():
    # taxonomy [0, 100] with node (10, 20]; the attribute's public range starts at 17
    tax = Taxonomy.from_spec("age", {"type": "numeric", "levels": [[0, 100], [0, 10, 20, 100]]})
    schema = Schema([Attribute.numeric("age", 17, 90, tax, integer=True)], "y", ["a", "b"])
    counts = np.zeros((3, 2))
    counts[1, 0] = 4000  # every row in (10, 20]
    rows = synthetic_from_counts(counts, (1,), schema, values="sampled", random_state=np.random.default_rng(0))
    assert set(rows["age"]) == {17, 18, 19, 20}
    freq = rows["age"].value_counts(normalize=True)
    assert np.all(np.abs(freq - 0.25) < 0.03)  # uniform over the node's integers


def test_finest_adult_grid_counts_every_row():
    from dpexplore.datasets import load_adult
    frame, schema = load_adult()
    X, y = schema.split(frame)
    codes = LevelCodes(X, schema)
    finest = [len(codes.level_sizes[a]) - 1 for a in codes.attributes]
    where, counts = sparse_class_counts(codes.cell_codes(finest), schema.encode_target(y), 2)
    assert counts.sum() == 45_222 and counts.sum(axis=0).tolist() == [34_014, 11_208]
    assert np.all(np.diff(where) > 0) and np.all(counts.sum(axis=1) > 0)
