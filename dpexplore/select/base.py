"""What every feature selector shares: the scikit-learn transformer surface and its own ledger.

Validation goes through scikit-learn's own utilities (``validate_data``: arrays or DataFrames,
``n_features_in_`` / ``feature_names_in_``, its messages for sparse, complex, NaN and empty
input) and always runs before the first spend. Features must be 0/1, or are binarised by the
public rule ``X > binarize`` (a declared cut point, as ``sklearn.naive_bayes.BernoulliNB``).
Binary labels come from the *declared* ``classes = [negative, positive]``
(:func:`dpexplore.domain.declared_classes`): the last declared class is the positive one (with
more than two declared, the others are all negative: one-vs-rest); ``classes=None`` reads them
from the private y with a :class:`~dpexplore.domain.PrivacyLeakWarning`.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._validation import check_binary_matrix, check_same_length, rule_message
from ..inputs import check_source_classes, is_source, set_fit_features, source_classes, source_input
from ..budget import RecordsSpends
from ..domain import declared_classes
from ..encode import Binarizer, binarize_table

__all__ = ["SelectorBase", "check_binarize"]


def check_binarize(binarize: Any) -> float | None:
    """``binarize``: None (X already holds 0/1) or a finite public cut point t (X > t becomes 1,
    a per-record map, as ``sklearn.naive_bayes.BernoulliNB``); checked before any spend."""
    if binarize is not None and (isinstance(binarize, bool) or not isinstance(binarize, numbers.Real)
                                 or not np.isfinite(binarize)):
        raise ValueError(f"binarize must be None (X already 0/1) or a finite public cut point, got {binarize!r}")
    return binarize


class SelectorBase(RecordsSpends, TransformerMixin, BaseEstimator):
    """A fitted selector keeps a boolean ``support_``; ``transform`` keeps those columns.

    Subclasses validate (``_binary_X``, ``_binary_y``), then call ``_start`` (opens their ledger
    slice), spend through ``_spend`` and call ``_set_support``. Everything after the selection is
    post-processing.
    """

    # the feature score is the constructor parameter ``feature_score`` (not ``score``, which would
    # hide scikit-learn's ``score`` method convention); no expected failures
    _sklearn_expected_failures: dict[str, str] = {}
    # does fit(source) exist? (False for the demonstrations that are NOT DP)
    _fits_source = True

    def _needs_labels(self) -> bool:
        """Does ``fit`` need labels? (overridden where the score decides)"""
        return True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self._needs_labels()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = getattr(self, "random_state", None) is None
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ validation (no spend)
    def _binary_X(self, X: Any, y: Any = None) -> tuple[np.ndarray, Any]:
        """Validate X (and the length of y) with scikit-learn, set ``n_features_in_`` /
        ``feature_names_in_``, return (0/1 int matrix, y as given)."""
        binarize = check_binarize(getattr(self, "binarize", None))
        if y is None and not self._needs_labels():
            a = validate_data(self, X, reset=True, dtype="numeric")
        else:
            a, y = validate_data(self, X, y, reset=True, dtype="numeric", y_numeric=False,
                                 ensure_all_finite=True)
        if binarize is not None:
            return (a > binarize).astype(np.int64), y
        # not copied: validate_data's array is read only (cap_ones copies before it writes)
        return check_binary_matrix(a, "X", hint=" or pass binarize=<public cut point> (X > binarize becomes 1)",
                                   copy=False), y

    def _binary_y(self, y: Any, n: int) -> np.ndarray:
        """0/1 labels: 1 for the last declared class (the positive one), 0 for the others."""
        if y is None:
            raise ValueError(f"{type(self).__name__} needs the labels y for this score")
        ya = column_or_1d(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y, warn=True)
        check_same_length(range(n), ya)
        if pd.isna(ya).any():
            raise ValueError(rule_message("missing_label", "y"))
        if self.classes is None:      # declared classes: unknown labels are refused below
            check_classification_targets(ya)
        classes, codes = declared_classes(ya, self.classes, type(self).__name__)
        if self.classes is None and len(classes) < 2:
            raise ValueError(f"y holds only {len(classes)} class: declare classes=[negative, positive] "
                             "(public labels; the last one is the positive class)")
        self.classes_ = classes
        # the scores are binary: the last declared class against the others (one-vs-rest when
        # more than two are declared; the checks and multi-class pipelines pass such targets)
        return (codes == len(classes) - 1).astype(np.int64)

    def _source_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``fit(source)``: (0/1 int matrix of the occupied cells, 0/1 labels, weights = counts,
        private); None for the record path. Sets ``n_features_in_``/``feature_names_in_`` (the
        binarizer's column names), ``classes_`` (the schema's, in the source's target type) and ``binarizer_``.
        Every check runs before any spend; no row is read once the source's table is built."""
        self.__dict__.pop("binarizer_", None)
        if not is_source(X):
            return None
        if not self._fits_source:
            raise TypeError(f"{type(self).__name__} cannot fit a Source: it is kept as a demonstration "
                            "that is NOT differentially private. Use PrivateKSubsetSelector, "
                            "ScorePerturbationSelector, ExponentialTopKSelector or SparseVectorSelector")
        binarize = check_binarize(getattr(self, "binarize", None))
        table, schema = source_input(X, y, None, needs_taxonomy=True)
        check_source_classes(self.classes, schema)
        binarizer = Binarizer(schema).fit()
        matrix, class_codes, weights = binarize_table(table, binarizer)
        set_fit_features(self, pd.DataFrame(columns=list(binarizer.get_feature_names_out())))
        Xb = (matrix > binarize if binarize is not None else matrix).astype(np.int64)
        self.classes_ = source_classes(X, schema)
        self.binarizer_ = binarizer
        # binary scores: the last declared class against the others (as _binary_y)
        return Xb, (class_codes == len(schema.classes) - 1).astype(np.int64), np.asarray(weights, dtype=np.int64)

    # ------------------------------------------------------------------ release (post-processing)
    def _set_support(self, indices: np.ndarray) -> None:
        support = np.zeros(self.n_features_in_, dtype=bool)
        support[np.asarray(indices, dtype=int)] = True
        self.support_ = support

    def get_support(self, indices: bool = False) -> np.ndarray:
        """Boolean mask of the selected features (or their indices)."""
        check_is_fitted(self, "support_")
        return np.flatnonzero(self.support_) if indices else self.support_.copy()

    def transform(self, X: Any) -> Any:
        """Keep the selected columns (a DataFrame stays a DataFrame). Post-processing only."""
        support = self.get_support()
        a = validate_data(self, X, reset=False, dtype=None)
        if isinstance(X, pd.DataFrame):
            return X.loc[:, support]
        return a[:, support]

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the selected columns."""
        support = self.get_support()
        names = getattr(self, "feature_names_in_", None)
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            if names.size != self.n_features_in_:
                raise ValueError(f"input_features has {names.size} names, expected {self.n_features_in_}")
        if names is None:
            names = np.array([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        return np.asarray(names, dtype=object)[support]
