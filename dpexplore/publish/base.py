"""What every publishing method shares: input checks, budget preparation, the Release interface."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d, validate_data

from .._validation import check_same_length, check_target
from ..budget import RecordsSpends, prepare_accountant
from ..domain import Schema

if TYPE_CHECKING:
    from ..counts import CountTable

__all__ = ["Release", "check_release_input", "check_release_features", "set_fit_features",
           "as_frame", "prepare_accountant", "source_input", "CompleteSynthetic", "MarginalFiller",
           "synthetic_size", "apportion", "check_marginal_share", "check_row_cap", "marginal_taxonomy",
           "DEFAULT_MAX_SYNTHETIC_ROWS"]  # prepare_accountant: budget.py


def _refuse_sparse(X: Any) -> None:
    if sp.issparse(X) or (isinstance(X, pd.DataFrame) and any(isinstance(t, pd.SparseDtype) for t in X.dtypes)):
        check_array(X, accept_sparse=False)  # raises scikit-learn's "Sparse data was passed ..." TypeError
        raise TypeError("Sparse data was passed for X, but dense data is required: use X.toarray()")


def as_frame(X: Any, columns: list[str] | None = None, name: str = "X") -> pd.DataFrame:
    """``X`` as a DataFrame: DataFrames are returned as they are (not copied); arrays and lists
    become one with columns ``columns`` (or ``x0, x1, …``) after scikit-learn's own checks
    (sparse, complex, 1-D, empty and non-finite input refused with its messages)."""
    _refuse_sparse(X)
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


def _check_y(y: Any) -> pd.Series:
    """1-D class labels: a column vector is flattened with scikit-learn's DataConversionWarning,
    2-D and continuous (regression) targets are refused with its messages."""
    if isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        y = y.iloc[:, 0]
    if not isinstance(y, pd.Series):
        y = pd.Series(column_or_1d(y, warn=True))
    if len(y) == 0:
        raise ValueError("y is empty: at least one row is needed")
    if y.isna().any():
        raise ValueError("y has missing values (NaN): drop those rows first")
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
    feature counts or names are refused with scikit-learn's messages.
    """
    if not isinstance(X, pd.DataFrame):
        _refuse_sparse(X)
        X = check_array(X, accept_sparse=False, dtype=None, ensure_all_finite=True, ensure_min_features=1)
    validate_data(estimator, X, reset=False, skip_check_array=True)
    X = as_frame(X, list(columns))
    if list(X.columns) != list(columns):
        X = X.set_axis(list(columns), axis=1)   # fitted on an array: columns by position
    return X


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
    a :class:`~dpexplore.domain.PrivacyLeakWarning` saying what leaked. With ``estimator``,
    its ``n_features_in_``/``feature_names_in_`` are set (:func:`set_fit_features`).
    """
    if schema is not None and not isinstance(schema, Schema):
        raise TypeError(f"schema must be a dpexplore Schema, got {type(schema).__name__}")
    original = X
    X = as_frame(X, None if schema is None else schema.predictors)
    y = _check_y(y)
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


def _is_source(X: Any) -> bool:
    from ..sources import Source
    return isinstance(X, Source)


def source_input(X: Any, y: Any, schema: Schema | None, estimator: Any = None,
                 needs_taxonomy: bool = True) -> "tuple[CountTable, Schema] | None":
    """Recognise ``fit(source)``: return ``(count table, schema)`` for a
    :class:`dpexplore.sources.Source`, ``None`` for the record path ``fit(X, y, schema)``.

    With a Source the target and the schema come from it, so ``y`` must be None; ``schema`` may
    be None, the source's schema, or a subset of its predictors (same target and classes: the
    table is projected on them). A non-Source ``X`` without ``y`` is refused with scikit-learn's
    "requires y" message. Every check runs before any spend; the count table is then built
    (once, cached by the Source) where the data lives. With ``estimator``, its
    ``n_features_in_``/``feature_names_in_`` become the schema's predictors. Fitted class labels
    are the schema's strings (a Source has no y dtype to follow).
    """
    if not _is_source(X):
        if y is None:
            owner = type(estimator).__name__ if estimator is not None else "this method"
            raise ValueError(f"{owner} requires y to be passed, but the target y is None: call fit(X, y, schema), "
                             "or fit(source) with a dpexplore.sources Source (its schema names the target)")
        return None
    if y is not None:
        raise ValueError(f"y must be None when X is a Source: the target is the source's column "
                         f"{X.schema.target!r} (schema.target); got y of type {type(y).__name__}")
    source_schema = X.schema
    for name in source_schema.predictors:
        if needs_taxonomy and source_schema[name].taxonomy is None:
            raise ValueError(f"the source's schema has no taxonomy for {name!r}; declare one "
                             "(e.g. Schema.from_frame or Attribute(..., taxonomy=...)) before fitting")
    names = source_schema.predictors
    if schema is not None:
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a dpexplore Schema, got {type(schema).__name__}")
        extra = [n for n in schema.predictors if n not in source_schema.attributes]
        if (extra or schema.target != source_schema.target or schema.classes != source_schema.classes
                or schema.to_dict() != source_schema.subset(schema.predictors).to_dict()):
            raise ValueError("schema must be None, the source's schema, or source.schema.subset([...]) "
                             "(the same target, classes and attribute domains): the counts are built "
                             f"from the source's schema; unknown or changed: {extra or 'target/classes/domains'}")
        names = schema.predictors
    table = X.count_table()
    if names != table.attributes:
        table = table.project(names)
    if estimator is not None:
        set_fit_features(estimator, pd.DataFrame(columns=list(names)))
    return table, table.schema


class Release(RecordsSpends):
    """Mixin for publishing methods: a fitted method *is* its release.

    Subclasses bracket the spends of ``fit`` with ``_open_ledger``/``_close_ledger`` (so
    ``ledger_`` and ``epsilon_spent_`` are this release's own) and define
    ``synthetic(random_state=None, n=None)`` (a DataFrame with every declared column, see
    :class:`CompleteSynthetic`); ``classifier()``
    returns the fitted object itself when it can predict. Put ``Release`` first among the
    bases so that its scikit-learn tags apply.
    """

    method: str = "release"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True           # categorical columns may hold strings
        tags.input_tags.categorical = True
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = getattr(self, "random_state", None) is None  # DP noise
        if tags.classifier_tags is not None:
            tags.classifier_tags.poor_score = True  # noise and coarse grids cost accuracy by design
        return tags

    def classifier(self):
        """The release as a classifier (post-processing of the released counts)."""
        if not hasattr(self, "predict"):
            raise TypeError(f"{type(self).__name__} has no classifier")
        return self


# =========================================================================== complete synthetic tables
# Issue 12: every publisher's synthetic() returns every declared column, in schema order, with a
# public size rule; columns the release carries no information on are filled either uniformly over
# their declared domain (the papers' rule) or from a small paid DP one-way marginal (an extension).

DEFAULT_MAX_SYNTHETIC_ROWS = 1_000_000
"""Default public cap on the rows ``synthetic()`` makes (constructor ``max_synthetic_rows``)."""

MARGINAL_BINS = 16
"""Equal-width bins over the public bounds for a numeric column's marginal when it has no taxonomy."""


def check_marginal_share(value: Any) -> float:
    """``marginal_share`` as a float in [0, 1): the fraction of ε kept for one-way marginals."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TypeError(f"marginal_share must be a number in [0, 1) (a fraction of epsilon), got {value!r}")
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"marginal_share must be in [0, 1) (0 = the paper's budget, e.g. 0.1 keeps 10% of "
                         f"epsilon for marginals of unmodelled columns), got {value!r}")
    return float(value)


def check_row_cap(value: Any, name: str = "max_synthetic_rows") -> int:
    """A public row count ≥ 1 (``max_synthetic_rows``, ``n`` or ``max_rows``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if not (isinstance(value, numbers.Real) and float(value).is_integer()):
            raise TypeError(f"{name} must be a whole number of rows ≥ 1, got {value!r}")
    if int(value) < 1:
        raise ValueError(f"{name} must be a whole number of rows ≥ 1, got {value!r}")
    return int(value)


def synthetic_size(dp_total: float, n: Any = None, cap: int = DEFAULT_MAX_SYNTHETIC_ROWS,
                   max_rows: Any = None) -> int:
    """The public size rule of a synthetic table: ``n`` when given, else the release's DP total
    (a noisy record count or the unclipped sum of noisy counts), clamped to [1, cap]. ``max_rows``
    (when given) replaces ``cap``. A function of DP outputs and public constants only."""
    cap = check_row_cap(cap if max_rows is None else max_rows, "max_rows" if max_rows is not None else
                        "max_synthetic_rows")
    if n is not None:
        return min(check_row_cap(n, "n"), cap)
    total = float(dp_total)
    if not np.isfinite(total):
        return cap if total > 0 else 1
    return int(min(max(round(total), 1), cap))


def apportion(weights: Any, n: int) -> np.ndarray:
    """Copies per entry, summing to exactly ``n``, proportional to ``weights`` clipped at 0
    (largest-remainder rounding, ties by position: deterministic post-processing). All-zero
    weights share ``n`` evenly."""
    w = np.clip(np.asarray(weights, dtype=float).ravel(), 0.0, None)
    n = int(n)
    if w.size == 0:
        return np.zeros(0, dtype=np.int64)
    total = float(w.sum())
    if not total > 0 or not np.isfinite(total):
        w, total = np.ones(w.size), float(w.size)
    quota = w / total * n
    base = np.floor(quota).astype(np.int64)
    short = n - int(base.sum())
    if short > 0:
        order = np.argsort(-(quota - base), kind="stable")
        base[order[:short]] += 1
    return base


def _sample_leaves(attr: Any, tax: Any, codes: np.ndarray, rng: np.random.Generator, generalized: bool) -> np.ndarray:
    from ..histogram import _sample_within
    depth = tax.height - 1
    if generalized:
        return np.asarray(tax.labels(depth), dtype=object)[codes]
    return _sample_within(attr, tax, depth, codes, rng)


def marginal_taxonomy(attr: Any) -> Any:
    """The taxonomy whose leaves are the domain of a column's one-way marginal: its own, or
    :data:`MARGINAL_BINS` equal-width bins over the public bounds (numeric without one)."""
    if attr.taxonomy is not None:
        return attr.taxonomy
    from ..domain import Taxonomy
    if attr.kind == "numeric":
        return Taxonomy.equal_width(attr.name, attr.lower, attr.upper, (MARGINAL_BINS,))
    return Taxonomy.flat(attr.name, attr.categories)


class MarginalFiller:
    """Values for the columns a release carries no information on (issue 12, item 7).

    Built BEFORE the first spend from the training data (the leaf code of every value of every
    predictor, on its :func:`marginal_taxonomy`, and the row weights of a CountTable), so bad data
    fails before anything is spent. :meth:`release` then, after the method's private model
    selection, spends ``epsilon`` (split evenly, sequentially) on Laplace one-way marginals of the
    unmodelled columns over their declared domain (ledger "marginal: <column>") and drops the
    codes. Not in the papers: an extension, documented as such in every ledger and docstring.
    """

    def __init__(self, schema: Schema, X: pd.DataFrame | None = None, table: Any = None,
                 taxonomies: dict | None = None, codes: dict | None = None, weights: Any = None):
        self.taxonomies = {}
        self._codes: dict[str, np.ndarray] = {}
        self._weights = None
        for a in schema.predictors:
            tax = (taxonomies or {}).get(a) or marginal_taxonomy(schema[a])
            self.taxonomies[a] = tax
            if codes is not None and a in codes:
                self._codes[a] = np.asarray(codes[a], dtype=np.int64)
            elif table is not None and tax is schema[a].taxonomy:
                self._codes[a] = np.asarray(table.leaf_codes[a], dtype=np.int64)
            elif X is not None:
                self._codes[a] = np.asarray(tax.leaf_codes(X[a]), dtype=np.int64)
        if codes is not None:
            self._weights = None if weights is None else np.asarray(weights, dtype=float)
        elif table is not None:
            self._weights = np.asarray(table.counts, dtype=float)

    def release(self, columns: Sequence[str], epsilon: float, accountant: Any, rng: np.random.Generator
                ) -> dict[str, np.ndarray]:
        """Noisy one-way marginal (Laplace(m/ε) per count, m = len(columns): sequential
        composition, one ε/m spend per column; each column's count vector has L1 sensitivity 1
        under add/remove-one) of each column, over its public leaves."""
        from .. import mechanisms
        out: dict[str, np.ndarray] = {}
        columns = list(columns)
        if not columns:
            self._codes = {}
            return out
        each = float(epsilon) / len(columns)
        for a in columns:
            if a not in self._codes:
                raise ValueError(f"no data for the marginal of {a!r}")
            size = len(self.taxonomies[a].leaves)
            counts = np.bincount(self._codes[a], weights=self._weights, minlength=size).astype(float)
            out[a] = np.asarray(mechanisms.laplace(counts, epsilon=accountant.spend(each, f"marginal: {a}"),
                                                   sensitivity=1.0, random_state=rng), dtype=float)
        self._codes = {}   # the private codes are not kept
        return out


def _cast_like(values: np.ndarray, attr: Any) -> Any:
    """Synthetic values of ``attr`` in the schema's type: int64 for integer attributes, float64
    for other numeric ones, the declared category labels for categorical ones. Decided by the
    schema only, so every engine (records, pandas, DuckDB, Spark) gives the same frame; a caller
    who wants the categories back in its own column types maps them (e.g. dpexplore.tables)."""
    if attr.kind == "numeric":
        return np.asarray(values).astype(np.int64 if attr.integer else float)
    return values


class CompleteSynthetic:
    """Mixin: the bookkeeping of complete synthetic tables, shared by the four publishers.

    A fit calls :meth:`_prepare_filler` before its first spend (it returns the filler holding the
    private codes, kept in a local variable, never on the estimator) and :meth:`_fill_marginals`
    after its model selection (inside its ledger); ``synthetic`` calls :meth:`_complete` on the
    modelled columns it made.
    """

    def _check_complete_params(self) -> None:
        check_marginal_share(self.marginal_share)
        check_row_cap(self.max_synthetic_rows)

    def _model_epsilon(self) -> float:
        """The ε the method itself runs on: (1 - marginal_share)·epsilon."""
        return float(self.epsilon) * (1.0 - float(self.marginal_share))

    def _prepare_filler(self, schema: Schema, X: Any = None, table: Any = None,
                        **kwargs) -> "MarginalFiller | None":
        return MarginalFiller(schema, X=X, table=table, **kwargs) if float(self.marginal_share) > 0 else None

    def _fill_marginals(self, modelled: Sequence[str], accountant: Any, rng: np.random.Generator,
                        filler: "MarginalFiller | None") -> None:
        """After the model is chosen: pay the marginals of the unmodelled columns (when
        ``marginal_share`` > 0) and set ``column_sources_``/``marginals_``."""
        schema = self.schema_
        modelled = [a for a in schema.predictors if a in set(modelled)]
        rest = [a for a in schema.predictors if a not in set(modelled)]
        share = float(self.epsilon) * float(self.marginal_share)
        self.marginals_ = {}
        self._marginal_taxonomies = {}
        if filler is not None and rest:
            self.marginals_ = filler.release(rest, share, accountant, rng)
            self._marginal_taxonomies = {a: filler.taxonomies[a] for a in rest}
        model_eps = self._model_epsilon()
        sources = {a: {"source": "modelled", "epsilon": model_eps} for a in modelled}
        for a in rest:
            if a in self.marginals_:
                sources[a] = {"source": "marginal", "epsilon": share / len(rest)}
            else:
                sources[a] = {"source": "uniform", "epsilon": 0.0}
        sources[schema.target] = {"source": "modelled", "epsilon": model_eps}
        self.column_sources_ = {a: sources[a] for a in schema.predictors + [schema.target]}

    def _fill_column(self, a: str, n: int, rng: np.random.Generator, generalized: bool) -> np.ndarray:
        """``n`` values of an unmodelled column: from its noisy marginal (clamped ≥ 0 and
        normalised), else uniform over its declared domain (the papers' rule; "generalized": the
        root label)."""
        attr = self.schema_[a]
        if a in getattr(self, "marginals_", {}):
            tax = self._marginal_taxonomies[a]
            p = np.clip(self.marginals_[a], 0.0, None)
            p = p / p.sum() if p.sum() > 0 else np.full(p.size, 1.0 / p.size)
            codes = rng.choice(p.size, size=n, p=p)
            return _sample_leaves(attr, tax, codes, rng, generalized)
        tax = marginal_taxonomy(attr)
        if generalized:
            return np.full(n, tax.root_label if hasattr(tax, "root_label") else "Any", dtype=object)
        from ..histogram import _sample_within
        return _sample_within(attr, tax, 0, np.zeros(n, dtype=np.int64), rng)

    def _complete(self, frame: pd.DataFrame, rng: np.random.Generator, generalized: bool = False) -> pd.DataFrame:
        """Every declared column in schema order: unmodelled columns filled (:meth:`_fill_column`),
        values in the schema's types (unless ``generalized``: node labels are text)."""
        schema = self.schema_
        n = len(frame)
        data = {}
        sources = getattr(self, "column_sources_", {})
        for a in schema.predictors:
            if sources.get(a, {}).get("source", "modelled") == "modelled" and a in frame.columns:
                values = frame[a].to_numpy()
            else:
                values = self._fill_column(a, n, rng, generalized)
            data[a] = values if generalized else _cast_like(values, schema[a])
        data[schema.target] = frame[schema.target].to_numpy()
        return pd.DataFrame(data, columns=schema.predictors + [schema.target])
