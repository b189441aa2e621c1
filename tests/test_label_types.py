"""Labels in their own type on every path: int, bool and text targets, fitted from records
(``fit(X, y)``) and from sources (pandas, DuckDB, Spark: ``fit(source)``), for every publisher
and the models that fit from sources, and through ``tables.release``.

``classes_``, ``predict`` and the synthetic table's target come back in the type of the caller's
labels (from a source: the type of its target column), so ``score`` compares like with like.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import Attribute, Schema, Taxonomy, sources
from dpexplore.models import Binarizer, HistogramClassifier, PrivateNaiveBayes, SelectThenTrain
from dpexplore.publish import PrivPfC
from dpexplore.registry import all_methods
from dpexplore.select.thesis import PrivateKSubsetSelector
from dpexplore.sources import _spark_engine
from _fixtures import to_spark

# each target type: the caller's labels and the schema's declared classes (text, public)
LABELS = {
    "int": (np.array([0, 1], dtype=np.int64), ["0", "1"]),
    "bool": (np.array([False, True]), ["False", "True"]),
    "str": (np.array(["no", "yes"], dtype=object), ["no", "yes"]),
}
KIND = {"int": "i", "bool": "b", "str": "O"}
PUBLISHERS = {spec.name: spec for spec in all_methods("publisher")}   # each built with its defaults
MODELS = {   # fitted on the binarised records on the record path, as their fit(source) reproduces
    "HistogramClassifier": lambda: HistogramClassifier(),
    "PrivateNaiveBayes": lambda: PrivateNaiveBayes(epsilon=2.0, random_state=1),
    "SelectThenTrain": lambda: SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=2.0,
                                               random_state=1),
}
PATHS = ["records", "pandas", "duckdb", "spark"]


def make_table(target: str, n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 101, n)
    color = rng.choice(["red", "blue", "green"], n)
    signal = (age > 50) ^ (color == "red") ^ (rng.random(n) < 0.15)
    values, classes = LABELS[target]
    frame = pd.DataFrame({"age": age.astype(np.int64), "color": color.astype(object),
                          "label": values[signal.astype(int)]})
    schema = Schema([
        Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 4)), integer=True),
        Attribute.categorical("color", ["red", "blue", "green"],
                              Taxonomy.flat("color", ["red", "blue", "green"])),
        Attribute.numeric("spare", 0, 10, Taxonomy.equal_width("spare", 0, 10, (2,)), integer=True),
    ], "label", classes)
    frame.insert(2, "spare", rng.integers(0, 11, n).astype(np.int64))
    return frame, schema


@pytest.fixture(scope="module")
def spark_session(request):
    if _spark_engine.find_java() is None:
        pytest.skip("Spark needs Java and none was found (JAVA_HOME or java on PATH)")
    return request.getfixturevalue("spark")


def source_of(path: str, frame: pd.DataFrame, schema: Schema, request) -> sources.Source:
    if path == "pandas":
        return sources.pandas(frame, schema)
    if path == "duckdb":
        return sources.duckdb(frame, schema)
    return sources.spark(to_spark(request.getfixturevalue("spark_session"), frame), schema)


def assert_labels(values, target: str, where: str) -> None:
    arr = np.asarray(values)
    expected = LABELS[target][0]
    assert arr.dtype.kind == KIND[target], f"{where}: dtype {arr.dtype}, expected the caller's {expected.dtype}"
    assert set(arr.tolist()) <= set(expected.tolist()), where


@pytest.mark.filterwarnings("ignore:noise-free grid selection")   # PrivPfCSelNF: a diagnostic
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("target", list(LABELS))
@pytest.mark.parametrize("method", list(PUBLISHERS))
def test_publisher_labels_keep_their_type(method, target, path, request):
    frame, schema = make_table(target)
    X, y = frame[schema.predictors], frame[schema.target]
    est = PUBLISHERS[method].build(epsilon=2.0, random_state=1)
    if path == "records":
        est.set_params(schema=schema).fit(X, y)
    else:
        est.fit(source_of(path, frame, schema, request))
    expected = LABELS[target][0]
    assert est.classes_.dtype.kind == KIND[target]
    assert est.classes_.tolist() == expected.tolist()
    assert_labels(est.predict(X), target, "predict")
    assert 0.0 <= est.score(X, y) <= 1.0            # no "Mix of label input types"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # a small table may warn about its size
        synthetic = est.synthetic(random_state=2)
    assert_labels(synthetic[schema.target], target, "synthetic target")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("target", list(LABELS))
@pytest.mark.parametrize("method", list(MODELS))
def test_model_labels_keep_their_type(method, target, path, request):
    frame, schema = make_table(target)
    X, y = frame[schema.predictors], frame[schema.target]
    est = MODELS[method]()
    if method == "HistogramClassifier":
        est.set_params(schema=schema)
        features = X
        if path == "records":
            est.fit(X, y)
    else:
        features = Binarizer(schema).fit().transform(X)
        if path == "records":
            est.set_params(classes=list(schema.classes)).fit(features, y)
    if path != "records":
        est.fit(source_of(path, frame, schema, request))
    expected = LABELS[target][0]
    assert est.classes_.dtype.kind == KIND[target]
    assert est.classes_.tolist() == expected.tolist()
    assert_labels(est.predict(features), target, "predict")
    assert 0.0 <= est.score(features, y) <= 1.0


@pytest.mark.parametrize("path", ["pandas", "duckdb"])
def test_source_label_type_is_the_column_type_not_the_values(path, request):
    """Declared classes the column does not hold (and integers that happen to look like text)
    do not change the type: only the engine's column type decides it."""
    frame, schema = make_table("int")
    src = source_of(path, frame, schema.with_target("label", ["0", "1", "2"]), request)
    assert src.target_like.dtype == np.int64
    assert src.with_schema(src.schema.subset(["age"])).target_like.dtype == np.int64
    text = source_of(path, frame.assign(label=frame["label"].astype(str)), schema, request)
    assert text.target_like.dtype == object


