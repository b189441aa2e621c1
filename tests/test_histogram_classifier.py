"""HistogramClassifier: argmax count per cell of a grid, global-majority fallback, generalised input."""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy
from dpexplore.limits import DEFAULT_GRID_CELLS
from dpexplore.models.histogram import HistogramClassifier, check_grid, generalize


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    n = 3000
    schema = Schema([
        Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 2)), integer=True),
        Attribute.categorical("colour", taxonomy=Taxonomy.from_spec("colour", {"type": "categorical", "tree": {
            "Any": {"warm": ["red", "orange"], "cold": ["blue", "green", "cyan"]}}})),
        Attribute.categorical("sex", ["F", "M"]),
    ], "y", ["no", "yes", "maybe"])
    X = pd.DataFrame({"age": rng.integers(0, 60, n),  # ages above 60 never occur: empty cells
                      "colour": rng.choice(["red", "orange", "blue", "green", "cyan"], n),
                      "sex": rng.choice(["F", "M"], n)})
    p_yes = np.where(X["age"] > 25, 0.7, 0.2) * np.where(X["colour"].isin(["red", "orange"]), 1.0, 0.6)
    u = rng.random(n)
    y = pd.Series(np.where(u < p_yes, "yes", np.where(u < p_yes + 0.15, "maybe", "no")), name="y")
    return schema, X, y


def cell_majority(schema, X, y, grid):
    """Independent reference: majority label per generalised cell with pandas, global fallback."""
    G = pd.DataFrame({a: schema[a].taxonomy.generalize(X[a], d) for a, d in grid.items()})
    key = G.astype(str).agg("|".join, axis=1)
    table = pd.crosstab(key, y).reindex(columns=list(schema.classes), fill_value=0)
    return table.idxmax(axis=1), y.value_counts().idxmax(), key


def test_fit_predicts_the_cell_majority(table):
    schema, X, y = table
    grid = {"age": 2, "colour": 1, "sex": 0}
    clf = HistogramClassifier(schema=schema, grid=grid).fit(X, y)
    majority, _, key = cell_majority(schema, X, y, grid)
    assert np.array_equal(clf.predict(X), majority.loc[key].to_numpy())
    assert clf.counts_.shape == (4 * 2 * 1, 3)
    assert clf.counts_.sum() == len(X)


def test_empty_and_negative_cells_fall_back_to_the_global_noisy_majority(table):
    schema, X, y = table
    grid = {"age": 2, "colour": 0, "sex": 0}  # 4 age intervals: (75, 100] is empty
    counts = np.array([[10.0, 2, 1], [-1.0, -3, -0.5], [0.0, 0, 0], [1.0, 50, 3]])
    clf = HistogramClassifier.from_counts(counts, grid, schema)
    # column sums 10, 49, 3.5 -> global noisy majority "yes"
    test = pd.DataFrame({"age": [5, 30, 60, 90], "colour": ["red"] * 4, "sex": ["F"] * 4})
    assert list(clf.predict(test)) == ["no", "yes", "yes", "yes"]
    proba = clf.predict_proba(test)
    assert np.allclose(proba.sum(axis=1), 1)
    assert np.allclose(proba[1], clf.prior_) and np.allclose(proba[0], [10 / 13, 2 / 13, 1 / 13])
    assert list(clf.classes_[proba.argmax(axis=1)]) == list(clf.predict(test))


def test_generalised_records_land_in_the_same_cells(table):
    schema, X, y = table
    grid = {"age": 1, "colour": 2, "sex": 1}
    clf = HistogramClassifier(schema=schema, grid=grid).fit(X, y)
    G = generalize(X, grid, schema)
    assert set(G["age"]) <= set(schema["age"].taxonomy.labels(1))
    assert np.array_equal(clf.cells(G), clf.cells(X))
    assert np.array_equal(clf.predict(G), clf.predict(X))
    # unselected attributes may hold anything (the root label of synthetic rows)
    G2 = generalize(X, {"age": 1}, schema)
    assert set(G2["colour"]) == {"Any"}
    clf2 = HistogramClassifier(schema=schema, grid={"age": 1}).fit(X, y)
    assert np.array_equal(clf2.predict(G2), clf2.predict(X))


