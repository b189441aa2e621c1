"""The training and prediction inputs every estimator accepts, checked before anything is spent.

``fit(X, y)`` takes a DataFrame (or an array, whose columns then follow the schema) and 1-D class
labels; ``fit(source)`` takes a :class:`~dpexplore.sources.Source` whose schema names the target.
The checks follow scikit-learn's input contract and messages (sparse, complex, empty, 1-D ``X``;
2-D or continuous ``y``), so the estimators pass its estimator checks; a message about the
private rows names the column and the rule, never a value or a count (see
:func:`dpexplore._validation.rule_message`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d, validate_data

from ._validation import check_same_length, check_target, rule_message
from .counts import CountTable
from .domain import Schema, check_schema, class_values
from .sources._base import Source

__all__ = ["as_frame", "refuse_sparse", "check_y", "set_fit_features", "check_release_features",
           "check_release_input", "is_source", "source_input", "source_classes", "check_source_classes"]


def refuse_sparse(X: Any) -> None:
    """Raise scikit-learn's TypeError for a sparse matrix or a DataFrame with sparse columns."""
    if sp.issparse(X) or (isinstance(X, pd.DataFrame) and any(isinstance(t, pd.SparseDtype) for t in X.dtypes)):
        check_array(X, accept_sparse=False)  # raises scikit-learn's "Sparse data was passed ..." TypeError
        raise TypeError("Sparse data was passed for X, but dense data is required: use X.toarray()")


def as_frame(X: Any, columns: list[str] | None = None, name: str = "X") -> pd.DataFrame:
    """``X`` as a DataFrame: DataFrames are returned as they are (not copied); arrays and lists
    become one with columns ``columns`` (or ``x0, x1, …``) after scikit-learn's own checks
    (sparse, complex, 1-D, empty and non-finite input refused with its messages)."""
    refuse_sparse(X)
    if isinstance(X, pd.DataFrame):
        if any(pd.api.types.is_complex_dtype(t) for t in X.dtypes):
            raise ValueError("Complex data not supported")
        if len(X) == 0:
            raise ValueError(f"{name} is empty: a release needs at least one record")
        if X.shape[1] == 0:
            raise ValueError(f"{name} has no columns: a release needs at least one predictor")
        if not all(isinstance(c, str) for c in X.columns):   # no usable names: columns by position
            if columns is None or len(columns) != X.shape[1]:
                columns = [f"x{i}" for i in range(X.shape[1])]
            X = X.set_axis(list(columns), axis=1)             # a new frame: the input is not touched
        return X
    arr = check_array(X, accept_sparse=False, dtype=None, ensure_all_finite=True, ensure_2d=True,
                      ensure_min_samples=1, ensure_min_features=1, input_name=name)
    if columns is None or len(columns) != arr.shape[1]:
        columns = [f"x{i}" for i in range(arr.shape[1])]
    frame = pd.DataFrame(arr, columns=list(columns))
    return frame.infer_objects() if arr.dtype == object else frame


def check_y(y: Any) -> pd.Series:
    """1-D class labels: a column vector is flattened with scikit-learn's DataConversionWarning,
    2-D and continuous (regression) targets are refused with its messages."""
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        y = y.iloc[:, 0]
    if not isinstance(y, pd.Series):
        y = pd.Series(column_or_1d(y, warn=True))
    if len(y) == 0:
        raise ValueError(rule_message("empty", table="y"))
    if y.isna().any():
        raise ValueError(rule_message("missing_label", "y"))
    check_classification_targets(y)  # "Unknown label type: continuous ..." for a regression target
    return y


def set_fit_features(estimator: Any, X: Any) -> None:
    """Set ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame with string column
    names, removing a stale one otherwise) from the training ``X``, as scikit-learn does."""
    validate_data(estimator, X, reset=True, skip_check_array=True)


