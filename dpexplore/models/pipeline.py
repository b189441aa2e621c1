"""One ε for the thesis pipeline: private feature selection, then a private classifier.

Thesis §3.5.1 and §3.6 (a budget split, not a data split): both steps see the same
data, so their budgets add up (sequential composition): ε = ε_FS + ε_train, equal split by
default as in the thesis. The classifier's sensitivity then depends on the k selected features,
not on the original D (thesis §3.3.3) — the whole gain of feature selection.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import RandomState, check_epsilon, check_fraction, check_random_state, check_scores, rule_message
from ..inputs import check_source_classes, is_source, set_fit_features, source_classes, source_input
from ..budget import RecordsSpends, prepare_accountant
from ..domain import declared_classes
from ..encode import Binarizer, binarize_table
from .naive_bayes import PrivateNaiveBayes

__all__ = ["SelectThenTrain"]


class SelectThenTrain(RecordsSpends, ClassifierMixin, BaseEstimator):
    """Split ``epsilon`` between a private selector and a private classifier, record both spends.

    ``selector`` and ``model`` are unfitted estimators with ``epsilon``, ``accountant`` and
    ``random_state`` parameters (e.g. :class:`~dpexplore.select.thesis.PrivateKSubsetSelector`
    and :class:`~dpexplore.models.naive_bayes.PrivateNaiveBayes`); clones are fitted with
    ε_FS = ``selection_share``·ε and ε_train = the rest, on one shared accountant (the
    given one or a fresh ``BudgetAccountant(epsilon)``). ``selector=None`` spends everything
    on training (all features). ``classes``: the public class labels, passed to both steps so
    they agree (a declared class absent from y stays a class of the model); None takes the
    ``classes`` declared on the model or selector, else each step reads them from y (with its
    PrivacyLeakWarning). Fitted: ``selector_``, ``model_``, ``classes_``, ``epsilon_selection_``,
    ``epsilon_training_``, ``accountant_``, ``ledger_``; after ``fit(source)`` also
    ``binarizer_`` (see :meth:`fit`).
    """

    def __init__(self, selector: Any = None, model: Any = None, *, epsilon: float = 0.1,
                 selection_share: float = 0.5, classes: Any = None, accountant: Any = None,
                 random_state: RandomState = None):
        self.selector = selector
        self.model = model
        self.epsilon = epsilon
        self.selection_share = selection_share
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    @classmethod
    def _sklearn_check_instance(cls) -> "SelectThenTrain":
        # the thesis pipeline on real-valued X: a public cut point at 0, one feature kept
        from ..select.thesis import PrivateKSubsetSelector   # the checks' instance only

        return cls(PrivateKSubsetSelector(k=1, binarize=0.0), PrivateNaiveBayes(binarize=0.0), epsilon=1.0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.input_tags.sparse = False
        # keeping k of D features (k = 1 for the checks) caps the accuracy by design
        tags.classifier_tags.poor_score = self.selector is not None or (
            self.model is not None and get_tags(self.model).classifier_tags.poor_score)
        return tags

    def _declared_classes(self, y: np.ndarray) -> Any:
        """One class list for both steps, checked against y before any spend (None: nothing is
        declared anywhere; each step then reads y itself and warns)."""
        classes = self.classes
        for step in (self.model, self.selector):
            if classes is None and step is not None and hasattr(step, "get_params"):
                classes = step.get_params().get("classes")
        if classes is not None:
            declared_classes(y, classes, "SelectThenTrain")     # unknown labels: refused here
        elif np.unique(y).size < 2:
            raise ValueError(rule_message("one_class", "y", classes=np.unique(y).size))
        return classes

    def fit(self, X: Any, y: Any = None) -> "SelectThenTrain":
        """Fit selector then model on the selected columns (same data: ε_FS + ε_train).

        ``fit(source)`` (a :class:`dpexplore.sources.Source`, y=None): both steps fit from the
        source's count table: the selector on the ``Binarizer(source.schema)`` columns (weighted
        cells, see :mod:`dpexplore.select.base`), then a
        :class:`~dpexplore.models.naive_bayes.PrivateNaiveBayes` model on the selected columns
        of the same weighted cells. Same release, seed for seed, as ``fit(B, y)`` with
        ``B = Binarizer(schema).fit().transform(X)`` and ``classes=schema.classes``. Fitted
        also ``binarizer_``: predict with ``pipe.predict(pipe.binarizer_.transform(X_test))``.
        """
        self.__dict__.pop("binarizer_", None)
        if is_source(X):
            return self._fit_source(X, y)
        return self._fit_records(X, y)

    def fit_scores(self, scores: Any, X: Any, y: Any) -> "SelectThenTrain":
        """:meth:`fit` on records with the feature scores of ``(X, y)`` computed beforehand: the
        selector's ``fit_scores(scores)`` instead of its ``fit(X, y)``, then the model on the
        selected columns. For an explorer that moves a slider over the same data: it scores once.

        The scores are private: they must be the selector's ``feature_score`` of this ``(X, y)``,
        as ``selector.true_scores(X, y)`` computes them. Same checks, spends, ledger and draws for
        the same seed as ``fit(X, y)``; the selector must offer ``fit_scores``.
        """
        self.__dict__.pop("binarizer_", None)
        if self.selector is None or not hasattr(self.selector, "fit_scores"):
            raise TypeError("fit_scores needs a selector with fit_scores(scores) (e.g. PrivateKSubsetSelector())")
        return self._fit_records(X, y, scores)

    def _fit_records(self, X: Any, y: Any, scores: Any = None) -> "SelectThenTrain":
        """fit(X, y); with ``scores``, the selector's ``fit_scores`` (see :meth:`fit_scores`)."""
        epsilon, f = self._check_steps()
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None (SelectThenTrain is a classifier)")
        Xv, yv = validate_data(self, X, y, dtype="numeric")
        check_classification_targets(yv)
        classes = self._declared_classes(yv)
        if scores is not None:          # one finite score per feature (their number is public), before any spend
            scores = check_scores(scores)
            if scores.size != Xv.shape[1]:
                raise ValueError(f"scores must hold one score per feature of X ({Xv.shape[1]}), got {scores.size}")
        if not isinstance(X, pd.DataFrame):
            X = Xv                      # validated array; a DataFrame goes on with its column names
        accountant, seeds, eps_sel, eps_train = self._open_budget(epsilon, f)
        model = clone(self.model).set_params(epsilon=eps_train, accountant=accountant,
                                             random_state=int(seeds[1]))
        if classes is not None and "classes" in model.get_params():
            model.set_params(classes=classes)
        # the model's own parameters are checked *before* the selector spends ε_FS (a bad
        # model parameter must not cost budget)
        if hasattr(model, "_check_params"):
            model._check_params()
        if self.selector is not None:
            selector = clone(self.selector).set_params(epsilon=eps_sel, accountant=accountant,
                                                       random_state=int(seeds[0]))
            if classes is not None and "classes" in selector.get_params():
                selector.set_params(classes=classes)
            if scores is None:
                selector.fit(X, y)
            else:
                selector.fit_scores(scores)
                set_fit_features(selector, X)       # transform then checks X as after fit(X, y)
            X = selector.transform(X)
            self.selector_ = selector
            model = _restrict_bounds(model, selector.get_support())
        else:
            self.selector_ = None
        self.model_ = model.fit(X, y)
        self._close_ledger()
        self.classes_ = self.model_.classes_     # n_features_in_ / feature_names_in_: validate_data
        self.epsilon_selection_, self.epsilon_training_ = eps_sel, eps_train
        return self

    def _open_budget(self, epsilon: float, f: float) -> tuple[Any, np.ndarray, float, float]:
        """The accountant (refusing now if it cannot pay ε), one seed per step, the selection
        and training shares of ε (all of it for training without a selector), and this fit's
        ledger slice opened."""
        accountant = prepare_accountant(epsilon, self.accountant)
        seeds = check_random_state(self.random_state).integers(0, 2**63 - 1, size=2)
        if self.selector is None:
            eps_sel, eps_train = 0.0, epsilon
        else:
            eps_sel, eps_train = accountant.split([float(f), 1 - float(f)], total=epsilon)
        self._open_ledger(accountant)
        return accountant, seeds, eps_sel, eps_train

    def _check_steps(self) -> tuple[float, Any]:
        """(ε, selection share) and the steps' types, checked before any spend."""
        epsilon = check_epsilon(self.epsilon)
        if self.model is None or not hasattr(self.model, "fit"):
            raise TypeError("model must be an unfitted private classifier (e.g. PrivateNaiveBayes())")
        if self.selector is not None and not hasattr(self.selector, "transform"):
            raise TypeError("selector must be an unfitted private selector (e.g. PrivateKSubsetSelector())")
        f = self.selection_share
        if self.selector is not None:
            check_fraction(f, "selection_share", high_closed=False)
        return epsilon, f

    def _fit_source(self, source: Any, y: Any) -> "SelectThenTrain":
        """``fit(source)``: selector and Naive Bayes from the source's weighted cells (see fit)."""
        epsilon, f = self._check_steps()
        if not isinstance(self.model, PrivateNaiveBayes):
            raise TypeError("SelectThenTrain.fit(source) trains a PrivateNaiveBayes model (the one classifier "
                            f"that fits from counts), got {type(self.model).__name__}: fit(X, y) on records")
        if self.selector is not None and not getattr(self.selector, "_fits_source", False):
            raise TypeError(f"{type(self.selector).__name__} cannot fit a Source: use PrivateKSubsetSelector, "
                            "ScorePerturbationSelector, ExponentialTopKSelector or SparseVectorSelector")
        table, schema = source_input(source, y, None, needs_taxonomy=True)
        declared = self.classes
        for step in (self.model, self.selector):
            if declared is None and step is not None:
                declared = step.get_params().get("classes")
        check_source_classes(declared, schema)
        binarizer = Binarizer(schema).fit()
        names = list(binarizer.get_feature_names_out())
        matrix, class_codes, weights = binarize_table(table, binarizer)
        set_fit_features(self, pd.DataFrame(columns=names))
        accountant, seeds, eps_sel, eps_train = self._open_budget(epsilon, f)
        model = clone(self.model).set_params(epsilon=eps_train, accountant=accountant,
                                             random_state=int(seeds[1]), classes=None)
        model._check_params()                    # before the selector spends ε_FS
        support = np.ones(len(names), dtype=bool)
        if self.selector is not None:
            selector = clone(self.selector).set_params(epsilon=eps_sel, accountant=accountant,
                                                       random_state=int(seeds[0]), classes=None)
            selector.fit(source)
            support = selector.get_support()
            self.selector_ = selector
        else:
            self.selector_ = None
        # PrivateNaiveBayes.fit(source)'s weighted path, on the selected columns only (thesis
        # §3.3.3: Δ = k); _fit_counts is the one code path shared with fit(X, y)
        set_fit_features(model, pd.DataFrame(columns=[n for n, keep in zip(names, support) if keep]))
        self.model_ = model._fit_counts(source_classes(source, schema), matrix[:, support],
                                        class_codes, weights)
        self._close_ledger()
        self.classes_ = self.model_.classes_
        self.epsilon_selection_, self.epsilon_training_ = eps_sel, eps_train
        self.binarizer_ = binarizer
        return self

    def _reduce(self, X: Any) -> Any:
        check_is_fitted(self, "model_")
        Xv = validate_data(self, X, reset=False, dtype="numeric")
        if not isinstance(X, pd.DataFrame):
            X = Xv
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
