"""End-to-end audit: a caller's accountant stays shared through scikit-learn's model selection.

``sklearn.base.clone`` deep-copies every parameter that is not an estimator. When that copied the
accountant, ``cross_val_score(PrivateNaiveBayes(1.0, accountant=acc), cv=5)`` on a budget of 1 ran
five fits at ε = 1 and left ``acc.spent`` at 0. Each scenario below goes through the public API
(``clone``, ``cross_val_score``, ``cross_validate`` with a ``Pipeline``, ``GridSearchCV``,
``n_jobs=2``) and asserts what the accountant must show: the sum of the fits' spends, one ledger
row per fit, and a refusal (BudgetExceededError) of the fit that would overdraw it, raised before
that fit spent anything.

Power check: the same scenarios, run with an accountant whose deep copy is a fresh accountant
(the behaviour before the fix), must fail their assertions.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import Pipeline

from dpexplore.budget import BudgetAccountant, BudgetExceededError, DetachedAccountantError
from dpexplore.models import PrivateNaiveBayes

CLASSES = [0, 1]


class _CopiedAccountant(BudgetAccountant):
    """Broken variant, the behaviour before the fix: a deep copy is a new accountant with the
    same total and history, so each clone spends on its own; a pickled copy (a joblib worker's)
    spends too, unseen by the original."""

    detached = property(lambda self: False)

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        fresh = type(self)(self.total)
        fresh._rows = list(self._rows)
        fresh._root.cost = self._root.cost
        return fresh


def _data(n: int = 200, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.where(rng.random((n, d)) < 0.8, y[:, None], 1 - y[:, None])
    return X, y


def _nb(epsilon: float, acc: BudgetAccountant) -> PrivateNaiveBayes:
    return PrivateNaiveBayes(epsilon, classes=CLASSES, accountant=acc, random_state=0)


def _refusal(call) -> BaseException | None:
    """The exception ``call`` raised (None when it returned): the scenarios assert on it, so the
    broken variant fails an ``assert`` rather than a ``pytest.raises``."""
    try:
        call()
    except Exception as err:  # noqa: BLE001 - the scenario inspects what was raised
        return err
    return None


# --------------------------------------------------------------------------- scenarios
def clone_scenario(make_accountant) -> None:
    X, y = _data()
    acc = make_accountant(1.0)
    first = clone(_nb(0.6, acc)).fit(X, y)
    assert acc.spent == pytest.approx(0.6) and acc.n_spends == 1, acc
    assert first.accountant_ is acc
    err = _refusal(lambda: clone(_nb(0.6, acc)).fit(X, y))     # 1.2 > 1: refused before spending
    assert isinstance(err, BudgetExceededError), err
    assert acc.spent == pytest.approx(0.6) and acc.n_spends == 1, acc


def cross_val_score_scenario(make_accountant) -> None:
    X, y = _data()
    acc = make_accountant(1.0)
    cross_val_score(_nb(0.2, acc), X, y, cv=5, error_score="raise")
    assert acc.spent == pytest.approx(1.0) and acc.n_spends == 5, acc       # 5 fits × 0.2
    acc = make_accountant(1.0)
    err = _refusal(lambda: cross_val_score(_nb(1.0, acc), X, y, cv=5, error_score="raise"))
    assert isinstance(err, BudgetExceededError), err                        # the 2nd fold's fit
    assert acc.spent == pytest.approx(1.0) and acc.n_spends == 1, acc       # only the 1st spent


def cross_validate_pipeline_scenario(make_accountant) -> None:
    X, y = _data()
    acc = make_accountant(2.0)
    pipe = Pipeline([("nb", _nb(0.5, acc))])
    out = cross_validate(pipe, X, y, cv=4, return_estimator=True, error_score="raise")
    assert acc.spent == pytest.approx(2.0) and acc.n_spends == 4, acc
    assert all(p.named_steps["nb"].accountant_ is acc for p in out["estimator"])
    assert sum(p.named_steps["nb"].epsilon_spent_ for p in out["estimator"]) == pytest.approx(acc.spent)


def grid_search_scenario(make_accountant) -> None:
    X, y = _data()
    acc = make_accountant(5.0)
    grid = GridSearchCV(_nb(0.1, acc), {"epsilon": [0.1, 0.2]}, cv=3, error_score="raise").fit(X, y)
    # 3 folds × (0.1 + 0.2) and the refit of the best candidate: 7 fits, each on the ledger
    assert acc.n_spends == 7, acc
    assert acc.spent == pytest.approx(0.9 + grid.best_estimator_.epsilon, abs=1e-12), acc
    assert grid.best_estimator_.accountant_ is acc
    acc = make_accountant(1.0)
    search = GridSearchCV(_nb(0.4, acc), {"epsilon": [0.4, 0.5]}, cv=3, error_score="raise")
    err = _refusal(lambda: search.fit(X, y))
    assert isinstance(err, BudgetExceededError), err                        # the 3rd fit: 1.2 > 1
    assert acc.spent == pytest.approx(0.8) and acc.n_spends == 2, acc


def parallel_workers_scenario(make_accountant) -> None:
    """joblib workers get pickled copies: they must refuse (nothing spent anywhere), not spend
    on a copy the caller never sees."""
    X, y = _data()
    acc = make_accountant(5.0)
    err = _refusal(lambda: cross_val_score(_nb(1.0, acc), X, y, cv=2, n_jobs=2, error_score="raise"))
    assert isinstance(err, DetachedAccountantError) and "n_jobs=1" in str(err), err
    assert acc.spent == 0 and acc.n_spends == 0, acc


SCENARIOS = [clone_scenario, cross_val_score_scenario, cross_validate_pipeline_scenario,
             grid_search_scenario, parallel_workers_scenario]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_the_callers_accountant_sees_every_fit_and_refuses_the_overdraft(scenario):
    scenario(BudgetAccountant)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_power_an_accountant_copied_by_clone_is_caught(scenario):
    with pytest.raises(AssertionError):
        scenario(_CopiedAccountant)