def check_release_features(estimator: Any, X: Any, columns: list[str]) -> pd.DataFrame:
    """``X`` at predict/transform time, checked against what ``fit`` saw; returns a DataFrame
    whose columns are ``columns`` (the fitted predictor names).

    Arrays get ``columns`` by position; a DataFrame must have the fitted feature names (in the
    same order) when it was fitted on one, else its columns are taken by position. Wrong
    feature counts or names are refused with scikit-learn's messages. The values then meet the
    estimator's public schema (``schema_``) as :func:`check_predict_values` says.
    """
    if not isinstance(X, pd.DataFrame):
        refuse_sparse(X)
        X = check_array(X, accept_sparse=False, dtype=None, ensure_all_finite=True, ensure_min_features=1)
    validate_data(estimator, X, reset=False, skip_check_array=True)
    X = as_frame(X, list(columns))
    if list(X.columns) != list(columns):
        X = X.set_axis(list(columns), axis=1)   # fitted on an array: columns by position
    schema = getattr(estimator, "schema_", None)
    return check_predict_values(X, schema, columns) if isinstance(schema, Schema) else X


def check_predict_values(X: pd.DataFrame, schema: Schema, columns: list[str]) -> pd.DataFrame:
    """Values at predict time, read with the release's own encoding and the public schema only
    (never the fitted model, whose structure came from the private data): a number outside its
    declared bounds is clipped to them, as the own-table workflow clips before a release; a
    category outside the declared list is refused (``ValueError`` naming the column and the
    rule, never the value), as ``fit`` refuses it: no declared category stands nearest to it.
    So is a row that breaks a declared rule (:attr:`~dpexplore.domain.Schema.rules`) between
    two of ``columns``, with the message of ``fit`` (:meth:`~dpexplore.domain.Schema.check_rules`):
    the schema says no such record exists. Missing values are left to the callers' own checks
    (and a row holding one, or a taxonomy node label, in a rule's columns to them and to the
    rule's generalized reading). ``X`` is not modified (a clipped copy is returned)."""
    _check_declared_rules(X, schema, columns)
    out = X
    for name in columns:
        attr = schema.attributes.get(name)
        if attr is None:
            continue
        col = X[name]
        if attr.kind == "categorical":
            known = col.astype(str).isin(attr.categories)
            if attr.taxonomy is not None and not known.all():   # generalised records hold node labels
                tax = attr.taxonomy
                known |= col.astype(str).isin({label for d in range(tax.height) for label in tax.labels(d)})
            if (col.notna() & ~known).any():
                raise ValueError(rule_message("category", name))
        elif pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            v = col.to_numpy(dtype=float)
            if np.any(v < attr.lower) or np.any(v > attr.upper):   # NaN compares False: left alone
                out = X.copy() if out is X else out
                out[name] = col.clip(attr.lower, attr.upper)
    return out


def _check_declared_rules(X: pd.DataFrame, schema: Schema, columns: list[str]) -> None:
    """The rules of ``schema`` between two of ``columns`` on the rows of ``X`` whose values in
    the rule's columns are declared categories."""
    rules = {name: source for name, source in schema.rules.items() if name in columns and source in columns}
    if not rules:
        return
    involved = {name for pair in rules.items() for name in pair}
    declared = np.logical_and.reduce([X[name].astype(str).isin(schema[name].categories).to_numpy()
                                      for name in involved])
    schema.subset(sorted(involved)).check_rules(X.loc[declared])


def check_release_input(X: Any, y: Any, schema: Schema | None, estimator: Any = None
                        ) -> tuple[pd.DataFrame, pd.Series, Schema]:
    """Validate a training table before anything is spent; return ``(X, y, schema)``.

    ``X`` is a non-empty DataFrame whose columns are predictors of ``schema`` (a subset is fine:
    the schema is restricted to them, in X's order), or a NumPy array / list: its columns are
    then the schema's predictors when the widths agree, else ``x0, x1, …``. ``y`` is 1-D
    class labels with no missing values, each one of the schema's declared classes (any number
    of them may be absent; without a schema at least two must occur), and every value lies in its
    declared public domain. Sparse, complex, empty and 1-D ``X``, and 2-D or continuous ``y``
    are refused with scikit-learn's messages. Without a schema one is read from the data, with
    a :class:`~dpexplore.exceptions.PrivacyLeakWarning` saying what leaked. With ``estimator``,
    its ``n_features_in_``/``feature_names_in_`` are set (:func:`set_fit_features`).
    """
    if schema is not None:
        check_schema(schema, taxonomies=False)
    if schema is not None and schema.derived and isinstance(X, pd.DataFrame):   # computed, never fitted
        X = X.drop(columns=[c for c in schema.derived if c in X.columns])
    original = X
    X = as_frame(X, None if schema is None else schema.predictors)
    y = check_y(y)
    check_same_length(X, y)
    # declared classes: y may hold any of them, even just one (refusing a table because a class
    # does not occur would itself depend on the private data); read from y: two are needed
    y = check_target(y, "y", min_classes=2 if schema is None else 1)
    if schema is None:
        target = y.name if isinstance(y.name, str) and y.name not in X.columns else "target"
        while target in X.columns:
            target = "_" + target
        schema = Schema.from_frame(X.assign(**{target: np.asarray(y)}), target)  # warns: leak
    unknown = [c for c in X.columns if c not in schema.attributes]
    if unknown:
        raise ValueError(f"X has column(s) {unknown} the schema does not know")
    if list(X.columns) != schema.predictors:
        schema = schema.subset(list(X.columns))
    schema.validate(X, y)
    if estimator is not None:
        set_fit_features(estimator, original if isinstance(original, pd.DataFrame) else X.to_numpy())
    return X, y, schema


