"""The histogram classifier: predict the class with the largest (noisy) count in a record's cell.

A *grid* fixes one taxonomy depth per attribute (depth 0 = root = the attribute is ignored); its
cells are the Cartesian product of the nodes at those depths, numbered in mixed radix exactly as
:class:`dpexplore.histogram.LevelCodes` numbers them. Given a count table of shape
(n_cells, n_classes) -- true counts (non-private) or a released noisy histogram (DP, and
predicting from it is post-processing) -- a record is generalised to its cell and labelled with
the cell's largest count. Cells whose counts are all ≤ 0 (empty, or noise pushed them below zero)
fall back to the global noisy majority (Su et al. 2018, Alg. 2 lines 21–22; this classifier is what the PrivPfC
grid quality, Su et al. 2018 Def. 4, models).

Test records may hold raw values (numbers, leaf categories) or already generalised node labels
(e.g. rows of a synthetic data set): both map to the same cell, so "generalisation of test
records is the same as for the release" (Su et al. 2018, §4.5).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from .._validation import check_frame
from ..inputs import check_release_features, check_release_input, source_classes, source_input
from ..domain import Schema, check_schema, class_values
from ..histogram import cell_codes, class_counts, resolve_grid
from ..limits import DEFAULT_GRID_CELLS

__all__ = ["HistogramClassifier", "check_grid", "default_grid", "generalize"]


def default_grid(schema: Schema, max_cells: int = DEFAULT_GRID_CELLS) -> dict[str, int]:
    """The deepest common depth (clipped to each taxonomy's height) whose grid has at most
    ``max_cells`` cells: a function of the public taxonomies only (depth 1 at least)."""
    heights = [schema[n].taxonomy.height for n in schema.predictors]
    for depth in range(max(heights) - 1, 0, -1):
        grid = {n: min(depth, h - 1) for n, h in zip(schema.predictors, heights)}
        if np.prod([float(schema[n].taxonomy.level_sizes[d]) for n, d in grid.items()]) <= max_cells:
            return grid
    return {n: min(1, h - 1) for n, h in zip(schema.predictors, heights)}


def check_grid(grid: Mapping[str, int] | Sequence[int], schema: Schema) -> dict[str, int]:
    """Return ``grid`` as {predictor: depth} over all of the schema's predictors (missing = 0),
    checked by :func:`dpexplore.histogram.resolve_grid` (one depth per taxonomy, 0..height-1)."""
    check_schema(schema, taxonomies=False)
    names = schema.predictors
    return dict(zip(names, resolve_grid(grid, names, schema)))


def _codes_at(attr, depth: int, values: pd.Series) -> np.ndarray:
    """Node codes at ``depth`` of raw values, or of node labels already at ``depth``."""
    tax = attr.taxonomy
    # categorical: only raw leaf values take the leaf path (pandas deprecates Categorical codes of
    # unknown values, which Taxonomy.leaf_codes relies on to report them). Values are matched by
    # their text, as Taxonomy.leaf_codes does when the table is counted (integer-coded categories
    # 0/1 against leaves "0"/"1"), so fit and predict agree.
    raw = tax.kind != "categorical" or bool(values.astype(str).isin(list(tax.leaves)).all())
    try:
        if not raw:
            raise ValueError("not leaf values")
        return tax.node_codes(tax.leaf_codes(values.astype(str) if tax.kind == "categorical" else values), depth)
    except (ValueError, TypeError):
        labels = {lab: i for i, lab in enumerate(tax.labels(depth))}
        codes = values.astype(str).map(labels)
        if codes.isna().any():
            bad = sorted(set(values[codes.isna()].astype(str)))[:5]
            raise ValueError(f"column {attr.name!r} has value(s) {bad} that are neither in its public "
                             f"domain nor node labels at depth {depth}") from None
        return codes.to_numpy(dtype=np.int32)


def grid_node_codes(X: pd.DataFrame, grid: Mapping[str, int], schema: Schema) -> list[np.ndarray]:
    """Per predictor (schema order), the node code of every row at the grid's depth.

    Attributes at depth 0 are ignored (all rows share the root); their column may hold anything.
    """
    check_frame(X, "X")
    missing = [n for n, d in grid.items() if d > 0 and n not in X.columns]
    if missing:
        raise ValueError(f"X lacks the column(s) {missing} used by the grid")
    out = []
    for n in schema.predictors:
        d = grid[n]
        if d == 0:
            out.append(np.zeros(len(X), dtype=np.int32))
        else:
            out.append(_codes_at(schema[n], d, X[n]))
    return out


def generalize(X: pd.DataFrame, grid: Mapping[str, int] | Sequence[int], schema: Schema) -> pd.DataFrame:
    """Replace every value by its node label at the grid's depth (root label for depth 0).

    This is the representation of PrivPfC's synthetic records, so a model trained on them can be
    applied to ``generalize(X_test, grid, schema)`` (Su et al. 2018, §4.5).
    """
    grid = check_grid(grid, schema)
    codes = grid_node_codes(X, grid, schema)
    data = {n: np.asarray(schema[n].taxonomy.labels(grid[n]), dtype=object)[c]
            for n, c in zip(schema.predictors, codes)}
    return pd.DataFrame(data, index=X.index, columns=schema.predictors)


class HistogramClassifier(ClassifierMixin, BaseEstimator):
    """Argmax-count classifier on the cells of a fixed grid of taxonomy levels.

    Parameters
    ----------
    schema : Schema
        Public schema: taxonomies of the predictors and the class labels.
        None: read from the data at ``fit`` with a :class:`~dpexplore.domain.PrivacyLeakWarning`
        (numeric bounds, categories and classes leak; for exploring only).
    grid : mapping {predictor: depth} or sequence of depths (schema order)
        Depth 0 = root (our numbering; the PrivPfC paper's level ℓ is depth ℓ-1). None: the
        deepest common depth with at most :data:`dpexplore.limits.DEFAULT_GRID_CELLS` cells
        (:func:`default_grid`).

    ``fit(X, y)`` counts the true training data (NOT private: a noise-free baseline). ``X`` is
    a DataFrame or an array (columns ``x0, x1, …``, or the schema's predictors). For a
    private classifier build it from released counts with :meth:`from_counts`.
    Fitted attributes: ``counts_`` (n_cells, n_classes), ``classes_``, ``grid_``,
    ``shape_`` (nodes per predictor), ``default_class_`` (global majority, index).
    """

    def __init__(self, schema: Schema | None = None, grid: Mapping[str, int] | Sequence[int] | None = None):
        self.schema = schema
        self.grid = grid

    # ------------------------------------------------------------------ fitting
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True            # categorical columns may hold strings
        tags.input_tags.categorical = True
        tags.classifier_tags.poor_score = True   # one coarse grid: not meant to be accurate
        return tags

    def _setup(self, schema: Schema, grid, classes: Any = None) -> None:
        if schema is None:
            raise ValueError("HistogramClassifier needs a schema")
        self.grid_ = check_grid(default_grid(schema) if grid is None else grid, schema)
        self.schema_ = schema
        self.shape_ = tuple(schema[n].taxonomy.level_sizes[d] for n, d in self.grid_.items())
        self.n_cells_ = int(np.prod(self.shape_, dtype=np.int64))
        self.classes_ = np.asarray(schema.classes, dtype=object) if classes is None else np.asarray(classes)
        if len(self.classes_) != len(schema.classes):
            raise ValueError(f"classes must hold one label per schema class ({len(schema.classes)}), "
                             f"got {len(self.classes_)}")
        if not hasattr(self, "n_features_in_"):   # from_counts: the schema's predictors
            self.feature_names_in_ = np.asarray(schema.predictors, dtype=object)
            self.n_features_in_ = len(schema.predictors)

    def _set_counts(self, counts: Any) -> "HistogramClassifier":
        counts = np.asarray(counts, dtype=float)
        if counts.shape != (self.n_cells_, len(self.classes_)):
            raise ValueError(f"counts must have shape ({self.n_cells_}, {len(self.classes_)}) for this grid, "
                             f"got {counts.shape}")
        if not np.all(np.isfinite(counts)):
            raise ValueError("counts must be finite")
        self.counts_ = counts
        totals = counts.sum(axis=0)  # noisy class totals: unbiased, the global noisy majority
        prior = np.clip(totals, 0, None)
        self.prior_ = prior / prior.sum() if prior.sum() > 0 else np.full(len(totals), 1 / len(totals))
        self.default_class_ = int(np.argmax(self.prior_))
        return self

    @classmethod
    def from_counts(cls, counts: Any, grid: Mapping[str, int] | Sequence[int], schema: Schema,
                    classes: Any = None) -> "HistogramClassifier":
        """A fitted classifier from a (noisy) count table of shape (n_cells, n_classes).

        ``classes``: the labels predictions return, one per schema class in schema order
        (default: the schema's class strings; see :func:`class_values`).
        """
        clf = cls(schema=schema, grid=grid)
        clf._setup(schema, grid, classes)
        return clf._set_counts(counts)

    def fit(self, X: Any, y: Any = None) -> "HistogramClassifier":
        """Count the training data on the grid. NOT differentially private (a baseline).

        ``fit(X, y)``, or ``fit(source)`` with a :class:`dpexplore.sources.Source`: the grid's
        counts are summed from its CountTable (``classes_`` in the type of its target column)."""
        got = source_input(X, y, self.schema, estimator=self)
        if got is not None:
            table, schema = got
            self._setup(schema, self.grid, source_classes(X, schema))
            return self._set_counts(table.grid_counts([self.grid_.get(n, 0) for n in table.attributes]))
        X, y, schema = check_release_input(X, y, self.schema, estimator=self)
        self._setup(schema, self.grid)
        self.classes_ = class_values(self.schema_.classes, y)   # schema order, y's dtype
        y_codes = self.schema_.encode_target(y)
        cells = cell_codes(grid_node_codes(X, self.grid_, self.schema_), self.shape_)
        return self._set_counts(class_counts(cells, y_codes, self.n_cells_, len(self.classes_)))

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "counts_"):
            raise NotFittedError("this HistogramClassifier is not fitted: call fit() or use from_counts()")

    def cells(self, X: pd.DataFrame) -> np.ndarray:
        """Cell index of every row of ``X`` (raw values or generalised labels)."""
        self._check_fitted()
        return cell_codes(grid_node_codes(X, self.grid_, self.schema_), self.shape_)

    def _cell_labels(self) -> np.ndarray:
        best = np.argmax(self.counts_, axis=1)  # ties: the first class in schema order
        empty = self.counts_.max(axis=1) <= 0
        return np.where(empty, self.default_class_, best)

    def _check_X(self, X: Any) -> pd.DataFrame:
        return check_release_features(self, X, list(self.schema_.predictors))

    def predict(self, X: Any) -> np.ndarray:
        """Class with the largest count in each row's cell (global majority for cells ≤ 0)."""
        self._check_fitted()
        return self.predict_cells(self.cells(self._check_X(X)))

    def predict_cells(self, cells: Any) -> np.ndarray:
        """Predicted class of precomputed cell indices (e.g. from ``LevelCodes.cell_codes``)."""
        self._check_fitted()
        return self.classes_[self._cell_labels()[np.asarray(cells, dtype=np.int64)]]

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Counts clipped at 0 and normalised per cell; empty cells get the global class shares."""
        self._check_fitted()
        pos = np.clip(self.counts_, 0, None)
        total = pos.sum(axis=1, keepdims=True)
        proba = np.where(total > 0, pos / np.where(total > 0, total, 1), self.prior_[None, :])
        return proba[self.cells(self._check_X(X))]

