"""The one place sensitivities come from (dpexplore.sensitivity), checked three ways:

* each kind of measurement against a brute force over every neighbour of small tables, under both
  relations (the formulas are the exact worst case, not just a bound);
* bad relations and bounds are refused, naming the rule;
* every sampler call a fit makes carries the sensitivity of the publisher's declared relation
  (a spy on the samplers of :mod:`dpexplore.mechanisms`, wherever the package imported them).
"""
from __future__ import annotations

import itertools
import warnings
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pandas as pd
import pytest

from dpexplore import mechanisms
from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.exceptions import EmptySyntheticWarning, FewRecordsWarning
from dpexplore.publish import ProjectedHistogram
from dpexplore.registry import all_methods, get_method
from dpexplore.sensitivity import (ADD_REMOVE, NEIGHBOURS, SUBSTITUTION, check_neighbours, count_sensitivity,
                                   sum_sensitivity, utility_sensitivity)
from privacy_audit import replaced

RECORDS = list(itertools.product(range(3), range(2)))          # (cell of a 3-cell partition, class)


def _neighbours(table: list, relation: str) -> Iterator[list]:
    """Every neighbour of ``table`` (records drawn from RECORDS) under ``relation``."""
    if relation == ADD_REMOVE:
        for r in RECORDS:
            yield table + [r]
        for i in range(len(table)):
            yield table[:i] + table[i + 1:]
    else:
        for i, r in itertools.product(range(len(table)), RECORDS):
            yield table[:i] + [r] + table[i + 1:]


def _worst_case(f, relation: str) -> float:
    """max ‖f(D) − f(D')‖₁ over every table of up to three records and each of its neighbours."""
    tables = [list(t) for n in range(4) for t in itertools.product(RECORDS, repeat=n)]
    return max(float(np.abs(np.asarray(f(t), float) - np.asarray(f(u), float)).sum())
               for t in tables for u in _neighbours(t, relation))


def _histogram(table):                     # (cell × class) counts: a histogram over a partition
    return np.bincount([c * 2 + y for c, y in table], minlength=6)


def _per_feature_counts(table):            # two features, each one-hot per record: 2 partitions
    return np.concatenate([np.bincount([c for c, _ in table], minlength=3),
                           np.bincount([y for _, y in table], minlength=2)])


@pytest.mark.parametrize("relation", NEIGHBOURS)
def test_each_kind_is_the_exact_worst_case_over_every_neighbour(relation):
    assert _worst_case(len, relation) == count_sensitivity(relation)
    assert _worst_case(_histogram, relation) == sum_sensitivity(relation)
    assert _worst_case(_per_feature_counts, relation) == sum_sensitivity(relation, per_record=2)
    # scores with add/remove sensitivity 1: a difference of two counts (Stoddard et al.'s DC) moves
    # by 2 under substitution; Σ_cell max_class (the marginals' parent score), monotone, by 1
    difference = lambda t: abs(_histogram(t)[1] - _histogram(t)[0])   # noqa: E731
    best = lambda t: _histogram(t).reshape(3, 2).max(axis=1).sum()    # noqa: E731
    assert _worst_case(difference, ADD_REMOVE) == _worst_case(best, ADD_REMOVE) == 1.0
    assert _worst_case(difference, relation) == utility_sensitivity(1.0, relation)
    assert _worst_case(best, relation) == utility_sensitivity(1.0, relation, monotone=True)


def test_a_paper_bound_replaces_twice_the_add_remove_one_under_substitution_only():
    assert utility_sensitivity(2.0, SUBSTITUTION, substitution=2.0) == 2.0
    assert utility_sensitivity(2.0, ADD_REMOVE, substitution=3.0) == 2.0
    assert utility_sensitivity(0.25, SUBSTITUTION) == 0.5
    assert utility_sensitivity(0.25, SUBSTITUTION, monotone=True) == 0.25


@pytest.mark.parametrize("call", [lambda: check_neighbours("bounded"), lambda: sum_sensitivity("replace-one"),
                                  lambda: count_sensitivity(None), lambda: utility_sensitivity(1.0, "add-remove"),
                                  lambda: ProjectedHistogram(neighbours="bounded").fit(pd.DataFrame({"a": [1.0]}),
                                                                                        [0])])
