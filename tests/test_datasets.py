"""Shipped datasets: row and class counts, taxonomy shapes (Su et al. 2018 §5.1: DiffGen's Adult
hierarchies), copies, synthetic signal."""
import gzip

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from dpexplore import datasets
from dpexplore.datasets import (load_adult, load_adult_multiclass, load_german, load_iris,
                                make_synthetic, train_test_split)

# Node count per level (root first) of every Adult taxonomy (Su et al. 2018 §5.1 uses DiffGen's hierarchies).
ADULT_LEVEL_SIZES = {
    "age": (1, 2, 4, 8, 16),
    "capital-gain": (1, 5, 20),
    "capital-loss": (1, 2, 5, 10),
    "education-num": (1, 2, 4),
    "fnlwgt": (1, 6, 11),
    "hours-per-week": (1, 5, 10),
    "workclass": (1, 2, 3, 5, 8),
    "education": (1, 3, 7, 17),
    "marital-status": (1, 2, 3, 7),
    "occupation": (1, 3, 14),
    "relationship": (1, 4, 6),
    "race": (1, 2, 5),
    "sex": (1, 2),
    "native-country": (1, 6, 19, 41),
}
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def _assert_generalizes_everywhere(frame, schema):
    """Every value maps to a node at every depth, nodes nest, and numeric nodes contain the value."""
    for name in schema.predictors:
        tax = schema[name].taxonomy
        values = frame[name]
        leaf = tax.leaf_codes(values)
        assert leaf.min() >= 0 and leaf.max() < tax.n_leaves
        for depth in range(tax.height):
            nodes = tax.node_codes(leaf, depth)
            assert nodes.min() >= 0 and nodes.max() < tax.level_sizes[depth]
            labels = tax.generalize(values, depth)
            assert len(labels) == len(values)
            if tax.kind == "numeric":
                iv = tax.intervals(depth)[nodes]
                v = values.to_numpy(dtype=float)
                assert np.all(iv[:, 0] <= v) and np.all(v <= iv[:, 1]), (name, depth)
            if depth:
                assert np.array_equal(tax.parents(depth)[nodes], tax.node_codes(leaf, depth - 1))
        if tax.kind == "categorical":  # the leaf of a category is the category itself
            assert np.array_equal(tax.generalize(values, tax.height - 1).astype(str), values.to_numpy(dtype=str))


# --------------------------------------------------------------------------- Adult
def test_adult_rows_columns_and_class_balance(adult):
    frame, schema = adult
    assert frame.shape == (45_222, 15)
    assert list(frame.columns) == ["age", "workclass", "fnlwgt", "education", "education-num",
                                   "marital-status", "occupation", "relationship", "race", "sex",
                                   "capital-gain", "capital-loss", "hours-per-week", "native-country",
                                   "income"]
    assert schema.target == "income" and schema.classes == ("<=50K", ">50K")
    assert schema.predictors == list(frame.columns[:-1])
    assert frame["income"].value_counts().to_dict() == {"<=50K": 34_014, ">50K": 11_208}
    assert frame["income"].eq(">50K").mean() == pytest.approx(0.2478, abs=5e-5)
    assert sorted(schema.numeric) == sorted(ADULT_NUMERIC)
    for col in ADULT_NUMERIC:
        assert pd.api.types.is_integer_dtype(frame[col]), col
    text = frame.drop(columns=ADULT_NUMERIC).astype(str)
    assert not text.isin(["?"]).any().any()                      # missing values removed
    assert not text.apply(lambda s: s.str.contains(r"^\s|\s$|\.$")).any().any()  # stripped
    assert frame.index.equals(pd.RangeIndex(45_222))
    schema.validate(frame[schema.predictors], frame["income"])


def test_adult_raw_files_give_the_documented_counts():
    # adult.data has 32,561 records and adult.test 16,281 (UCI adult.names), 48,842 in all
    with datasets.data_path("adult.data.gz").open("rb") as raw, gzip.open(raw, "rt") as fh:
        n_train = sum(1 for line in fh if line.strip())
    with datasets.data_path("adult.test.gz").open("rb") as raw, gzip.open(raw, "rt") as fh:
        n_test = sum(1 for line in fh if line.strip() and not line.startswith("|"))
    assert (n_train, n_test) == (32_561, 16_281)


