"""dpexplore.encode: the public encodings (Binarizer, binarize_table, design_matrix) in the core."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, Schema
from dpexplore.encode import Binarizer, binarize_table, design_matrix


@pytest.fixture
def schema() -> Schema:
    return Schema([Attribute.numeric("age", 20, 70), Attribute.categorical("colour", ["x", "y", "z"]),
                   Attribute.categorical("code", ["0", "1"])], "label", ["no", "yes"])


def test_design_matrix_scales_numbers_and_one_hots_categories(schema):
    X = pd.DataFrame({"age": [20, 45, 70, 95, 5], "colour": ["x", "y", "z", "x", "z"], "code": [0, 1, 1, 0, 0]})
    Z = design_matrix(X, schema)
    assert Z.shape == (5, 1 + 3 + 2)
    np.testing.assert_allclose(Z[:, 0], [0.0, 0.5, 1.0, 1.0, 0.0])        # public bounds; clipped outside
    np.testing.assert_array_equal(Z[:, 1:4], np.eye(3)[[0, 1, 2, 0, 2]])    # the schema's category order
    np.testing.assert_array_equal(Z[:, 4:], np.eye(2)[[0, 1, 1, 0, 0]])     # integer codes match "0"/"1" by text
    assert Z.min() >= 0 and Z.max() <= 1


def test_unseen_category_gets_no_indicator_never_the_last_one(schema):
    """'UNSEEN' is not a declared colour: its block is all zeros, not the indicator of 'z' (the
    last category), which numpy's index -1 of an unknown code would give."""
    X = pd.DataFrame({"age": [30, 30], "colour": ["UNSEEN", "z"], "code": ["0", "0"]})
    before = X.copy()
    Z = design_matrix(X, schema)
    np.testing.assert_array_equal(Z[0, 1:4], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(Z[1, 1:4], [0.0, 0.0, 1.0])
    assert not np.array_equal(Z[0], Z[1])
    pd.testing.assert_frame_equal(X, before)                                # the input is not modified


def test_design_matrix_refuses_a_non_schema(schema):
    with pytest.raises(TypeError, match="schema must be a dpexplore Schema"):
        design_matrix(pd.DataFrame({"age": [30]}), {"age": (20, 70)})


def test_lr_classifier_predicts_an_unseen_category_as_no_category(schema):
    from dpexplore.models import PrivateLRClassifier

    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"age": rng.integers(20, 71, n), "colour": rng.choice(["x", "y", "z"], n),
                      "code": rng.choice(["0", "1"], n)})
    y = np.where((X["colour"] == "z") | (X["age"] > 50), "yes", "no")
    model = PrivateLRClassifier(schema, 5.0, random_state=0).fit(X, y)
    unseen = pd.DataFrame({"age": [40], "colour": ["UNSEEN"], "code": ["1"]})
    as_z = unseen.assign(colour="z")
    zero_block = design_matrix(unseen, schema)
    expected = model.models_[0].predict_proba(zero_block)[:, 1]
    np.testing.assert_allclose(model.predict_proba(unseen)[:, 1], expected)
    assert model.predict_proba(unseen)[0, 1] != model.predict_proba(as_z)[0, 1]


def test_moved_objects_are_the_same_everywhere():
    import dpexplore.evaluate.showdown as showdown
    import dpexplore.models as models
    import dpexplore.models.logistic as logistic
    import dpexplore.models.naive_bayes as naive_bayes

    assert naive_bayes.Binarizer is Binarizer and models.Binarizer is Binarizer
    assert naive_bayes.binarize_table is binarize_table
    assert models.PrivateLRClassifier is logistic.PrivateLRClassifier is showdown.PrivateLRClassifier


def test_binarizer_interval_names_print_whole_numbers_in_full():
    """Interval names use the package's one number format: 1500000, never 1.5e+06."""
    schema = Schema([Attribute.numeric("weight", 0, 2_000_000), Attribute.numeric("share", 0, 1)],
                    "label", ["no", "yes"])
    names = list(Binarizer(schema, n_bins=4).fit().get_feature_names_out())
    assert names[:4] == ["weight=[0, 500000)", "weight=[500000, 1000000)", "weight=[1000000, 1500000)",
                         "weight=[1500000, 2000000]"]
    assert names[4:] == ["share=[0, 0.25)", "share=[0.25, 0.5)", "share=[0.5, 0.75)", "share=[0.75, 1]"]
    with pytest.raises(ValueError, match="n_bins must be an integer ≥ 1"):
        Binarizer(schema, n_bins=0).fit()


def test_binarize_table_rows_are_the_binarizer_on_each_cell():
    from dpexplore.counts import CountTable

    schema = Schema([Attribute.categorical("colour", ["x", "y", "z"]), Attribute.categorical("code", ["0", "1"])],
                    "label", ["no", "yes"])
    X = pd.DataFrame({"colour": ["x", "z", "z", "y", "x"], "code": ["0", "1", "1", "0", "1"]})
    y = pd.Series(["no", "yes", "yes", "no", "no"])
    table = CountTable.from_frame(X[schema.predictors], y, schema)
    matrix, codes, weights = binarize_table(table)
    cells = table.as_weighted_frame()[schema.predictors]
    np.testing.assert_array_equal(matrix, Binarizer(schema).fit().transform(cells).to_numpy())
    assert int(weights.sum()) == len(X)


def test_encode_is_core_it_imports_no_model_selector_or_publisher():
    code = ("import sys, dpexplore.encode; "
            "print(sorted(m for m in sys.modules if m.startswith(('dpexplore.models', 'dpexplore.select', "
            "'dpexplore.publish', 'dpexplore.evaluate'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
