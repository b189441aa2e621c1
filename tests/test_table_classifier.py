"""The classifier fitted on a release's completed synthetic table
(:meth:`~dpexplore.publish.histogram_release.HistogramRelease._fit_table_classifier`): which
publishers use it, when, what it learns, and how it checks what it is asked to predict."""
import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, Schema
from dpexplore.publish.complete import PARENT_MIN_EPSILON, PARENT_SELECTION_SHARE
from dpexplore.registry import all_methods, get_method

PUBLISHERS = [spec.name for spec in all_methods("publisher", private=True)]
TABLE_CLASSIFIERS = ["DiffMulti", "DiffGen", "ProjectedHistogram"]


def _build(name, schema, **params):
    spec = get_method(name)
    return spec.build(schema, **{**spec.test_params, **spec.coarsest_params, **params})


def _three_witnesses(n: int, seed: int):
    """Three columns, each equal to the class in 80 % of the rows, independently given it: one
    column predicts 80 % of the classes, the majority of the three 90 %."""
    rng = np.random.default_rng(seed)
    y = pd.Series(rng.integers(0, 2, n), name="y")
    X = pd.DataFrame({c: np.where(rng.random(n) < 0.8, y, 1 - y).astype(str) for c in "abc"})
    schema = Schema([Attribute.categorical(c, ["0", "1"]) for c in "abc"], "y", [0, 1])
    return X, y, schema


def test_the_publishers_with_a_table_classifier_are_named():
    """PrivPfC keeps its own classifier (its grid is chosen for classification); the others may
    use the completed table's: the list above is the registry's, so a new publisher is decided."""
    assert set(TABLE_CLASSIFIERS) < set(PUBLISHERS)
    for name in PUBLISHERS:
        assert get_method(name).load()._table_classifier is (name in TABLE_CLASSIFIERS), name


@pytest.mark.parametrize("name", TABLE_CLASSIFIERS)
def test_with_two_way_marginals_the_completed_table_classifies(name):
    """With the marginals measured given chosen parents (here the class: each column's best), the
    regression on the completed table reads every column, the ones the release models coarsely
    or not at all too: about the 90 % of the three columns' majority vote."""
    X, y, schema = _three_witnesses(6000, seed=1)
    X_te, y_te, _ = _three_witnesses(4000, seed=2)
    model = _build(name, schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
    assert model.classifier_data_ == "synthetic" and model.joint_marginals_        # the path under test
    assert (model.predict(X_te) == y_te).mean() > 0.86
    again = _build(name, schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X_te), model.predict_proba(X_te))   # seeded
    proba = model.predict_proba(X_te)
    assert proba.shape == (len(X_te), 2) and np.allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", PUBLISHERS)
def test_without_two_way_marginals_each_release_keeps_its_own_classifier(name):
    """No marginals, or marginals measured one-way (ε below the parents' choice): the columns'
    relations are not in the completed table, and the release's own classifier stays; PrivPfC's
    always does. Its predictions are those of the release's counts."""
    X, y, schema = _three_witnesses(3000, seed=3)
    one_way = 0.9 * PARENT_MIN_EPSILON / PARENT_SELECTION_SHARE / 0.5    # below it with one paid column
    for params in (dict(epsilon=5.0), dict(epsilon=one_way, marginal_share=0.5),
                   *([dict(epsilon=5.0, marginal_share=0.5)] if name not in TABLE_CLASSIFIERS else [])):
        model = _build(name, schema, random_state=0, **params).fit(X, y)
        assert bool(getattr(model, "joint_marginals_", {})) is (params == dict(epsilon=5.0, marginal_share=0.5))
        assert model.classifier_data_ == "release", params
        assert not hasattr(model, "table_model_")
        np.testing.assert_array_equal(model.predict_proba(X), model._predict_proba(X))


@pytest.mark.parametrize("name", TABLE_CLASSIFIERS)
def test_the_table_classifier_checks_every_predictor(name):
    """The completed table's regression reads every predictor, so a category outside a declared
    list is refused in any column and so is a missing value (naming the column, never the
    value), before anything is predicted; X is not modified."""
    X, y, schema = _three_witnesses(3000, seed=4)
    model = _build(name, schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
    assert model.classifier_data_ == "synthetic"
    for column in "abc":
        for bad_value, rule in (("secret-7", "categor"), (None, "missing")):
            bad = X.head(5).copy()
            bad.loc[2, column] = bad_value
            before = bad.copy()
            with pytest.raises(ValueError, match=rf"(?is)(?=.*{column!r})(?=.*{rule})") as err:
                model.predict(bad)
            assert "secret-7" not in str(err.value)
            pd.testing.assert_frame_equal(bad, before)


def test_the_table_classifier_draws_at_most_its_public_number_of_rows(monkeypatch):
    """The regression's table follows the size rule, capped at TABLE_CLASSIFIER_ROWS (here made
    smaller than the release's 6,000 records), so a fit's time does not grow with the records."""
    from dpexplore.publish import histogram_release
    from dpexplore.publish.base import Publisher

    X, y, schema = _three_witnesses(6000, seed=6)
    asked = []
    draw = Publisher.synthetic

    def spy(self, **kwargs):
        asked.append(kwargs.get("n"))
        return draw(self, **kwargs)

    monkeypatch.setattr(Publisher, "synthetic", spy)
    for cap, expected in ((400, 400), (100_000, None)):
        monkeypatch.setattr(histogram_release, "TABLE_CLASSIFIER_ROWS", cap)
        asked.clear()
        model = _build("DiffGen", schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
        assert model.classifier_data_ == "synthetic" and len(asked) == 1
        if expected is None:                   # uncapped: the size rule's, about the 6,000 records
            assert abs(asked[0] - 6000) < 300
        else:
            assert asked[0] == expected
