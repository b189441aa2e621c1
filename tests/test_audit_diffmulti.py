"""End-to-end privacy audits of DiffMulti and DiffGen through the public API (README, "Audited end to end").

Tiny tables with public classes 0/1/2 (integer labels) and one attribute: for DiffMulti an
integer x with the public domain {0, 1, 2, 3} (its private split point is part of the release),
for DiffGen a categorical c with the taxonomy Any → {ab: a, b; cd: c, d} (DiffGen spends half of
ε on specializing, so a numeric attribute would leave the counts ε/2 and the short audit of the
broken variant too little power). The neighbour adds ONE record at the domain's edge (x = 3,
c = "d") of class 2 (a class no other record holds). The release's output is what an analyst sees about that corner:
whether the released (noisy) count of class 2 in the region holding x = 3 exceeds 1, together
with the published class list. Thresholding concentrates the loss on one event (for the leaf
counts the ratio of the two probabilities is exactly e^{ε_leaf}), so a short audit has power.

Broken variants the audit must flag: every DP sampler at 3·ε (``weakened_noise(3)``), and the old
label handling, which took ``classes_`` from the labels that occur in y (ints when every class
occurs, the string '2' when class 2 is missing): the class list alone then tells D from D′.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from privacy_audit import assert_flagged, assert_private, long_audit, weakened_noise

from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.publish import base as publish_base
from dpexplore.publish.partition import RegionRelease
from dpexplore.registry import all_methods, get_method

EPS = 1.0
Y = pd.Series([0, 0, 1, 1], name="label")
Y_PRIME = pd.Series([0, 0, 1, 1, 2], name="label")                   # + one record of the rare class 2
NUMERIC = Schema([Attribute.numeric("x", 0, 3, integer=True)], "label", ["0", "1", "2"])
ABCD = Taxonomy.from_spec("c", {"type": "categorical", "tree": {"Any": {"ab": ["a", "b"], "cd": ["c", "d"]}}})
CATEGORICAL = Schema([Attribute.categorical("c", taxonomy=ABCD)], "label", ["0", "1", "2"])
# every registered region publisher (DiffMulti, DiffGen and any later one) is audited here
REGISTERED = [spec.name for spec in all_methods("publisher", private=True) if issubclass(spec.load(), RegionRelease)]
# name: (fast parameters, schema, D, D', probe at the edge)
PARAMS = {
    "DiffMulti": ({"h": 1}, NUMERIC, (pd.DataFrame({"x": [0, 1, 1, 2]}), Y),
                  (pd.DataFrame({"x": [0, 1, 1, 2, 3]}), Y_PRIME), pd.DataFrame({"x": [3]})),
    "DiffGen": ({"steps": 1}, CATEGORICAL, (pd.DataFrame({"c": list("abbc")}), Y),
                (pd.DataFrame({"c": list("abbcd")}), Y_PRIME), pd.DataFrame({"c": ["d"]})),
}
# name: (class, parameters, schema, D, D', probe at the edge)
METHODS = {name: (get_method(name).load(), *PARAMS[name]) for name in REGISTERED if name in PARAMS}


def test_every_registered_region_publisher_has_an_audit_case():
    assert sorted(PARAMS) == sorted(REGISTERED)
    assert {get_method(name).audit for name in REGISTERED} == {
        f"tests/test_audit_diffmulti.py::{test_release_is_private_at_its_claimed_epsilon.__name__}"}


def _runner(name: str):
    cls, kw, schema, _, _, probe = METHODS[name]

    def run(data, rng):
        X, y = data
        m = cls(epsilon=EPS, random_state=rng, **kw, schema=schema).fit(X, y)
        leaf = int(m.apply(probe)[0])
        return repr((m.classes_.tolist(), bool(m.noisy_counts_[leaf, 2] > 1.0)))
    return run


def _row(path: str, res) -> None:
    print(f"\nAUDIT | {path:<45} | claimed ε = {EPS} | lower bound {res.epsilon_lower:.3f} "
          f"| point {res.epsilon_hat:.3f}")


def _old_class_values(classes, y):
    """The pre-fix label handling (classes read from the labels that occur in y)."""
    label_map = {str(v): v for v in pd.unique(y)}
    return np.asarray([label_map.get(c, c) for c in classes])


@pytest.mark.parametrize("name", list(METHODS))
def test_release_is_private_at_its_claimed_epsilon(name):
    res = assert_private(_runner(name), *METHODS[name][3:5], EPS, n_samples=600, seed=0)
    _row(f"{name}: count of a rare class at the edge", res)


@pytest.mark.parametrize("name", list(METHODS))
def test_audit_flags_noise_divided_by_three(name):
    with weakened_noise(3):
        res = assert_flagged(_runner(name), *METHODS[name][3:5], EPS, n_samples=800, seed=1)
    _row(f"{name}: weakened_noise(3) (broken)", res)


@pytest.mark.parametrize("name", list(METHODS))
def test_audit_flags_class_labels_read_from_y(name, monkeypatch):
    monkeypatch.setattr(publish_base, "class_values", _old_class_values)   # what fit(X, y) sets classes_ with
    res = assert_flagged(_runner(name), *METHODS[name][3:5], EPS, n_samples=150, seed=2)
    _row(f"{name}: classes_ read from y (old code, broken)", res)


@long_audit
@pytest.mark.parametrize("name", list(METHODS))
def test_long_audit(name):
    res = assert_private(_runner(name), *METHODS[name][3:5], EPS, n_samples=5_000, seed=3)
    _row(f"{name}: long audit", res)
    with weakened_noise(3):
        res = assert_flagged(_runner(name), *METHODS[name][3:5], EPS, n_samples=2_000, seed=4)
    _row(f"{name}: long audit, weakened_noise(3)", res)