def test_adult_taxonomy_shapes_follow_privpfc_table(adult):
    frame, schema = adult
    for name, sizes in ADULT_LEVEL_SIZES.items():
        tax = schema[name].taxonomy
        assert tax.level_sizes == sizes, name
        assert tax.height == len(sizes)
    # product of heights = number of grids (ours, from the level sizes above)
    assert np.prod([schema[n].taxonomy.height for n in schema.predictors]) == 27_993_600
    # Su et al. 2018 §4, Example 1 (Fig. 1): relationship level 2 (our depth 1) and education-num five-wide bins
    assert sorted(schema["relationship"].taxonomy.labels(1)) == ["In-family", "Not-in-family",
                                                                "Other-relative", "Unmarried"]
    assert np.array_equal(schema["education-num"].taxonomy.edges(2), [0, 5, 10, 15, 20])
    # age leaves: edges 14, 20, 25, ..., 95
    assert np.array_equal(schema["age"].taxonomy.edges(4), [14] + list(range(20, 96, 5)))
    # fnlwgt: five 100K nodes + (500K, 1.5M], which is padded at the leaf level
    fn = schema["fnlwgt"].taxonomy
    assert np.array_equal(fn.edges(1), [0, 1e5, 2e5, 3e5, 4e5, 5e5, 1.5e6])
    assert fn.labels(2)[-1] == fn.labels(1)[-1] == "(500000, 1500000]"
    assert "Post-grad" in schema["education"].categories            # extra unused leaf
    assert set(schema["marital-status"].taxonomy.labels(2)) == {
        "Never-married", "Married-Partner-present", "Married-Partner-absent"}


def test_adult_numeric_bounds_are_the_taxonomy_root(adult):
    _, schema = adult
    expected = {"age": (14, 95), "capital-gain": (-1, 100_000), "capital-loss": (-1, 5_000),
                "education-num": (0, 20), "fnlwgt": (0, 1_500_000), "hours-per-week": (0, 100)}
    for name, (lo, hi) in expected.items():
        att = schema[name]
        assert (att.lower, att.upper) == (lo, hi) == att.taxonomy.bounds, name
        assert att.integer


def test_adult_every_value_generalizes_at_every_depth(adult):
    frame, schema = adult
    _assert_generalizes_everywhere(frame, schema)
    for name in schema.categorical:  # categories are the taxonomy leaves and cover the data
        att = schema[name]
        assert att.categories == att.taxonomy.leaves
        assert set(frame[name]) <= set(att.categories)


def test_adult_multiclass_target_and_predictors(adult):
    frame, schema = load_adult_multiclass()
    assert frame.shape == (45_222, 15)
    assert schema.target == "marital-status" and "marital-status" not in schema.predictors
    assert "income" in schema.predictors and len(schema.predictors) == 14
    assert schema["income"].taxonomy.level_sizes == (1, 2)
    assert set(schema["income"].categories) == {"<=50K", ">50K"}
    assert frame["marital-status"].value_counts().to_dict() == {
        "Married-Partner-present": 21_087, "Never-married": 14_598, "Married-Partner-absent": 9_537}
    assert set(schema.classes) == {"Married-Partner-present", "Never-married", "Married-Partner-absent"}
    # the Adult-Multiclass classes (Su et al. 2018 §5.1, Table 1), row by row against the binary table
    raw = adult[0]["marital-status"]
    mapping = {"Married-civ-spouse": "Married-Partner-present", "Married-AF-spouse": "Married-Partner-present",
               "Divorced": "Married-Partner-absent", "Separated": "Married-Partner-absent",
               "Widowed": "Married-Partner-absent", "Married-spouse-absent": "Married-Partner-absent",
               "Never-married": "Never-married"}
    assert frame["marital-status"].tolist() == raw.map(mapping).tolist()
    assert frame["income"].tolist() == adult[0]["income"].tolist()
    assert np.prod([schema[n].taxonomy.height for n in schema.predictors]) == 13_996_800
    schema.validate(frame[schema.predictors], frame[schema.target])
    _assert_generalizes_everywhere(frame, schema)


