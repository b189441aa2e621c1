"""Every method nested in ``acc.parallel``/``acc.branch`` spends exactly what it reports.

A method must compute its own shares from its own spends, never from the accountant's global total:
inside a parallel scope, next to a sibling branch that already spent more, the total does not move,
and a method that read "how much have I spent" off the total would give its last step the whole ε
again. For each method we measure the cost of its branch directly (the budget the branch has left)
and compare it with ``epsilon_spent_`` and with the ε it was given; next to a cheaper sibling, the
accountant's total must then move by exactly that cost.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

from dpexplore import BudgetAccountant, PrivacyLeakWarning
from dpexplore.datasets import make_synthetic
from dpexplore.evaluate import private_roc_curve
from dpexplore.models import PrivateGaussianNB, PrivateLogisticRegression, PrivateNaiveBayes, SelectThenTrain
from dpexplore.publish import DiffGen, DiffMulti, PrivPfC, ProjectedHistogram
from dpexplore.select import PrivateKSubsetSelector
from dpexplore.registry import all_methods, get_method
from dpexplore.select.stoddard import ExponentialTopKSelector, ScorePerturbationSelector, SparseVectorSelector

EPS = 1.0
BUDGET = 10.0


def _binary_table(seed: int = 0, n: int = 300, d: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d))
    y = (X[:, 0] ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def _schema_table(seed: int = 0):
    frame, schema = make_synthetic(n_samples=400, n_numeric=2, n_categorical=2, random_state=seed)
    X, y = schema.split(frame)
    return X, y, schema


def _fit_schema_method(cls, **kw):
    def fit(acc, rng):
        X, y, schema = _schema_table()
        return cls(epsilon=EPS, accountant=acc, random_state=rng, **kw, schema=schema).fit(X, y)
    return fit


def _fit_registered(name: str):
    """The registry's build of ``name`` with the public schema, fitted on the raw table (a
    pipeline reports through its last step)."""
    def fit(acc, rng):
        X, y, schema = _schema_table()
        est = get_method(name).build(schema, epsilon=EPS, accountant=acc, random_state=rng).fit(X, y)
        return est[-1] if isinstance(est, Pipeline) else est
    return fit


def _fit_binary(make):
    def fit(acc, rng):
        X, y = _binary_table()
        return make(acc, rng).fit(X, y)
    return fit


#: one fast fit per registered method that spends ε (test_every_registered_method_is_audited_here)
PARAMS = {
    "PrivPfC": _fit_schema_method(PrivPfC, theta=50),
    "DiffMulti": _fit_schema_method(DiffMulti),
    "DiffGen": _fit_schema_method(DiffGen),
    "ProjectedHistogram": _fit_schema_method(ProjectedHistogram),
    "PrivateNaiveBayes": _fit_binary(lambda acc, rng: PrivateNaiveBayes(
        epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])),
    "PrivateGaussianNB": _fit_binary(lambda acc, rng: PrivateGaussianNB(
        epsilon=EPS, accountant=acc, random_state=rng, bounds=(0, 1), classes=[0, 1])),
    "PrivateLogisticRegression": _fit_binary(lambda acc, rng: PrivateLogisticRegression(
        epsilon=EPS, accountant=acc, random_state=rng, bounds=(0, 1), classes=[0, 1])),
    "PrivateKSubsetSelector": _fit_binary(lambda acc, rng: PrivateKSubsetSelector(
        k=2, epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])),
    "ScorePerturbationSelector": _fit_binary(lambda acc, rng: ScorePerturbationSelector(
        k=2, epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])),
    "ExponentialTopKSelector": _fit_binary(lambda acc, rng: ExponentialTopKSelector(
        k=2, epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])),
    "SelectThenTrain": _fit_binary(lambda acc, rng: SelectThenTrain(
        PrivateKSubsetSelector(k=2, classes=[0, 1]), PrivateNaiveBayes(classes=[0, 1]),
        epsilon=EPS, accountant=acc, random_state=rng)),
    "SparseVectorSelector": _fit_binary(lambda acc, rng: SparseVectorSelector(
        cutoff=2, epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])),
    "k-subset + NB": _fit_registered("k-subset + NB"),
    "PrivateLRClassifier": _fit_registered("PrivateLRClassifier"),
}
REGISTERED = [spec.name for spec in all_methods(private=True) if spec.kind != "transformer"]
METHODS = {name: PARAMS[name] for name in REGISTERED if name in PARAMS}


def test_every_registered_method_is_audited_here():
    assert sorted(PARAMS) == sorted(REGISTERED), "give each registered method a fast fit in PARAMS"


def _fit_roc(acc, rng):
    y = np.r_[np.zeros(200, int), np.ones(200, int)]
    scores = np.clip(np.r_[rng.normal(0.4, 0.15, 200), rng.normal(0.6, 0.15, 200)], 0, 1)
    private_roc_curve(y, scores, epsilon=EPS, accountant=acc, random_state=rng, classes=[0, 1])
    return None


def _run_in_branch(fit, sibling_cost: float):
    """Fit inside parallel → branch next to a sibling that spent ``sibling_cost``; return
    (fitted object, cost of its branch measured from the budget it has left, accountant)."""
    acc = BudgetAccountant(BUDGET)
    rng = np.random.default_rng(5)
    with acc.parallel("two disjoint halves"):
        with acc.branch("sibling"):
            acc.spend(sibling_cost, "sibling's analysis")
        with acc.branch("method"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                fitted = fit(acc, rng)
            branch_cost = BUDGET - acc.remaining
    return fitted, branch_cost, acc


@pytest.mark.parametrize("name", [*METHODS, "private_roc_curve"])
@pytest.mark.parametrize("sibling_cost", [2.0, 0.25])
def test_method_in_a_parallel_branch_spends_exactly_what_it_reports(name, sibling_cost):
    fit = _fit_roc if name == "private_roc_curve" else METHODS[name]
    fitted, branch_cost, acc = _run_in_branch(fit, sibling_cost)
    assert branch_cost <= EPS * (1 + 1e-9), f"{name} spent {branch_cost} in its branch, asked for {EPS}"
    assert branch_cost == pytest.approx(EPS, rel=1e-9)
    if fitted is not None:
        assert fitted.epsilon_spent_ == pytest.approx(branch_cost, rel=1e-9)
    # parallel composition: the total is the larger of the two branches
    assert acc.spent == pytest.approx(max(sibling_cost, branch_cost), rel=1e-9)


@pytest.mark.parametrize("name", list(METHODS))
def test_fit_directly_inside_parallel_is_refused_before_any_spend(name):
    acc = BudgetAccountant(BUDGET)
    with acc.parallel("halves"):
        with pytest.raises(RuntimeError, match="branch"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                METHODS[name](acc, np.random.default_rng(0))
    assert acc.spent == 0 and acc.ledger.empty