def is_source(X: Any) -> bool:
    """True when ``X`` is a :class:`~dpexplore.sources.Source` (the ``fit(source)`` path)."""
    return isinstance(X, Source)


def source_input(X: Any, y: Any, schema: Schema | None, estimator: Any = None,
                 needs_taxonomy: bool = True) -> tuple[CountTable, Schema] | None:
    """Recognise ``fit(source)``: return ``(count table, schema)`` for a
    :class:`dpexplore.sources.Source`, ``None`` for the record path ``fit(X, y)``.

    With a Source the target and the schema come from it, so ``y`` must be None; ``schema`` may
    be None, the source's schema, or a subset of its predictors (same target and classes: the
    table is projected on them). A non-Source ``X`` without ``y`` is refused with scikit-learn's
    "requires y" message. Every check runs before any spend; the count table is then built
    (once, cached by the Source) where the data lives. With ``estimator``, its
    ``n_features_in_``/``feature_names_in_`` become the schema's predictors. Fitted class labels
    follow the type of the source's target column (:func:`source_classes`).
    """
    if not is_source(X):
        if y is None:
            owner = type(estimator).__name__ if estimator is not None else "this method"
            raise ValueError(f"{owner} requires y to be passed, but the target y is None: call fit(X, y), "
                             "or fit(source) with a dpexplore.sources Source (its schema names the target)")
        return None
    if y is not None:
        raise ValueError(f"y must be None when X is a Source: the target is the source's column "
                         f"{X.schema.target!r} (schema.target); got y of type {type(y).__name__}")
    source_schema = X.schema
    for name in source_schema.predictors if needs_taxonomy else ():
        source_schema.taxonomy_of(name)
    names = source_schema.predictors
    if schema is not None:
        check_schema(schema, taxonomies=False)
        extra = [n for n in schema.predictors if n not in source_schema.attributes]
        if (extra or schema.target != source_schema.target or schema.classes != source_schema.classes
                or schema.to_dict() != source_schema.subset(schema.predictors).to_dict()):
            raise ValueError("schema must be None, the source's schema, or source.schema.subset([...]) "
                             "(the same target, classes and attribute domains): the counts are built "
                             f"from the source's schema; unknown or changed: {extra or 'target/classes/domains'}")
        names = schema.predictors
    # a method that will count its own public view of the source next names it: one scan for both
    along = getattr(estimator, "_count_along", None)
    table = X.count_table(along=along(X, source_schema.subset(names))) if along is not None else X.count_table()
    if names != table.attributes:
        table = table.project(names)
    if estimator is not None:
        set_fit_features(estimator, pd.DataFrame(columns=list(names)))
    return table, table.schema


def source_classes(source: Source, schema: Schema) -> np.ndarray:
    """``classes_`` of a fit from ``source``: the schema's classes, in its order, in the type of
    the source's target column (:attr:`~dpexplore.sources.Source.target_like`, the engine's column
    type, never its values), as ``fit(X, y)`` gives them in the type of ``y``."""
    return class_values(schema.classes, source.target_like)


def check_source_classes(declared: Any, schema: Schema) -> None:
    """The one rule for ``classes`` given next to ``fit(source)``: None, or the source's schema
    classes (compared as text, in order)."""
    if declared is not None and [str(c) for c in declared] != list(schema.classes):
        raise ValueError(f"classes={list(declared)!r} differ from the source's schema classes "
                         f"{list(schema.classes)!r}: leave classes=None (the schema declares them)")
