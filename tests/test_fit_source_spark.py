"""fit(source) from Spark (local mode, one session for the module): the same release as pandas/DuckDB.

Each method's cases are separate test functions (helpers append their own). Skipped only when
Java cannot be found (PySpark comes with the [test] extra).
"""
import warnings

import pandas as pd
import pytest

from dpexplore import sources
from dpexplore.sources import _spark_engine
from _fixtures import make_frame, schema, to_spark  # noqa: F401 (pytest fixtures)
from _fixtures import fit_frame as frame  # noqa: F401 (a pytest fixture)

pytestmark = pytest.mark.skipif(_spark_engine.find_java() is None,
                                reason="Spark needs Java and none was found (JAVA_HOME or java on PATH); "
                                       "install openjdk-17-jre-headless")


@pytest.fixture(scope="module")
def spark_source(spark, frame, schema):
    return sources.spark(to_spark(spark, frame), schema)


# ---------------------------------------------------------------------------- PrivPfC (helper P2a)
def test_privpfc_spark_release_identical(spark_source, frame, schema):
    from dpexplore.publish.privpfc import PrivPfC
    from test_fit_source import assert_same_privpfc, privpfc_release
    X, y = frame[schema.predictors], frame[schema.target]
    ref = privpfc_release(PrivPfC(epsilon=3.0, random_state=11, schema=schema).fit(X, y))
    model = PrivPfC(epsilon=3.0, random_state=11).fit(spark_source)
    assert_same_privpfc(privpfc_release(model), ref)
    assert list(model.classes_) == list(schema.classes)


# ---------------------------------------------------------------------------- ProjectedHistogram
@pytest.mark.parametrize("settings", [dict(), dict(k=2, n_bins=7)])
def test_projected_spark_release_identical(spark, frame, schema, settings):
    from dpexplore.publish.projected import ProjectedHistogram
    from test_fit_source import assert_same_projected, edge_frame, projected_release
    data = edge_frame(frame, schema, 7)
    ref = ProjectedHistogram(epsilon=3.0, random_state=4, **settings, schema=schema).fit(data[schema.predictors],
                                                                          data[schema.target])
    model = ProjectedHistogram(epsilon=3.0, random_state=4, **settings).fit(sources.spark(to_spark(spark, data), schema))
    assert_same_projected(projected_release(model), projected_release(ref))
    assert list(model.classes_) == list(schema.classes)


# ---------------------------------------------------------------------------- PrivateNaiveBayes
def test_naive_bayes_spark_release_identical(spark_source, frame, schema):
    import numpy as np

    from dpexplore.models.naive_bayes import Binarizer, PrivateNaiveBayes
    from test_fit_source_models import assert_same_nb, nb_release, record_fit
    ref, b = record_fit(frame, schema, epsilon=2.0, random_state=13)
    model = PrivateNaiveBayes(epsilon=2.0, random_state=13).fit(spark_source)
    assert_same_nb(nb_release(model), nb_release(ref))
    X = b.transform(frame[schema.predictors])
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    chosen = Binarizer(schema, columns=["color", "age"], depths={"age": 1})
    ref, _ = record_fit(frame, schema, binarizer=Binarizer(schema, columns=["color", "age"], depths={"age": 1}),
                        epsilon=0.5, random_state=1)
    assert_same_nb(nb_release(PrivateNaiveBayes(epsilon=0.5, random_state=1).fit(spark_source, binarizer=chosen)),
                   nb_release(ref))


# ---------------------------------------------------------------------------- DiffMulti, DiffGen
@pytest.mark.parametrize("name", ["DiffMulti", "DiffGen"])
def test_region_spark_release_identical(spark_source, frame, schema, name):
    from test_fit_source import REGION_METHODS, assert_same_region, leaf_frame, region_release
    data = leaf_frame(frame, schema)               # the record path at leaf resolution = the source path
    ref = REGION_METHODS[name](random_state=11, schema=schema).fit(data[schema.predictors], data[schema.target])
    model = REGION_METHODS[name](random_state=11).fit(spark_source)
    assert_same_region(region_release(model), region_release(ref))
    assert list(model.classes_) == list(schema.classes) and model.classes_.dtype == object
    assert model.epsilon_spent_ == pytest.approx(2.0)


# ---------------------------------------------------------------------------- selectors, SelectThenTrain
def test_selectors_and_pipeline_spark_release_identical(spark, schema):
    """The count-based selectors (and the select-then-NB pipeline) release the same from Spark as
    from the record path on the Binarizer columns, seed for seed."""
    import numpy as np

    from dpexplore.models import PrivateNaiveBayes, SelectThenTrain
    from dpexplore.models.naive_bayes import Binarizer
    from dpexplore.select import PrivateKSubsetSelector
    from dpexplore.domain import Schema
    from test_fit_source_models import SELECTOR_CASES, selector_record_fit, selector_release

    two = Schema(list(schema.attributes.values()), "label", ["a", "b"])
    rng = np.random.default_rng(11)
    frame = make_frame(n=1500, seed=5)
    frame = frame.assign(label=np.where(rng.random(len(frame)) < np.where(frame["age"] > 60, 0.7, 0.1), "b", "a")
                         .astype(object))
    source = sources.spark(to_spark(spark, frame), two)
    for cls, params in SELECTOR_CASES:
        ref, _ = selector_record_fit(cls, params, frame, two, 21)
        assert selector_release(cls(random_state=21, **params).fit(source)) == selector_release(ref), cls.__name__
    B = Binarizer(two).fit().transform(frame[two.predictors])
    pipe = lambda: SelectThenTrain(PrivateKSubsetSelector(k=3), PrivateNaiveBayes(), classes=list(two.classes),  # noqa: E731
                                   epsilon=1.0, random_state=5)
    ref = pipe().fit(B, frame[two.target])
    model = pipe().fit(source)
    np.testing.assert_array_equal(model.predict_proba(B), ref.predict_proba(B))
