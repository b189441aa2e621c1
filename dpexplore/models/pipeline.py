"""One ε for the thesis pipeline: private feature selection, then a private classifier.

Spec specs/feature-selection-nb-lr.md §3.6 (option (a)) and trap 10: both steps see the same
data, so their budgets add up (sequential composition): ε = ε_FS + ε_train, equal split by
default as in the thesis. The classifier's sensitivity then depends on the k selected features,
not on the original D (trap 2) — the whole gain of feature selection.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._validation import RandomState, check_epsilon, check_random_state
from ..budget import RecordsSpends, prepare_accountant

__all__ = ["SelectThenTrain"]


class SelectThenTrain(RecordsSpends, ClassifierMixin, BaseEstimator):
    """Split ``epsilon`` between a private selector and a private classifier, record both spends.

    ``selector`` and ``model`` are unfitted estimators with ``epsilon``, ``accountant`` and
    ``random_state`` parameters (e.g. :class:`~dpexplore.select.thesis.PrivateKSubsetSelector`
    and :class:`~dpexplore.models.naive_bayes.PrivateNaiveBayes`); clones are fitted with
    ε_FS = ``selection_fraction``·ε and ε_train = the rest, on one shared accountant (the
    given one or a fresh ``BudgetAccountant(epsilon)``). ``selector=None`` spends everything
    on training (all features). Fitted: ``selector_``, ``model_``, ``epsilon_selection_``,
    ``epsilon_training_``, ``accountant_``, ``ledger_``.
    """

    def __init__(self, selector: Any = None, model: Any = None, *, epsilon: float = 0.1,
                 selection_fraction: float = 0.5, accountant: Any = None,
                 random_state: RandomState = None):
        self.selector = selector
        self.model = model
        self.epsilon = epsilon
        self.selection_fraction = selection_fraction
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> "SelectThenTrain":
        """Fit selector then model on the selected columns (same data: ε_FS + ε_train)."""
        epsilon = check_epsilon(self.epsilon)
        if self.model is None or not hasattr(self.model, "fit"):
            raise TypeError("model must be an unfitted private classifier (e.g. PrivateNaiveBayes())")
        if self.selector is not None and not hasattr(self.selector, "transform"):
            raise TypeError("selector must be an unfitted private selector (e.g. PrivateKSubsetSelector())")
        f = self.selection_fraction
        if self.selector is not None and not (isinstance(f, numbers.Real) and not isinstance(f, bool)
                                              and 0 < f < 1):
            raise ValueError(f"selection_fraction must be in (0, 1), got {f!r}")
        accountant = prepare_accountant(epsilon, self.accountant)
        rng = check_random_state(self.random_state)
        seeds = rng.integers(0, 2**63 - 1, size=2)
        if self.selector is None:
            eps_sel, eps_train = 0.0, epsilon
        else:
            eps_sel, eps_train = accountant.split([float(f), 1 - float(f)], total=epsilon)
        self._open_ledger(accountant)
        model = clone(self.model).set_params(epsilon=eps_train, accountant=accountant,
                                             random_state=int(seeds[1]))
        # the model's own parameters are checked *before* the selector spends ε_FS (a bad
        # model parameter must not cost budget)
        if hasattr(model, "_check_params"):
            model._check_params()
        if self.selector is not None:
            selector = clone(self.selector).set_params(epsilon=eps_sel, accountant=accountant,
                                                       random_state=int(seeds[0]))
            selector.fit(X, y)
            X = selector.transform(X)
            self.selector_ = selector
            model = _restrict_bounds(model, selector.get_support())
        else:
            self.selector_ = None
        self.model_ = model.fit(X, y)
        self._close_ledger()
        self.classes_ = self.model_.classes_
        self.n_features_in_ = (self.selector_ if self.selector_ is not None else self.model_).n_features_in_
        names = getattr(self.selector_ if self.selector_ is not None else self.model_, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.epsilon_selection_, self.epsilon_training_ = eps_sel, eps_train
        return self

    def _reduce(self, X: Any) -> Any:
        check_is_fitted(self, "model_")
        return X if self.selector_ is None else self.selector_.transform(X)

    def predict(self, X: Any) -> np.ndarray:
        X = self._reduce(X)
        return self.model_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        X = self._reduce(X)
        return self.model_.predict_proba(X)

    def get_support(self, indices: bool = False) -> np.ndarray:
        """The selector's support (all features when there is no selector)."""
        check_is_fitted(self, "model_")
        if self.selector_ is None:
            n = self.model_.n_features_in_
            return np.arange(n) if indices else np.ones(n, dtype=bool)
        return self.selector_.get_support(indices=indices)



def _restrict_bounds(model: Any, support: np.ndarray) -> Any:
    """Per-feature public ``bounds`` of the model, given for all D columns, cut to the selected k.

    Scalars and Schemas are left alone; a (lower, upper) pair of length-D arrays is indexed by
    the selector's support (public post-processing of a DP release).
    """
    bounds = model.get_params().get("bounds") if hasattr(model, "get_params") else None
    if bounds is None or not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        return model
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    if lo.shape == support.shape and hi.shape == support.shape:
        return model.set_params(bounds=(lo[support], hi[support]))
    return model
