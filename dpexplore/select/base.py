"""What every feature selector shares: the scikit-learn transformer surface and its own ledger."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from ..budget import RecordsSpends

__all__ = ["SelectorBase"]


class SelectorBase(RecordsSpends, TransformerMixin, BaseEstimator):
    """A fitted selector keeps a boolean ``support_``; ``transform`` keeps those columns.

    Subclasses validate, then call ``_start`` (opens their ledger slice), spend through
    ``_spend`` and call ``_set_support``. Everything here is post-processing of the selection.
    """

    def _set_support(self, indices: np.ndarray) -> None:
        support = np.zeros(self.n_features_in_, dtype=bool)
        support[np.asarray(indices, dtype=int)] = True
        self.support_ = support

    def get_support(self, indices: bool = False) -> np.ndarray:
        """Boolean mask of the selected features (or their indices)."""
        if not hasattr(self, "support_"):
            raise AttributeError(f"{type(self).__name__} is not fitted: call fit(X, y) first")
        return np.flatnonzero(self.support_) if indices else self.support_.copy()

    def transform(self, X: Any) -> Any:
        """Keep the selected columns (a DataFrame stays a DataFrame). Post-processing only."""
        support = self.get_support()
        if isinstance(X, pd.DataFrame):
            if X.shape[1] != support.size:
                raise ValueError(f"X has {X.shape[1]} columns, the selector was fitted on {support.size}")
            return X.loc[:, support]
        a = np.asarray(X)
        if a.ndim != 2 or a.shape[1] != support.size:
            raise ValueError(f"X must have {support.size} columns, got shape {a.shape}")
        return a[:, support]

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the selected columns."""
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = np.array([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        return np.asarray(names, dtype=object)[self.get_support()]