def test_an_unknown_relation_is_refused_naming_the_choices(call):
    with pytest.raises(ValueError, match="neighbours must be one of"):
        call()


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_a_bound_that_is_not_positive_and_finite_is_refused(bad):
    with pytest.raises(ValueError, match="per_record must be a finite number > 0"):
        sum_sensitivity(per_record=bad)
    with pytest.raises(ValueError, match="add_remove must be a finite number > 0"):
        utility_sensitivity(bad)


# ----------------------------------------------------------------------------- every sampler call
SPIED = ("laplace", "geometric", "exponential", "permute_and_flip", "exponential_interval")


@contextmanager
def sampler_calls() -> Iterator[list]:
    """Record (sampler, sensitivity) of every call to the samplers inside the block."""
    calls: list[tuple[str, float]] = []

    def spy(name, sampler):
        def call(*args, **kwargs):
            calls.append((name, float(kwargs.get("sensitivity", 1.0))))
            return sampler(*args, **kwargs)
        return call
    with replaced(mechanisms, {name: spy(name, getattr(mechanisms, name)) for name in SPIED}):
        yield calls


SCHEMA = Schema([Attribute.numeric("age", 0, 80, Taxonomy.equal_width("age", 0, 80, (2, 2)), integer=True),
                 Attribute.categorical("g", list("uvw"))], "y", [0, 1])


def _table(n: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(0, 81, n), "g": rng.choice(list("uvw"), n)})
    return X, pd.Series(((X["age"] > 40) ^ (rng.random(n) < 0.1)).astype(int), name="y")


def _fit(cls, **params):
    X, y = _table()
    with warnings.catch_warnings(), sampler_calls() as calls:
        warnings.simplefilter("ignore", EmptySyntheticWarning)
        model = cls(epsilon=2.0, marginal_share=0.3, random_state=0, schema=SCHEMA, **params).fit(X, y)
    return model, calls


@pytest.mark.parametrize("relation", NEIGHBOURS)
def test_every_measurement_of_a_projected_histogram_follows_its_relation(relation):
    """k = 1 of 2 predictors: PRIVATEKD picks one, the other gets a two-way marginal with a parent
    chosen privately; the projected one and the class get one-way marginals."""
    model, calls = _fit(ProjectedHistogram, k=1, n_bins=4, neighbours=relation)
    assert model.neighbours == relation and model.marginal_parents_
    laplace = [s for name, s in calls if name == "laplace"]
    choices = [(name, s) for name, s in calls if name in ("exponential", "permute_and_flip")]
    # record count (add/remove only), histogram, three marginals
    assert len(laplace) == (5 if relation == ADD_REMOVE else 4)
    assert set(laplace) == {sum_sensitivity(relation)}
    # PRIVATEKD's one pick (the exponential mechanism, Δ(F) = 2 under both, Vinterbo 2012, Thm 1),
    # then the parent choice (permute-and-flip on a monotone score: 1 under both)
    assert choices == [("exponential", 2.0), ("permute_and_flip", 1.0)]


#: the registered private publishers that offer no ``neighbours`` parameter
WITHOUT_RELATION = [spec.name for spec in all_methods("publisher", private=True)
                    if "neighbours" not in spec.load()().get_params()]


@pytest.mark.parametrize("name", WITHOUT_RELATION)
def test_publishers_without_a_relation_measure_for_add_remove(name):
    """No ``neighbours`` parameter: add/remove (dpexplore.sensitivity). Every Laplace measurement
    of these publishers is a count or a histogram over a partition: sensitivity 1."""
    spec = get_method(name)
    assert spec.load().neighbours == ADD_REMOVE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRecordsWarning)
        model, calls = _fit(spec.load(), **spec.test_params)
    laplace = [s for name, s in calls if name == "laplace"]
    assert laplace and set(laplace) == {sum_sensitivity(ADD_REMOVE)}     # = the count's, 1
