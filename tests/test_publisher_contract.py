"""The publisher contract (dpexplore.publish.base.Publisher), for every publishing method.

Every parameter, the public ``schema`` included, is a constructor argument; ``fit(X, y)`` and
``fit(source)``; one ``synthetic(*, n, random_state, values)``; the fit's steps in the base's
order. Every registered publisher gets these tests (``dpexplore.registry``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpexplore import sources
from dpexplore.budget import BudgetAccountant
from dpexplore.counts import CountTable
from dpexplore.datasets import make_synthetic
from dpexplore.publish import PrivPfC, ProjectedHistogram
from dpexplore.publish.base import Publisher
from dpexplore.publish.privpfc import GridScorer, run_privpfc
from dpexplore.registry import all_methods

# every registered publisher, with its small, fast parameters (MethodSpec.test_params)
METHODS = {spec.name: (spec.load(), dict(spec.test_params)) for spec in all_methods("publisher")}
pytestmark = pytest.mark.filterwarnings("ignore:noise-free grid selection")   # PrivPfCSelNF says so


@pytest.fixture(scope="module")
def table():
    frame, schema = make_synthetic(n_samples=400, n_numeric=2, n_categorical=2, random_state=3)
    X, y = schema.split(frame)
    return X, y, schema


def release(est, X):
    """Everything a fitted publisher released, as comparable values, plus its predictions and
    a seeded synthetic table (post-processing of the release)."""
    out = {}
    for name in ("counts_", "noisy_counts_", "n_hat_", "grid_", "selected_", "threshold_"):
        if hasattr(est, name):
            value = getattr(est, name)
            if hasattr(value, "codes") and hasattr(value, "values"):     # ProjectedHistogram's SparseHistogram
                value = (value.codes, value.values)
            out[name] = value
    if hasattr(est, "tree_"):
        out["tree_"] = est.tree_
    out["ledger_"] = est.ledger_[["label", "epsilon"]]
    out["predict"] = est.predict(X)
    out["synthetic"] = est.synthetic(random_state=0)
    return out


def assert_same_release(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], pd.DataFrame):
            pd.testing.assert_frame_equal(a[key], b[key])
        elif isinstance(a[key], tuple):
            for u, v in zip(a[key], b[key]):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(np.asarray(a[key], dtype=object), np.asarray(b[key], dtype=object))


@pytest.mark.parametrize("name", METHODS)
def test_every_publisher_is_a_publisher_with_a_schema_parameter(name):
    cls, _ = METHODS[name]
    assert issubclass(cls, Publisher)
    assert cls().get_params()["schema"] is None
    assert cls.synthetic_values and all(isinstance(v, str) for v in cls.synthetic_values)


@pytest.mark.parametrize("name", METHODS)
def test_fit_runs_the_bases_steps_in_their_order(name, table, monkeypatch):
    """fit is the base's template: schema_ and classes_ are set and nothing is spent when the
    method's release starts; it runs on (1 - marginal_share)·ε; the marginals come after it."""
    X, y, schema = table
    cls, params = METHODS[name]
    assert not [k for k in cls.__mro__ if k is not Publisher and issubclass(k, Publisher) and "fit" in vars(k)]
    seen, own_release = [], cls._release

    def spy(self, data, accountant, rng, epsilon):
        seen.append((self.schema_, list(self.classes_), epsilon, len(self.ledger_)))
        return own_release(self, data, accountant, rng, epsilon)

    monkeypatch.setattr(cls, "_release", spy)
    est = cls(epsilon=1.0, random_state=0, schema=schema, marginal_share=0.2, **params).fit(X, y)
    (seen_schema, seen_classes, epsilon, spent), = seen
    assert seen_schema is est.schema_ and seen_classes == list(est.classes_) == list(schema.classes)
    assert epsilon == pytest.approx(0.8) and spent == 0
    ledger = est.ledger_
    marginal = ledger["label"].str.startswith("marginal: ").to_numpy()
    assert marginal[np.argmax(marginal):].all() or not marginal.any()        # the marginals come last
    assert ledger.loc[~marginal, "charged"].sum() <= 0.8 + 1e-9
    assert est.epsilon_spent_ <= 1.0 + 1e-9


@pytest.mark.parametrize("name", METHODS)
def test_schema_is_a_parameter(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    est = cls(epsilon=1.0, schema=schema, **params)
    assert est.get_params()["schema"] is schema
    twin = clone(est)
    assert twin.get_params()["schema"].to_dict() == schema.to_dict()       # clone copies parameters
    other = schema.subset(schema.predictors[:2])
    assert est.set_params(schema=other).schema is other
    fitted = est.set_params(random_state=0).fit(X[other.predictors], y)
    assert fitted.schema_.predictors == other.predictors


@pytest.mark.parametrize("name", METHODS)
def test_synthetic_takes_keywords_only(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    est = cls(epsilon=1.0, random_state=2, schema=schema, **params).fit(X, y)
    for values in est.synthetic_values:
        frame = est.synthetic(random_state=1, n=25, values=values)
        assert list(frame.columns) == schema.predictors + [schema.target] and len(frame) == 25
    pd.testing.assert_frame_equal(est.synthetic(random_state=1), est.synthetic(random_state=1,
                                                                             values=est.synthetic_values[0]))
    with pytest.raises(ValueError, match="values must be"):
        est.synthetic(values="raw")
    with pytest.raises(TypeError, match="unexpected keyword"):
        est.synthetic(rows=10)
    with pytest.raises(TypeError, match="positional"):
        est.synthetic(0)


def test_projected_generalized_values_are_the_bin_labels(table):
    X, y, schema = table
    est = ProjectedHistogram(epsilon=2.0, k=2, random_state=0, schema=schema).fit(X, y)
    rep = est.synthetic(random_state=5)
    gen = est.synthetic(random_state=5, values="generalized")
    for a in est.selected_:
        labels = est._level_labels(a)
        assert set(gen[a]) <= set(labels)
        if schema[a].kind == "numeric":           # the same cell: the label of the bin of its midpoint
            edges = np.linspace(schema[a].lower, schema[a].upper, est.n_bins_ + 1)
            bins = np.clip(np.searchsorted(edges, rep[a], side="right") - 1, 0, est.n_bins_ - 1)
            np.testing.assert_array_equal(gen[a].to_numpy(), labels[bins])
        else:
            np.testing.assert_array_equal(gen[a].to_numpy(), rep[a].to_numpy())
    pd.testing.assert_series_equal(gen[schema.target], rep[schema.target])




@pytest.mark.parametrize("name", METHODS)
def test_fit_source_equals_fit_records(name):
    # categorical predictors only: DiffMulti and DiffGen see a source's numeric values at
    # taxonomy-leaf resolution (tests/test_fit_source.py covers that), everything else is exact
    frame, schema = make_synthetic(n_samples=300, n_numeric=0, n_categorical=3, random_state=8)
    X, y = schema.split(frame)
    cls, params = METHODS[name]
    records = cls(epsilon=1.0, random_state=9, schema=schema, **params).fit(X, y)
    for own in (None, schema):
        from_source = cls(epsilon=1.0, random_state=9, schema=own, **params).fit(sources.pandas(frame, schema))
        a, b = release(from_source, X), release(records, X)
        # from a source the labels follow its target column's type: the same as y's here
        assert_same_release(a, b)
