"""End-to-end privacy audit of a release under substitution neighbours (README, "What ε protects").

``ProjectedHistogram(neighbours="substitution")`` states its ε for tables of the same size that
differ in one record (Vinterbo 2012, §2.1). Every measurement it pays for must then be calibrated
to that relation (:mod:`dpexplore.sensitivity`): a replaced record leaves one cell of every
histogram or marginal and enters another, so each of them has L1 sensitivity 2, not 1.

The audit runs the PUBLIC API many times on D and on D' = D with its first record (age 1, "no")
replaced by one at the other end of the domain (age 10, "yes"). ``marginal_share=0.99`` puts
nearly all of ε on the paid marginals (age's one-way marginal and the class marginal, 0.495·ε
each). The substitution moves four marginal counts by one each, in the directions u below; the
output is the privacy-loss statistic of Laplace noise on them, Σ clip(u_i, 0, 1) (0 at D's
counts, 4 at D''s), doubled and floored: 9 coarse events. With noise for sensitivity 1 (the
broken variant, and the code before the relation was read) the four counts cost 2·0.99·ε and
the audit flags it; with the relation's sensitivity 2 the lower bound stays at or below ε.

ε = 2 in the short audit: at ε = 1 the same gap needs about 6,000 runs per side (the long audit);
at ε = 2, 1,500. ``A = 5`` puts the histogram's threshold far above its noise, so
the histogram keeps no cell and no logistic regression is fitted (a fast fit; the histogram
plays no part in the output).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from dpexplore import mechanisms, sensitivity
from dpexplore.domain import Attribute, Schema, Taxonomy
from dpexplore.exceptions import EmptySyntheticWarning
from dpexplore.publish import ProjectedHistogram
from privacy_audit import assert_flagged, assert_private, long_audit, replaced

SCHEMA = Schema([Attribute.numeric("age", 0, 10, Taxonomy.equal_width("age", 0, 10, (2,)))], "y", ["no", "yes"])
D = (pd.DataFrame({"age": [1, 2, 3, 4, 1, 2]}), pd.Series(["no", "yes"] * 3, name="y"))
# the first record (age 1, "no") replaced by (age 10, "yes"): age leaves (6, 0) → (5, 1), classes (3, 3) → (2, 4)
D_SUB = (D[0].assign(age=[10, 2, 3, 4, 1, 2]), D[1].where(D[1].index != 0, "yes"))
# D's true counts of age's two-way table with the class (its parent: the only candidate; age leaves ×
# classes) and of the class marginal; the substitution moves the first down and the second up:
# (3, 3 / 0, 0) → (2, 3 / 0, 1), classes (3, 3) → (2, 4)
AGE, CLASS = np.array([[3.0, 3.0], [0.0, 0.0]]), np.array([3.0, 3.0])
SHORT_EPS, SHORT_N = 2.0, 1500
LONG_EPS, LONG_N = 1.0, 6000


def _run(epsilon: float):
    def run(data, rng):
        X, y = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySyntheticWarning)     # the threshold keeps no cell: by design
            model = ProjectedHistogram(k=1, n_bins=2, A=5.0, epsilon=epsilon, neighbours="substitution",
                                       marginal_share=0.99, random_state=rng, schema=SCHEMA).fit(X, y)
        assert model.marginal_parents_["age"] == "y"
        age, label = model.joint_marginals_["age"], model.marginals_["y"]
        u = np.array([AGE[0, 0] - age[0, 0], age[1, 1] - AGE[1, 1], CLASS[0] - label[0], label[1] - CLASS[1]])
        return int(np.floor(2 * np.clip(u, 0.0, 1.0).sum()))
    return run


def relation_ignored():
    """The broken variant: every sensitivity is computed for add/remove, whatever the relation
    (the code before the relation was read), wherever the package imported the functions."""
    sums, utilities = sensitivity.sum_sensitivity, sensitivity.utility_sensitivity
    return replaced(sensitivity, {
        "sum_sensitivity": lambda neighbours="add/remove", per_record=1.0: sums("add/remove", per_record),
        "utility_sensitivity": lambda add_remove, neighbours="add/remove", **bounds: utilities(add_remove)})


def test_substituted_record_in_the_marginals_is_private():
    with threadpool_limits(1):
        res = assert_private(_run(SHORT_EPS), D, D_SUB, SHORT_EPS, n_samples=SHORT_N, seed=0)
    print(f"\n| substitution, marginals | claimed ε {SHORT_EPS} | lower bound {res.epsilon_lower:.3f} |")


def test_sensitivities_for_add_remove_are_flagged_under_substitution():
    with threadpool_limits(1), relation_ignored():
        res = assert_flagged(_run(SHORT_EPS), D, D_SUB, SHORT_EPS, n_samples=SHORT_N, seed=1)
    print(f"\n| substitution, marginals with add/remove sensitivities | claimed ε {SHORT_EPS} "
          f"| lower bound {res.epsilon_lower:.3f} |")


@long_audit
@pytest.mark.parametrize("hardened", [False, True], ids=["textbook", "hardened"])
def test_substituted_record_in_the_marginals_is_private_long(hardened):
    with threadpool_limits(1), mechanisms.hardened_noise(hardened):
        res = assert_private(_run(LONG_EPS), D, D_SUB, LONG_EPS, n_samples=LONG_N, seed=0)
    print(f"\n| substitution, marginals ({'hardened' if hardened else 'textbook'}) | claimed ε {LONG_EPS} "
          f"| lower bound {res.epsilon_lower:.3f} |")


@long_audit
def test_sensitivities_for_add_remove_are_flagged_under_substitution_long():
    with threadpool_limits(1), relation_ignored():
        res = assert_flagged(_run(LONG_EPS), D, D_SUB, LONG_EPS, n_samples=LONG_N, seed=1)
    print(f"\n| substitution, marginals with add/remove sensitivities | claimed ε {LONG_EPS} "
          f"| lower bound {res.epsilon_lower:.3f} |")

