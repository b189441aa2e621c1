"""Public encodings of a table: every column, row and value map is fixed by the schema, never by the data.

* :class:`Binarizer`: one-hot 0/1 indicators over the schema's categories, public cut points or
  taxonomy leaves (the thesis's App. A.8: cut points and categories must be public), the input
  of :class:`~dpexplore.models.PrivateNaiveBayes` and the feature selectors.
* :func:`binarize_table`: the same 0/1 features from a :class:`~dpexplore.counts.CountTable`
  (occupied cells as weighted records), for ``fit(source)`` and count-based scores.
* :func:`design_matrix`: numeric columns scaled into [0, 1] by their public bounds, categoricals
  one-hot over their public categories: the rows logistic regression needs bounded
  (Chaudhuri et al. 2011, §2: ‖x‖ ≤ 1 after the public row scaling).

A value outside the public categories never takes another category's column: it gets no
indicator at all.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import check_int, format_number, rule_message
from .counts import CountTable
from .domain import Schema, check_schema, observed_attribute
from .exceptions import PrivacyLeakWarning

__all__ = ["Binarizer", "binarize_table", "design_matrix"]


# =========================================================================== Binarizer
class Binarizer(TransformerMixin, BaseEstimator):
    """One-hot encode a table using only its public schema (thesis App. A.8).

    Categorical columns: one 0/1 column per category of the schema (``"attr=value"``). Numeric
    columns: one 0/1 column per interval between public cut points (``"attr=[lo, hi)"``, last
    interval closed) when ``cut_points[attr]`` or ``n_bins`` is given; else one per leaf of the
    attribute's taxonomy, assigned exactly as the taxonomy assigns values (``"attr=(lo, hi]"``,
    the taxonomy's leaf labels, first leaf closed), so that the output is a function of each
    record's leaf codes and :func:`binarize_table` gives it from a CountTable. Without a
    taxonomy: ``n_bins`` (default 4) equal-width intervals over the public bounds. ``depths[attr]`` generalises an
    attribute first to that level of its public taxonomy (e.g. native country → region), which
    removes many near-empty indicator columns. ``fit`` reads no data values, only column names;
    ``transform`` rejects values outside the public domain. ``schema=None`` infers the domain
    from ``X`` in ``fit`` (observed min/max and categories, with a PrivacyLeakWarning: not DP),
    so the transformer also works inside scikit-learn's tools. X may be a DataFrame or an array
    (columns ``x0, x1, …`` without a schema, the schema's columns in order with one).
    Fitted: ``schema_`` (the schema used), ``columns_``, ``edges_``, ``depths_``,
    ``leaf_columns_`` (numeric columns binarised on their taxonomy leaves), ``feature_names_out_``.
    """

    def __init__(self, schema: Schema | None = None, *, columns: Sequence[str] | None = None,
                 cut_points: Mapping[str, Sequence[float]] | None = None, n_bins: int | None = None,
                 depths: Mapping[str, int] | None = None):
        self.schema = schema
        self.columns = columns
        self.cut_points = cut_points
        self.n_bins = n_bins
        self.depths = depths

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.categorical = True
        tags.transformer_tags.preserves_dtype = []    # the output is 0/1 indicators (int8)
        tags.requires_fit = True
        return tags

    def _as_frame(self, X: Any, *, reset: bool) -> pd.DataFrame:
        """scikit-learn's validation of X, then X as a DataFrame with the schema's column names."""
        frame = isinstance(X, pd.DataFrame)
        inferred = self.schema is None
        if reset or "n_features_in_" in self.__dict__:
            Xv = validate_data(self, X, reset=reset, dtype="numeric" if inferred and not frame else None)
        else:
            Xv = np.asarray(X)
        if frame:
            return X if all(isinstance(c, str) for c in X.columns) else X.set_axis([str(c) for c in X.columns], axis=1)
        if inferred:
            names = [f"x{i}" for i in range(Xv.shape[1])]
        elif reset:   # an array holds the schema's predictors (or the chosen ``columns``) in order
            names = next((c for c in (self.schema.predictors, list(self.columns or []))
                          if Xv.ndim == 2 and len(c) == Xv.shape[1]), self.schema.predictors)
        else:
            names = self.__dict__.get("_input_columns") or self.columns_
        if not inferred:
            if Xv.ndim != 2 or Xv.shape[1] != len(names):
                raise ValueError(f"X has {Xv.shape[-1]} columns, expected {len(names)} ({names}): pass a "
                                 "DataFrame with the schema's column names")
        return pd.DataFrame(Xv, columns=names)

    @staticmethod
    def _infer_schema(X: pd.DataFrame) -> Schema:
        """A schema read from the data (NOT private): observed bounds and categories."""
        attrs = [observed_attribute(col, X[col]) for col in X.columns]
        warnings.warn("Binarizer without a schema: the numeric bounds and category lists that define the "
                      "indicator columns are read from the private data, which no ε covers. Pass a Schema "
                      "with the public domain.", PrivacyLeakWarning, stacklevel=3)
        return Schema(attrs, "__target__", ["0", "1"])   # the classes are a placeholder, never used

    def fit(self, X: Any = None, y: Any = None) -> "Binarizer":
        """Fix the output columns from the schema (no data value is read; without a schema the
        domain is read from ``X`` with a PrivacyLeakWarning)."""
        if self.schema is not None:
            check_schema(self.schema, taxonomies=False)
        if self.schema is None and X is None:
            raise ValueError("Binarizer needs a schema (the public domain), or X to infer one from (not private)")
        for attr in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)
        frame = None if X is None else self._as_frame(X, reset=True)
        self._input_columns = None if frame is None else list(frame.columns)
        schema = self._infer_schema(frame) if self.schema is None else self.schema
        self.schema_ = schema
        check_int(self.n_bins, "n_bins", minimum=1, allow_none=True)
        names = list(schema.predictors if self.columns is None else
                     schema.check_columns(self.columns, "columns"))
        cuts = dict(self.cut_points or {})
        schema.check_columns(cuts, "cut_points")
        depths = dict(self.depths or {})
        schema.check_columns(depths, "depths")
        self.edges_: dict[str, np.ndarray] = {}
        self.depths_: dict[str, int] = {}
        self.leaf_columns_: list[str] = []
        out: list[str] = []
        for name in names:
            attr = schema.attributes[name]
            if name in depths:
                tax, depth = attr.taxonomy, depths[name]
                if tax is None or isinstance(depth, bool) or not isinstance(depth, numbers.Integral) \
                        or not 1 <= depth < tax.height:
                    raise ValueError(f"depths[{name!r}] must be an integer in [1, {getattr(tax, 'height', 1) - 1}] "
                                     "(a level of the attribute's taxonomy below the root)")
                self.depths_[name] = int(depth)
                out += [f"{name}={label}" for label in tax.labels(int(depth))]
                continue
            if attr.kind == "categorical":
                out += [f"{name}={c}" for c in attr.categories]
                continue
            if name in cuts:
                inner = np.asarray(sorted(float(c) for c in cuts[name]))
                inner = inner[(inner > attr.lower) & (inner < attr.upper)]
                edges = np.concatenate([[attr.lower], inner, [attr.upper]])
            elif self.n_bins is None and attr.taxonomy is not None:
                # the taxonomy's leaves, with its own rule: (lo, hi], first leaf closed
                tax = attr.taxonomy
                self.edges_[name] = np.asarray(tax.edges(tax.height - 1), dtype=float)
                self.leaf_columns_.append(name)
                out += [f"{name}={label}" for label in tax.labels(tax.height - 1)]
                continue
            else:
                edges = np.linspace(attr.lower, attr.upper, (self.n_bins or 4) + 1)
            self.edges_[name] = edges
            out += [f"{name}=[{format_number(lo)}, {format_number(hi)}{']' if j == len(edges) - 2 else ')'}"
                    for j, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))]
        self.columns_ = names
        self.feature_names_out_ = np.asarray(out, dtype=object)
        if frame is not None:
            schema.check_columns(list(frame.columns), "X columns")
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """0/1 indicator DataFrame (int8), one column per category / interval."""
        check_is_fitted(self, "columns_")
        X = self._as_frame(X, reset=False)
        if len(X) == 0:
            raise ValueError(rule_message("empty"))
        missing = [c for c in self.columns_ if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks column(s) {missing}")
        blocks = []
        for name in self.columns_:
            attr = self.schema_.attributes[name]
            attr.validate(X[name])
            if name in self.depths_:
                tax, depth = attr.taxonomy, self.depths_[name]
                codes = tax.node_codes(tax.leaf_codes(X[name].to_numpy()), depth)
                blocks.append(codes[:, None] == np.arange(tax.level_sizes[depth])[None, :])
            elif name in self.leaf_columns_:
                tax = attr.taxonomy
                codes = tax.leaf_codes(X[name].to_numpy())
                blocks.append(codes[:, None] == np.arange(tax.n_leaves)[None, :])
            elif attr.kind == "categorical":
                values = X[name].astype(str).to_numpy()
                blocks.append(values[:, None] == np.asarray(attr.categories, dtype=object)[None, :])
            else:
                edges = self.edges_[name]
                v = X[name].to_numpy(dtype=float)
                idx = np.clip(np.searchsorted(edges[1:-1], v, side="right"), 0, len(edges) - 2)
                blocks.append(idx[:, None] == np.arange(len(edges) - 1)[None, :])
        data = np.concatenate(blocks, axis=1).astype(np.int8)
        return pd.DataFrame(data, columns=list(self.feature_names_out_), index=X.index)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names ``"attr=category"`` / ``"attr=[lo, hi)"`` of the output columns."""
        check_is_fitted(self, "columns_")
        return self.feature_names_out_.copy()


# =========================================================================== count table → 0/1 matrix
def binarize_table(table: CountTable, binarizer: Binarizer | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A :class:`~dpexplore.counts.CountTable` as weighted 0/1 records: ``(matrix, class_codes, weights)``.

    ``matrix`` (int8, shape (m, D)) holds ``binarizer.transform`` of each occupied cell, one row
    per cell (m = occupied cells, private); ``class_codes`` (int64) the class positions in
    ``table.schema.classes``; ``weights`` (int64) the cell counts (**private**). Any count over
    records of the binarised table is the weighted sum over these rows — e.g. on-counts per class
    ``(onehot(class_codes) * weights).T @ matrix`` — at a cost in m, not in rows.

    ``binarizer`` (default ``Binarizer(table.schema)``) must be a function of the leaf codes: its
    schema must declare the table's attributes with the same domains, categorical columns and
    ``depths`` are fine, numeric columns must use their taxonomy leaves (``cut_points`` and
    ``n_bins`` need the raw values and are refused). It is fitted (no data read) when it is not.
    Columns come out in the binarizer's order (``get_feature_names_out()``).
    """
    if not isinstance(table, CountTable):
        raise TypeError(f"table must be a dpexplore CountTable (source.count_table()), got {type(table).__name__}")
    schema = table.schema
    if binarizer is None:
        binarizer = Binarizer(schema)
    if not isinstance(binarizer, Binarizer):
        raise TypeError(f"binarizer must be a dpexplore Binarizer, got {type(binarizer).__name__}")
    if "columns_" not in binarizer.__dict__:
        if binarizer.schema is None:
            raise ValueError("binarizer needs the public schema: Binarizer(source.schema) (without one it "
                             "reads the domain from records, which a count table does not hold)")
        binarizer = clone(binarizer).fit()
    used = binarizer.schema_
    for name in binarizer.columns_:
        if name not in schema.attributes:
            raise ValueError(f"the binarizer encodes {name!r}, which the count table does not hold "
                             f"(its predictors: {schema.predictors})")
        if used[name].to_dict() != schema[name].to_dict():
            raise ValueError(f"the binarizer's schema declares {name!r} differently from the count table's "
                             "schema: build it as Binarizer(source.schema, ...)")
        if name in binarizer.edges_ and name not in binarizer.leaf_columns_:
            raise ValueError(f"numeric column {name!r} is binarised on cut_points/n_bins, which need the raw "
                             "values: from a count table numeric columns use their taxonomy leaves (drop "
                             f"cut_points/n_bins for it) or a level of the taxonomy (depths={{{name!r}: d}})")
    m = table.counts.shape[0]
    offset = 0
    rows = np.arange(m)
    index = np.empty((m, len(binarizer.columns_)), dtype=np.int64)
    for j, name in enumerate(binarizer.columns_):
        attr, leaves = schema[name], table.leaf_codes[name]
        tax = attr.taxonomy
        if name in binarizer.depths_:
            depth = binarizer.depths_[name]
            idx, width = tax.node_codes(leaves, depth), tax.level_sizes[depth]
        elif attr.kind == "categorical":
            # leaf position → category position (a leaf that is not a declared category cannot
            # occur: the engines refuse such values before counting)
            position = {c: i for i, c in enumerate(attr.categories)}
            lookup = np.asarray([position.get(str(leaf), -1) for leaf in tax.leaves], dtype=np.int64)
            idx, width = lookup[leaves], len(attr.categories)
            if idx.size and idx.min() < 0:
                raise ValueError(f"column {name!r}: the count table holds a taxonomy leaf that is not a declared "
                                 "category")
        else:
            idx, width = leaves, tax.n_leaves
        index[:, j] = offset + np.asarray(idx, dtype=np.int64)
        offset += width
    if offset != len(binarizer.feature_names_out_):   # a broken invariant, not bad input
        raise RuntimeError("binarize_table: column count differs from the binarizer's output")
    matrix = np.zeros((m, offset), dtype=np.int8)
    for j in range(index.shape[1]):
        matrix[rows, index[:, j]] = 1
    return matrix, table.class_codes.astype(np.int64, copy=True), table.counts.astype(np.int64, copy=True)


# =========================================================================== design matrix
def design_matrix(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """The schema's predictors of ``X`` as a float matrix with every entry in [0, 1].

    Numeric columns: ``(x − lower) / (upper − lower)`` with the public bounds, clipped to [0, 1]
    (one column each). Categorical columns: one indicator per public category, in the schema's
    order, matched by the value's text; a value outside the categories gets no indicator at all
    (an all-zero block), never another category's. Nothing is read from the data to build the
    columns, so the encoding is a per-record public map (post-processing-safe; the bounded rows
    are what Chaudhuri et al. 2011, §2 need). ``X`` is not modified.

    >>> from dpexplore.domain import Attribute, Schema
    >>> schema = Schema([Attribute.numeric("age", 0, 100), Attribute.categorical("colour", ["red", "blue"])],
    ...                 "y", ["no", "yes"])
    >>> design_matrix(pd.DataFrame({"age": [25, 150], "colour": ["blue", "UNSEEN"]}), schema)
    array([[0.25, 0.  , 1.  ],
           [1.  , 0.  , 0.  ]])
    """
    check_schema(schema, taxonomies=False)
    blocks = []
    for name in schema.predictors:
        attr = schema[name]
        if attr.kind == "numeric":
            u = (X[name].to_numpy(dtype=float) - attr.lower) / (attr.upper - attr.lower)
            blocks.append(np.clip(u, 0, 1)[:, None])
        else:
            codes = pd.Index([str(c) for c in attr.categories], dtype=object).get_indexer(
                np.asarray(X[name].astype(str), dtype=object))
            # an unknown value: get_indexer gives -1, which must not index the last category
            onehot = np.zeros((len(codes), len(attr.categories)))
            known = codes >= 0
            onehot[np.flatnonzero(known), codes[known]] = 1.0
            blocks.append(onehot)
    return np.hstack(blocks)
