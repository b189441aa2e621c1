"""dpexplore.evaluate.projected: the CV/AUC protocol of notebook 06 and its chart tables, in the library."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, Schema
from dpexplore.encode import design_matrix
from dpexplore.evaluate import projected as evaluation
from dpexplore.models import PrivateLRClassifier
from dpexplore.publish.projected import ProjectedHistogram


@pytest.fixture(scope="module")
def letters():
    """A numeric and a categorical predictor whose last category is 'z', and a binary target."""
    schema = Schema([Attribute.numeric("x", 0, 10), Attribute.categorical("c", ["a", "b", "z"])], "y", ["no", "yes"])
    rng = np.random.default_rng(0)
    n = 600
    c = rng.choice(["a", "b", "z"], n)
    x = rng.uniform(0, 10, n)
    y = np.where((c == "z") | (x > 7), "yes", "no")
    return pd.DataFrame({"x": x, "c": c}), pd.Series(y, name="y"), schema


def test_an_unseen_category_is_not_encoded_as_the_last_one_on_the_explorer_path(letters):
    """The notebook's references (non-private LR and DP-LR, which replaced the widget's own
    one-vs-rest LR) encode 'UNSEEN' with no indicator; the widget's copy gave it 'z''s."""
    X, y, schema = letters
    unseen, last = pd.DataFrame({"x": [5.0], "c": ["UNSEEN"]}), pd.DataFrame({"x": [5.0], "c": ["z"]})
    assert design_matrix(unseen, schema).tolist() == [[0.5, 0.0, 0.0, 0.0]]
    zero = np.array([[0.5, 0.0, 0.0, 0.0]])
    lr = evaluation.NonPrivateLR(schema).fit(X, y)
    dp = PrivateLRClassifier(schema, epsilon=5.0, random_state=0).fit(X, y)
    for model, on_zero in ((lr, lr.model_.predict_proba(zero)[0, 1]), (dp, dp.models_[0].predict_proba(zero)[0, 1])):
        p_unseen, p_last = model.predict_proba(unseen)[0, 1], model.predict_proba(last)[0, 1]
        assert p_unseen == pytest.approx(on_zero, rel=1e-12)     # the all-zero block
        assert abs(p_unseen - p_last) > 0.05                    # not 'z''s indicator


def test_cross_validated_auc_gives_a_schema_to_estimators_that_have_none(letters):
    X, y, schema = letters
    frame = X.assign(y=y)
    methods = {"implicit": lambda s: ProjectedHistogram(1.0, random_state=s),
               "explicit": lambda s: ProjectedHistogram(1.0, random_state=s, schema=schema),
               "DP-LR": lambda s: PrivateLRClassifier(epsilon=1.0, random_state=s)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no schema read from the data, no old fit(X, y, schema)
        res = evaluation.cross_validated_auc(frame, schema, methods, folds=3, seed=1)
    by = res.pivot(index="fold", columns="method", values="auc")
    assert by["implicit"].tolist() == by["explicit"].tolist()
    assert set(res.columns) >= {"method", "fold", "auc", "k", "gamma", "n_bins", "fallback", "selected"}
    assert (by["DP-LR"] > 0.5).all()


def test_auc_sweep_runs_the_library_dp_lr_at_each_epsilon(letters):
    X, y, schema = letters
    frame = X.assign(y=y)
    res = evaluation.auc_sweep(frame, schema, "letters", "epsilon", [0.5, 2.0], folds=3, dp_lr=True)
    assert set(res["method"]) == {"projected histogram", "DP-LR"}
    dp = res[(res.method == "DP-LR") & (res.value == 2.0)].sort_values("fold")["auc"].tolist()
    manual = evaluation.cross_validated_auc(
        frame, schema, {"DP-LR": lambda s: PrivateLRClassifier(schema, epsilon=2.0, random_state=s)}, folds=3)
    assert dp == manual.sort_values("fold")["auc"].tolist()
    with pytest.raises(ValueError, match="parameter must be"):
        evaluation.auc_sweep(frame, schema, "letters", "theta", [1])