def test_score_beats_majority_and_matches_accuracy(table):
    schema, X, y = table
    clf = HistogramClassifier(schema=schema, grid={"age": 2, "colour": 1, "sex": 1}).fit(X, y)
    acc = clf.score(X, y)
    assert acc == pytest.approx(np.mean(clf.predict(X) == y.to_numpy()))
    assert acc > y.value_counts(normalize=True).max() + 0.05


def test_bad_input_gives_clear_errors(table):
    schema, X, y = table
    with pytest.raises(ValueError, match="unknown column"):
        HistogramClassifier(schema=schema, grid={"height": 1}).fit(X, y)
    with pytest.raises(ValueError, match="depth of 'age'"):
        HistogramClassifier(schema=schema, grid={"age": 7}).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="from_frame"):   # no schema: read from the data, said so
        inferred = HistogramClassifier().fit(X, y)
    assert inferred.n_features_in_ == X.shape[1] and list(inferred.feature_names_in_) == list(X.columns)
    assert inferred.n_cells_ <= DEFAULT_GRID_CELLS
    with pytest.raises(ValueError, match="counts must have shape"):
        HistogramClassifier.from_counts(np.zeros((3, 3)), {"age": 2}, schema)
    with pytest.raises(ValueError, match="class"):
        HistogramClassifier(schema=schema, grid={"age": 1}).fit(X, pd.Series(["not-a-class"] * len(X)))
    with pytest.raises(AttributeError, match="not fitted"):
        HistogramClassifier(schema=schema, grid={"age": 1}).predict(X)
    clf = HistogramClassifier(schema=schema, grid={"age": 1}).fit(X, y)
    # at predict time a number outside the public bounds is clipped to them (as every release reads
    # test records), an undeclared category is refused naming the column
    upper = schema["age"].upper
    np.testing.assert_array_equal(clf.predict(X.assign(age=X["age"] + 200)), clf.predict(X.assign(age=upper)))
    with pytest.raises(ValueError, match="'colour' has value\\(s\\) outside its declared categories"):
        clf.predict(X.assign(colour="UNSEEN"))
    with pytest.raises(ValueError, match="one depth per predictor"):
        check_grid([1, 2], schema)


def test_inputs_are_not_mutated_and_sklearn_contract(table):
    schema, X, y = table
    X0, y0 = X.copy(), y.copy()
    clf = HistogramClassifier(schema=schema, grid={"age": 1, "sex": 1})
    clf.fit(X, y).predict(X)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    twin = clone(clf)
    assert twin.get_params()["grid"] == {"age": 1, "sex": 1} and not hasattr(twin, "counts_")


def test_class_values_follow_the_type_of_y():
    from dpexplore.domain import class_values
    assert class_values(["0", "1"], pd.Series([1, 0, 1])).tolist() == [0, 1]
    assert class_values(["0.0", "1.5"], np.array([0.0, 1.5])).tolist() == [0.0, 1.5]
    assert class_values(["no", "yes"], pd.Series(["no", "yes"])).dtype == object
    assert class_values(["a", "1"], pd.Series([1, 1])).tolist() == ["a", "1"]   # not convertible: text
    assert class_values(["False", "True"], pd.Series([True, False])).tolist() == [False, True]
    schema = Schema([Attribute.categorical("s", ["F", "M"])], "y", ["0", "1"])
    clf = HistogramClassifier.from_counts([[3.0, 1.0], [0.5, 2.0]], {"s": 1}, schema, classes=[0, 1])
    assert clf.predict(pd.DataFrame({"s": ["F", "M"]})).tolist() == [0, 1]
    with pytest.raises(ValueError, match="one label per schema class"):
        HistogramClassifier.from_counts([[3.0, 1.0], [0.5, 2.0]], {"s": 1}, schema, classes=[0])