# --------------------------------------------------------------------------- German, Iris
def test_german_shape_decoding_and_taxonomies():
    frame, schema = load_german()
    assert frame.shape == (1_000, 21) and len(schema.predictors) == 20
    assert schema.target == "credit" and list(frame.columns[-1:]) == ["credit"]
    assert frame["credit"].value_counts().to_dict() == {"good": 700, "bad": 300}
    assert len(schema.numeric) == 7 and len(schema.categorical) == 13
    text = frame[schema.categorical].astype(str)
    assert not text.apply(lambda s: s.str.fullmatch(r"A\d+")).any().any()  # every code decoded
    # first record of german.data: "A11 6 A34 A43 1169 A65 A75 4 A93 ... 67 ... A192 A201 1"
    first = frame.iloc[0]
    assert (first["checking_status"], first["duration"], first["purpose"], first["credit_amount"]) == (
        "< 0 DM", 6, "radio/television", 1169)
    assert (first["savings"], first["personal_status_sex"], first["age"], first["telephone"],
            first["foreign_worker"], first["credit"]) == (
        "unknown / no savings account", "male: single", 67, "yes", "yes", "good")
    assert (schema["age"].lower, schema["age"].upper) == (16, 80)
    assert (schema["duration"].lower, schema["duration"].upper) == (0, 72)
    assert schema["purpose"].taxonomy.level_sizes == (1, 5, 11)
    for name in schema.numeric:
        assert pd.api.types.is_integer_dtype(frame[name])
        assert schema[name].taxonomy.bounds == (schema[name].lower, schema[name].upper)
    schema.validate(frame[schema.predictors], frame["credit"])
    _assert_generalizes_everywhere(frame, schema)


def test_german_ordinal_counts_fall_in_their_own_leaf():
    frame, schema = load_german()
    tax = schema["installment_rate"].taxonomy
    assert tax.level_sizes == (1, 2, 4)
    assert list(tax.leaf_codes([1, 2, 3, 4])) == [0, 1, 2, 3]


def test_iris_shape_and_bounds():
    frame, schema = load_iris()
    assert frame.shape == (150, 5)
    assert list(frame.columns) == ["sepal_length", "sepal_width", "petal_length", "petal_width", "species"]
    assert frame["species"].value_counts().to_dict() == {"setosa": 50, "versicolor": 50, "virginica": 50}
    for name in schema.numeric:
        assert (schema[name].lower, schema[name].upper) == (0, 8)
        assert schema[name].taxonomy.level_sizes == (1, 2, 4, 8, 16)
    schema.validate(frame[schema.predictors], frame["species"])
    _assert_generalizes_everywhere(frame, schema)


# --------------------------------------------------------------------------- copies, package data
@pytest.mark.parametrize("loader", [load_adult, load_adult_multiclass, load_german, load_iris])
def test_loaders_return_independent_copies(loader):
    frame, schema = loader()
    reference = frame.copy()
    frame.iloc[:, 0] = frame.iloc[:, 0].iloc[::-1].to_numpy()
    del frame[frame.columns[-1]]
    schema.attributes.pop(schema.predictors[0])
    again, schema_again = loader()
    pd.testing.assert_frame_equal(again, reference)
    assert len(schema_again.predictors) == reference.shape[1] - 1


def test_data_files_are_found_through_the_package():
    assert datasets.data_path("adult_taxonomies.json").is_file()
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        datasets.data_path("no-such-file.csv.gz")


# --------------------------------------------------------------------------- synthetic
def test_synthetic_shape_schema_and_seed():
    frame, schema = make_synthetic(n_samples=1_000, n_numeric=3, n_categorical=2, n_classes=3, random_state=7)
    assert frame.shape == (1_000, 6)
    assert schema.predictors == ["num_0", "num_1", "num_2", "cat_0", "cat_1"]
    assert schema.target == "label" and schema.classes == ("0", "1", "2")
    counts = frame["label"].value_counts()
    assert counts.max() - counts.min() <= 1                                  # balanced classes
    schema.validate(frame[schema.predictors], frame["label"])
    _assert_generalizes_everywhere(frame, schema)
    assert schema["num_0"].taxonomy.level_sizes == (1, 2, 4, 8)
    assert schema["cat_0"].taxonomy.level_sizes == (1, 2, 4)
    same, _ = make_synthetic(n_samples=1_000, n_numeric=3, n_categorical=2, n_classes=3, random_state=7)
    other, _ = make_synthetic(n_samples=1_000, n_numeric=3, n_categorical=2, n_classes=3, random_state=8)
    pd.testing.assert_frame_equal(frame, same)
    assert not frame.equals(other)
    rng = np.random.default_rng(3)
    a, _ = make_synthetic(n_samples=50, random_state=rng)
    b, _ = make_synthetic(n_samples=50, random_state=rng)
    assert not a.equals(b)                                                   # the Generator advances


