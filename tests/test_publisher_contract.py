"""The publisher contract (dpexplore.publish.base.Publisher), for every publishing method.

Every parameter, the public ``schema`` included, is a constructor argument; ``fit(X, y)`` and
``fit(source)``; one ``synthetic(*, n, random_state, values)``. The former spellings (the schema as
a third ``fit`` argument, positional ``synthetic`` arguments, renamed parameters, old pickles)
keep working for now with a DpexploreDeprecationWarning and give the same release, seed for seed.
"""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpexplore import sources
from dpexplore.budget import BudgetAccountant
from dpexplore.counts import CountTable
from dpexplore.datasets import make_synthetic
from dpexplore.exceptions import DpexploreDeprecationWarning
from dpexplore.publish import DiffMulti, PrivPfC, ProjectedHistogram
from dpexplore.publish.base import Publisher
from dpexplore.publish.partition import TaxonomyNavigator
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
def test_old_fit_form_warns_and_gives_the_same_release(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    new = release(cls(epsilon=1.0, random_state=4, schema=schema, **params).fit(X, y), X)
    for call in ("positional", "keyword"):
        old = cls(epsilon=1.0, random_state=4, **params)
        with pytest.warns(DpexploreDeprecationWarning, match="pass schema to the constructor"):
            old.fit(X, y, schema) if call == "positional" else old.fit(X, y, schema=schema)
        assert old.schema is None                                  # the parameter is not mutated
        assert_same_release(release(old, X), new)


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
def test_two_different_schemas_fail_before_any_spend(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    acc = BudgetAccountant(5.0)
    est = cls(epsilon=1.0, accountant=acc, schema=schema, **params)
    with pytest.raises(ValueError, match="different schema"), pytest.warns(DpexploreDeprecationWarning):
        est.fit(X, y, schema.subset(schema.predictors[:2]))
    assert acc.spent == 0 and acc.ledger.empty
    with pytest.warns(DpexploreDeprecationWarning):            # the same schema twice is fine
        est.fit(X, y, schema)


FORMER_POSITIONAL = {   # each class's former synthetic() order, and the keywords it meant
    "PrivPfC": ((0, "sampled"), {"random_state": 0, "values": "sampled"}),
    "PrivPfCSelNF": ((0,), {"random_state": 0}),
    "DiffMulti": (("generalized", 0, 30), {"values": "generalized", "random_state": 0, "n": 30}),
    "DiffGen": (("sampled", 0), {"values": "sampled", "random_state": 0}),
    "ProjectedHistogram": ((0, 30), {"random_state": 0, "n": 30}),
}


@pytest.mark.parametrize("name", METHODS)
def test_synthetic_takes_keywords_and_positional_calls_warn(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    est = cls(epsilon=1.0, random_state=2, schema=schema, **params).fit(X, y)
    args, kwargs = FORMER_POSITIONAL[name]
    with pytest.warns(DpexploreDeprecationWarning, match="positional"):
        old = est.synthetic(*args)
    pd.testing.assert_frame_equal(old, est.synthetic(**kwargs))
    for values in est.synthetic_values:
        frame = est.synthetic(random_state=1, n=25, values=values)
        assert list(frame.columns) == schema.predictors + [schema.target] and len(frame) == 25
    pd.testing.assert_frame_equal(est.synthetic(random_state=1), est.synthetic(random_state=1,
                                                                             values=est.synthetic_values[0]))
    with pytest.raises(ValueError, match="values must be"):
        est.synthetic(values="raw")
    with pytest.raises(TypeError, match="unexpected keyword"):
        est.synthetic(rows=10)
    with pytest.raises(TypeError, match="keyword arguments only"):
        est.synthetic(0, "sampled", False, None, 10, 11)


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


def test_privpfc_former_synthetic_keywords(table):
    X, y, schema = table
    est = PrivPfC(epsilon=1.0, theta=40, random_state=0, schema=schema).fit(X, y)
    with pytest.warns(DpexploreDeprecationWarning, match="weighted_table"):
        weighted = est.synthetic(weighted=True)
    pd.testing.assert_frame_equal(weighted, est.weighted_table())
    assert weighted["weight"].sum() == np.rint(np.clip(est.counts_, 0, None)).sum()
    with pytest.warns(DpexploreDeprecationWarning, match="max_rows"):
        capped = est.synthetic(random_state=0, n=10**9, max_rows=50)
    assert len(capped) == 50
    with pytest.warns(DpexploreDeprecationWarning), pytest.raises(ValueError, match="generalized"):
        est.synthetic(values="sampled", weighted=True)


RENAMED = {   # old spelling → new spelling of the same parameter
    "PrivPfC": ({"split": (0.1, 0.3, 0.6)}, {"shares": (0.1, 0.3, 0.6)}),
    "PrivPfCSelNF": ({"split": (0.1, 0.3, 0.6)}, {"shares": (0.1, 0.3, 0.6)}),
    "DiffMulti": ({"score": "ncp"}, {"utility": "ncp"}),
    "DiffGen": ({"score": "ncp"}, {"utility": "ncp"}),
}


@pytest.mark.parametrize("name", RENAMED)
def test_every_old_parameter_spelling_warns_and_gives_the_same_release(name, table):
    X, y, schema = table
    cls, params = METHODS[name]
    (old_name, value), = RENAMED[name][0].items()
    (new_name, _), = RENAMED[name][1].items()
    new = cls(epsilon=1.0, random_state=6, schema=schema, **params, **RENAMED[name][1]).fit(X, y)
    with pytest.warns(DpexploreDeprecationWarning, match=f"'{old_name}' was renamed '{new_name}'"):
        old = cls(epsilon=1.0, random_state=6, schema=schema, **params, **RENAMED[name][0])
    assert old_name not in old.get_params() and old.get_params()[new_name] == value
    assert_same_release(release(old.fit(X, y), X), release(new, X))
    with pytest.warns(DpexploreDeprecationWarning):
        via_set_params = cls(epsilon=1.0, random_state=6, schema=schema, **params).set_params(**RENAMED[name][0])
    assert via_set_params.get_params()[new_name] == value
    if old_name != "score":        # est.score is scikit-learn's accuracy method, never the parameter
        with pytest.warns(DpexploreDeprecationWarning):
            assert getattr(new, old_name) == value


def test_run_privpfc_split_keyword(table):
    X, y, schema = table
    scorer = GridScorer.from_table(CountTable.from_codes(schema, schema.leaf_codes(X), schema.encode_target(y)))
    new = run_privpfc(scorer, epsilon=1.0, theta=30, shares=(0.2, 0.3, 0.5), random_state=1)
    with pytest.warns(DpexploreDeprecationWarning, match="'split' was renamed 'shares'"):
        old = run_privpfc(scorer, epsilon=1.0, theta=30, split=(0.2, 0.3, 0.5), random_state=1)
    assert old.epsilons == new.epsilons and old.index == new.index
    np.testing.assert_array_equal(old.noisy_counts, new.noisy_counts)


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


def test_old_pickles_load(table):
    """A pickle made before the redesign: PrivPfC with ``split`` and no ``schema``; DiffMulti
    whose taxonomy navigators were ``dpexplore.publish.diffmulti._CatNav``."""
    X, y, schema = table
    pfc = PrivPfC(epsilon=1.0, theta=40, random_state=0, schema=schema).fit(X, y)
    state = dict(pfc.__dict__)
    state["split"] = state.pop("shares")
    del state["schema"]
    old = PrivPfC.__new__(PrivPfC)
    old.__dict__.update(state)                                  # as the former class pickled itself
    with pytest.warns(DpexploreDeprecationWarning, match="'split' was renamed 'shares'"):
        back = pickle.loads(pickle.dumps(old))
    assert back.shares == pfc.shares and back.schema is None and "split" not in back.__dict__
    np.testing.assert_array_equal(back.predict(X), pfc.predict(X))
    pd.testing.assert_frame_equal(back.synthetic(random_state=0), pfc.synthetic(random_state=0))

    dm = DiffMulti(epsilon=1.0, h=12, random_state=0, schema=schema).fit(X, y)
    assert all(type(nav) is TaxonomyNavigator for nav in dm._nav.values())
    dm_state = dict(dm.__dict__)
    del dm_state["schema"]
    legacy = DiffMulti.__new__(DiffMulti)
    legacy.__dict__.update(dm_state)
    blob = pickle.dumps(legacy, protocol=2)                     # GLOBAL opcodes: "module\nname\n"
    blob = blob.replace(b"cdpexplore.publish.partition\nTaxonomyNavigator\n", b"cdpexplore.publish.diffmulti\n_CatNav\n")
    assert b"_CatNav" in blob
    loaded = pickle.loads(blob)
    assert loaded.schema is None
    np.testing.assert_array_equal(loaded.predict(X), dm.predict(X))
    pd.testing.assert_frame_equal(loaded.partitions_, dm.partitions_)
