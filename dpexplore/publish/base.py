"""What every publishing method shares: input checks, budget preparation, the Release interface."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_same_length, check_target
from ..budget import RecordsSpends, prepare_accountant
from ..domain import Schema

__all__ = ["Release", "check_release_input", "prepare_accountant"]  # prepare_accountant: budget.py


def check_release_input(X: Any, y: Any, schema: Schema | None) -> tuple[pd.DataFrame, pd.Series, Schema]:
    """Validate a training table before anything is spent; return ``(X, y, schema)``.

    ``X`` is a non-empty DataFrame whose columns are predictors of ``schema`` (a subset is fine:
    the schema is restricted to them, in X's order), ``y`` has at least two classes and no
    missing values, and every value lies in its declared public domain. Without a schema one is
    read from the data, with a :class:`~dpexplore.domain.PrivacyLeakWarning` saying what leaked.
    """
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    if len(X) == 0:
        raise ValueError("X is empty: a release needs at least one record")
    y = check_target(y, "y", min_classes=2)
    check_same_length(X, y)
    if schema is None:
        target = y.name if isinstance(y.name, str) and y.name not in X.columns else "target"
        schema = Schema.from_frame(X.assign(**{target: np.asarray(y)}), target)  # warns: leak
    elif not isinstance(schema, Schema):
        raise TypeError(f"schema must be a dpexplore Schema, got {type(schema).__name__}")
    unknown = [c for c in X.columns if c not in schema.attributes]
    if unknown:
        raise ValueError(f"X has column(s) {unknown} the schema does not know")
    if list(X.columns) != schema.predictors:
        schema = schema.subset(list(X.columns))
    schema.validate(X, y)
    return X, y, schema


class Release(RecordsSpends):
    """Mixin for publishing methods: a fitted method *is* its release.

    Subclasses bracket the spends of ``fit`` with ``_open_ledger``/``_close_ledger`` (so
    ``ledger_`` and ``epsilon_spent_`` are this release's own) and define
    ``synthetic(random_state=None)`` (a DataFrame with the schema's columns); ``classifier()``
    returns the fitted object itself when it can predict.
    """

    method: str = "release"

    def classifier(self):
        """The release as a classifier (post-processing of the released counts)."""
        if not hasattr(self, "predict"):
            raise TypeError(f"{type(self).__name__} has no classifier")
        return self