def test_nullable_and_categorical_pandas_targets_map_to_their_numpy_type():
    frame, schema = make_table("int")
    assert sources.pandas(frame.astype({"label": "Int64"}), schema).target_like.dtype == np.int64
    assert sources.pandas(frame.astype({"label": "category"}), schema).target_like.dtype == np.int64
    frame, schema = make_table("bool")
    assert sources.pandas(frame.astype({"label": "boolean"}), schema).target_like.dtype == bool


def test_classes_that_are_not_whole_numbers_stay_text_on_a_numeric_column():
    """A class list that does not round-trip through the column's type keeps the schema's
    strings (no silent change of a label)."""
    frame, schema = make_table("int")
    odd = schema.with_target("label", ["0", "1", "01"])
    model = PrivPfC(epsilon=2.0, random_state=1).fit(sources.pandas(frame, odd))
    assert model.classes_.tolist() == ["0", "1", "01"]


@pytest.mark.parametrize("target", list(LABELS))
@pytest.mark.parametrize("method", [spec.name for spec in all_methods(tag="tables")])
def test_tables_release_estimator_keeps_the_callers_labels(method, target):
    from dpexplore import tables

    frame, schema = make_table(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tables.release(frame, schema, method, 2.0, random_state=3, progress=False, evaluate=False)
    X, y = frame[schema.predictors], frame[schema.target]
    model = result.estimator
    assert_labels(model.classes_, target, "classes_")
    assert_labels(model.predict(X), target, "predict")
    assert 0.0 <= model.score(X, y) <= 1.0
    if result.released == "synthetic table":
        assert_labels(result.synthetic[schema.target], target, "synthetic target")


def test_tables_release_is_the_same_release_for_int_and_text_targets():
    """The caller's type changes the labels' type only: the same seed gives the same release."""
    from dpexplore import tables

    frame, schema = make_table("int")
    text = frame.assign(label=frame["label"].astype(str).astype(object))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = tables.release(frame, schema, "PrivPfC", 1.0, random_state=5, progress=False, evaluate=False)
        b = tables.release(text, schema, "PrivPfC", 1.0, random_state=5, progress=False, evaluate=False)
    pd.testing.assert_frame_equal(a.synthetic.drop(columns="label"), b.synthetic.drop(columns="label"))
    assert a.synthetic["label"].astype(str).tolist() == b.synthetic["label"].tolist()
    assert a.synthetic["label"].dtype == np.int64
    np.testing.assert_array_equal(a.estimator.counts_, b.estimator.counts_)
