"""What the private models share: input checks that run before the first spend, public bounds,
truthful scikit-learn tags and the (weighted) on-counts of Naive Bayes.

Every check here reads the parameters or the shape of the input only, so it can refuse before
anything is spent; a message names the argument and the rule, never a private value.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._validation import rule_message
from ..domain import Schema, check_class_list, declared_classes

__all__ = ["fit_input", "class_list", "DPTags", "check_bounds_pair", "resolve_bounds", "on_counts"]


def fit_input(est: BaseEstimator, X: Any, y: Any, classes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X as floats, classes_, class codes): scikit-learn's validation, then the declared classes.

    ``validate_data`` refuses sparse, complex, empty, NaN and 2-D y with scikit-learn's messages
    and sets ``n_features_in_`` / ``feature_names_in_``; ``check_classification_targets`` refuses
    regression targets. Classes come from ``classes`` (public), or from y with a
    :class:`~dpexplore.exceptions.PrivacyLeakWarning` (:func:`~dpexplore.domain.declared_classes`).
    Everything here runs before the first spend.
    """
    if y is None:
        raise ValueError(f"requires y to be passed, but the target y is None ({type(est).__name__} is a classifier)")
    Xa, ya = validate_data(est, X, y, dtype=np.float64)
    check_classification_targets(ya)
    values, codes = declared_classes(ya, est.classes, type(est).__name__)
    if values.size < 2:
        raise ValueError(rule_message("one_class", "y", classes=values.size))
    return Xa, values, codes


def class_list(est: Any) -> Any:
    """``classes`` checked early (before any spend): None or at least two distinct labels."""
    classes = getattr(est, "classes", None)
    if classes is not None:
        check_class_list(classes)
    return classes


class DPTags:
    """Truthful scikit-learn tags: dense numeric input, randomised unless seeded."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None   # fresh noise on every unseeded fit
        tags.input_tags.sparse = False
        return tags


def check_bounds_pair(bounds: Any) -> None:
    """Early check of ``bounds`` given as a (lower, upper) pair: finite and lower < upper.

    Needs no data (the number of features is checked later), so it can run before any spend.
    """
    if bounds is None or isinstance(bounds, Schema):
        return
    try:
        lo, hi = bounds
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    except (TypeError, ValueError):
        raise ValueError("bounds must be a Schema or a pair (lower, upper) of scalars or per-feature arrays") from None
    if lo.ndim > 1 or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError("bounds need finite lower < upper for every feature")


def resolve_bounds(bounds: Any, X: Any, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(lower, upper, from_data): public bounds from a Schema, a (lower, upper) pair, or the data."""
    D = a.shape[1]
    if bounds is None:
        return a.min(axis=0), a.max(axis=0), True
    if isinstance(bounds, Schema):
        if not isinstance(X, pd.DataFrame):
            raise TypeError("bounds given as a Schema need X as a DataFrame with its column names")
        names = bounds.check_columns(list(X.columns), "X columns")
        lo, hi = [], []
        for name in names:
            attr = bounds.attributes[name]
            if attr.kind != "numeric":
                raise ValueError(f"column {name!r} is categorical: one-hot it with Binarizer first")
            lo.append(attr.lower)
            hi.append(attr.upper)
        return np.array(lo), np.array(hi), False
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a Schema or a pair (lower, upper) of scalars or per-feature arrays") from None
    try:
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (D,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (D,)).copy()
    except ValueError:
        raise ValueError(f"bounds must be scalars or arrays of length {D} (one per feature of X), got "
                         f"shapes {np.shape(lo)} and {np.shape(hi)}") from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError("bounds need finite lower < upper for every feature")
    return lo, hi, False


def on_counts(X: np.ndarray, class_codes: np.ndarray, weights: np.ndarray | None, n_classes: int) -> np.ndarray:
    """On-counts per class, shape (C, D): Σ over (weighted) rows of class c of X (0/1).

    Records are rows of weight 1; a CountTable's cells are rows weighted by their counts
    (:func:`dpexplore.encode.binarize_table`). Exact integers in float64, so both give identical
    counts (the thesis's Alg. 1, lines 5–6).
    """
    onehot = np.eye(n_classes)[class_codes]
    if weights is not None:
        onehot = onehot * np.asarray(weights, dtype=np.float64)[:, None]
    return onehot.T @ X