def _tree_accuracy(frame, schema, columns, seed=0):
    X = pd.get_dummies(frame[columns], dtype=float)
    y = frame[schema.target]
    n_train = len(frame) * 3 // 4
    tree = DecisionTreeClassifier(max_depth=4, random_state=seed).fit(X[:n_train], y[:n_train])
    return tree.score(X[n_train:], y[n_train:])


@pytest.mark.parametrize("n_classes", [2, 4])
def test_synthetic_signal_is_where_the_docstring_says(n_classes):
    frame, schema = make_synthetic(n_samples=8_000, n_classes=n_classes, random_state=0)
    majority = frame["label"].value_counts(normalize=True).max()
    signal = _tree_accuracy(frame, schema, ["num_0", "cat_0"])
    noise = _tree_accuracy(frame, schema, ["num_1", "num_2", "num_3", "cat_1", "cat_2", "cat_3"])
    everything = _tree_accuracy(frame, schema, schema.predictors)
    assert signal > majority + 0.25
    assert everything > majority + 0.25
    assert noise < majority + 0.04                                           # noise columns carry nothing
    # each signal column alone is informative
    assert _tree_accuracy(frame, schema, ["num_0"]) > majority + 0.1
    assert _tree_accuracy(frame, schema, ["cat_0"]) > majority + 0.1


def test_synthetic_bad_input():
    with pytest.raises(ValueError, match="n_classes"):
        make_synthetic(n_classes=1)
    with pytest.raises(ValueError, match="n_numeric"):
        make_synthetic(n_numeric=0, n_categorical=0)
    with pytest.raises(TypeError, match="n_samples"):
        make_synthetic(n_samples=10.5)
    with pytest.raises(ValueError, match="n_samples"):
        make_synthetic(n_samples=2, n_classes=3)
    with pytest.raises(TypeError, match="random_state"):
        make_synthetic(random_state="seed")
    frame, schema = make_synthetic(n_samples=100, n_numeric=0, n_categorical=1, random_state=0)
    assert schema.predictors == ["cat_0"]


# --------------------------------------------------------------------------- train_test_split
def test_train_test_split_is_stratified_seeded_and_leaves_input_alone(adult):
    frame, schema = adult
    before = frame.copy()
    X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=0.2, random_state=1)
    pd.testing.assert_frame_equal(frame, before)
    assert len(X_test) == 9_045 and len(X_train) == 45_222 - 9_045
    assert list(X_train.columns) == schema.predictors and y_train.name == "income"
    assert set(X_train.index).isdisjoint(X_test.index)
    assert set(X_train.index) | set(X_test.index) == set(frame.index)
    assert X_train.index.equals(y_train.index) and X_test.index.equals(y_test.index)
    # stratified: the test share of each class is within one row of 20%
    for label, count in frame["income"].value_counts().items():
        assert abs((y_test == label).sum() - 0.2 * count) <= 1
    again = train_test_split(frame, schema, test_size=0.2, random_state=1)
    assert again[1].index.equals(X_test.index)
    other = train_test_split(frame, schema, test_size=0.2, random_state=2)
    assert not other[1].index.equals(X_test.index)
    X_test.iloc[0, 0] = -5                                                   # a copy, not a view
    pd.testing.assert_frame_equal(frame, before)


def test_train_test_split_bad_input(adult):
    frame, schema = adult
    with pytest.raises(ValueError, match="test_size"):
        train_test_split(frame, schema, test_size=1.5)
    with pytest.raises(TypeError, match="test_size"):
        train_test_split(frame, schema, test_size="half")
    with pytest.raises(ValueError, match="income"):
        train_test_split(frame.drop(columns="income"), schema)
    with pytest.raises(TypeError, match="schema"):
        train_test_split(frame, {"target": "income"})
    with pytest.raises(ValueError, match="frame"):
        train_test_split(frame.iloc[:0], schema)


def test_adult_class_balance_in_percent(adult):
    frame, _ = adult
    share = frame["income"].value_counts(normalize=True)
    assert round(100 * share["<=50K"], 2) == 75.22 and round(100 * share[">50K"], 2) == 24.78
    assert len(frame) == 45_222


# --------------------------------------------------------------------------- customer table
@pytest.fixture(scope="module")
def customers():
    return datasets.make_customer_table(7000, random_state=2026)


def test_customer_table_keeps_its_rules_in_every_row(customers):
    frame, _ = customers
    for column, (source, when, value) in datasets.CUSTOMER_RULES.items():
        fixed = frame[column] == value
        assert ((frame[source] == when) == fixed).all(), column
        assert fixed.any() and (~fixed).any() and set(frame.loc[~fixed, column]) == {"No", "Yes"}, column


def test_customer_schema_is_declared_and_validates_the_table(customers):
    frame, schema = customers
    assert frame.shape == (7000, 20) and list(frame.columns) == datasets.CUSTOMER_COLUMNS + ["Churn"]
    assert schema.predictors == datasets.CUSTOMER_COLUMNS and schema.classes == ("No", "Yes")
    schema.validate(frame[schema.predictors], frame["Churn"])
    _assert_generalizes_everywhere(frame, schema)
    # the domains are the constants, not the rows: a tiny table gets the very same schema
    _, tiny = datasets.make_customer_table(3, random_state=1)
    assert tiny.to_dict() == schema.to_dict()
    for name, (lower, upper, integer, cuts) in datasets.CUSTOMER_NUMERIC.items():
        attr = schema[name]
        assert (attr.lower, attr.upper, attr.integer) == (lower, upper, integer)
        assert attr.taxonomy.n_leaves == len(cuts) + 1
    for name, categories in datasets.CUSTOMER_CATEGORIES.items():
        assert schema[name].categories == categories


def test_customer_table_is_seeded():
    a, _ = datasets.make_customer_table(300, random_state=5)
    b, _ = datasets.make_customer_table(300, random_state=5)
    c, _ = datasets.make_customer_table(300, random_state=6)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    rng = np.random.default_rng(3)
    first, _ = datasets.make_customer_table(50, random_state=rng)
    second, _ = datasets.make_customer_table(50, random_state=rng)
    assert not first.equals(second)                                          # the Generator advances


def test_customer_table_has_its_documented_structure(customers):
    frame, schema = customers
    assert frame["Churn"].value_counts(normalize=True)["No"] == pytest.approx(0.73, abs=0.02)
    tenure = frame.groupby("Contract")["tenure"].median()
    assert tenure["Two year"] - tenure["Month-to-month"] > 30                  # contract and tenure
    services = (frame[list(datasets.CUSTOMER_ADDONS) + ["MultipleLines"]] == "Yes").sum(axis=1)
    priced = services + 5 * (frame["InternetService"] == "Fiber optic") + 4 * (frame["InternetService"] == "DSL")
    assert np.corrcoef(priced, frame["MonthlyCharges"])[0, 1] > 0.9            # charges and services
    calls = frame["SupportCalls"]
    assert calls.median() <= 1 and calls.quantile(0.99) >= 10 * max(calls.median(), 1)  # a long tail
    churn = frame.groupby("Contract")["Churn"].apply(lambda s: (s == "Yes").mean())
    assert churn["Month-to-month"] > 3 * churn["Two year"]                    # the target has a signal
    majority = frame["Churn"].value_counts(normalize=True).max()
    assert _tree_accuracy(frame, schema, schema.predictors) > majority + 0.04


def test_customer_rules_are_declared_when_asked():
    import inspect

    if "otherwise" not in inspect.signature(datasets.Attribute.derived).parameters:
        pytest.skip("Attribute.derived(..., otherwise=...) (rules declared in the schema) is not in this tree")
    frame, schema = datasets.make_customer_table(500, random_state=0, rules=True)
    assert schema.columns == datasets.CUSTOMER_COLUMNS
    schema.validate(frame[schema.predictors], frame["Churn"])                 # every row keeps the rules
    for column, (source, _, _) in datasets.CUSTOMER_RULES.items():
        assert schema[column].source == source
    assert datasets.customer_schema().to_dict() != schema.to_dict()
