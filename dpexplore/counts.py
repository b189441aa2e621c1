"""The CountTable: exact counts of a private table over its occupied (leaf codes × class) cells.

Every histogram method needs only counts: per grid cell × class (PrivPfC), per partition and
split candidate (DiffGen, DiffMulti), on k attributes (projected histograms), one- and two-way
(Naive Bayes, count-based feature scores). All of them derive from one sufficient statistic: how
many records fall in each cell of (every predictor's taxonomy *leaf* × class). Only occupied
cells are stored, so the table holds at most min(rows, domain) entries, and it is built once,
by a group-by where the data lives (:mod:`dpexplore.sources`: pandas, DuckDB, Spark).

A method can treat the table as *weighted records*: one record per occupied cell, weight = its
count. Anything computed by summing over records (a bincount, a histogram on a coarser grid,
counts inside a partition) is the same on the weighted cells, and costs O(occupied cells) instead
of O(rows).

Privacy: the counts, the record count :attr:`CountTable.n_records` and the number of occupied
cells are all *private*. Nothing here prints them (the ``repr`` shows only public facts); a
method must noise them through the accountant before anything leaves it.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ._validation import check_target, rule_message
from .domain import Schema, check_schema
from .histogram import cell_codes, resolve_grid
from .limits import MAX_DENSE_ENTRIES

__all__ = ["CountTable", "group_counts", "leaf_labels"]


def leaf_labels(schema: Schema, leaf_codes: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The leaf label of each code, for the columns of the schema's rules and their sources
    (:attr:`~dpexplore.domain.Schema.rules`): what :meth:`~dpexplore.domain.Schema.rule_breaks`
    reads. Codes must be leaf codes (≥ 0)."""
    names = dict.fromkeys([*schema.rules, *schema.rules.values()])
    return {n: np.asarray(schema[n].taxonomy.leaves, dtype=object)[np.asarray(leaf_codes[n], dtype=np.int64)]
            for n in names}


def group_counts(columns: Sequence[np.ndarray], sizes: Sequence[int],
                 weights: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Sum ``weights`` (1 per row by default) per distinct tuple of integer codes.

    ``columns[i]`` holds codes in ``0..sizes[i]-1``. Returns the distinct tuples in lexicographic
    order (one array per column, int64) and their summed weights (int64); tuples whose sum is 0
    are dropped. One ``np.unique`` over a mixed-radix key when it fits in int64, else a lexsort.
    """
    cols = [np.asarray(c, dtype=np.int64) for c in columns]
    n = len(cols[0]) if cols else 0
    w = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    sizes = [max(int(s), 1) for s in sizes]
    if n == 0:
        return [np.zeros(0, dtype=np.int64) for _ in cols], np.zeros(0, dtype=np.int64)
    if np.prod([float(s) for s in sizes]) < 2.0 ** 62:
        key = np.zeros(n, dtype=np.int64)
        for c, s in zip(cols, sizes):
            key *= s
            key += c
        uniq, inverse = np.unique(key, return_inverse=True)
        sums = np.bincount(inverse.ravel(), weights=w, minlength=uniq.size)
        sums = np.rint(sums).astype(np.int64) if sums.dtype.kind == "f" else sums.astype(np.int64)
        out, rest = [], uniq
        for s in reversed(sizes):
            rest, digit = np.divmod(rest, s)
            out.append(digit)
        out.reverse()
    else:  # a domain too large to number in int64: sort the code columns themselves
        order = np.lexsort(cols[::-1])
        sorted_cols = [c[order] for c in cols]
        change = np.zeros(n, dtype=bool)
        change[0] = True
        for c in sorted_cols:
            change[1:] |= c[1:] != c[:-1]
        starts = np.flatnonzero(change)
        sums = np.add.reduceat(w[order], starts).astype(np.int64)
        out = [c[starts] for c in sorted_cols]
    keep = sums != 0
    return [o[keep] for o in out], sums[keep]


class Marginal(NamedTuple):
    """Counts over some attributes at some taxonomy depths (occupied cells only).

    ``codes[a]`` is the node code at ``depths[a]`` of each occupied (cell, class); ``shape`` the
    number of nodes per attribute. Private, like the table it came from.
    """

    codes: dict[str, np.ndarray]
    class_codes: np.ndarray
    counts: np.ndarray
    depths: dict[str, int]
    shape: tuple[int, ...]


class CountTable:
    """Exact counts over the occupied (leaf code per predictor × class) cells of a private table.

    Stored as columnar arrays of one length ``m`` (the number of occupied cells, private),
    in canonical order: lexicographic by (leaf codes in schema order, class code). Two tables
    built from the same records by any engine are therefore equal array for array
    (:meth:`equals`, ``==``).

    Attributes
    ----------
    schema : Schema
        The public schema; every predictor has a taxonomy.
    leaf_codes : dict[str, ndarray of int32, shape (m,)]
        Taxonomy leaf index of each occupied cell, per predictor.
    class_codes : ndarray of int64, shape (m,)
        Position of the class in ``schema.classes``.
    counts : ndarray of int64, shape (m,)
        Number of records in the cell (all > 0). **Private.**
    """

    __hash__ = None  # mutable arrays: equality, not identity, is what tests compare

    def __init__(self, schema: Schema, leaf_codes: Mapping[str, Any], class_codes: Any, counts: Any):
        schema = check_schema(schema)
        names = schema.predictors
        if not isinstance(leaf_codes, Mapping) or list(leaf_codes) != names:
            got = list(leaf_codes) if isinstance(leaf_codes, Mapping) else type(leaf_codes).__name__
            raise ValueError(f"leaf_codes must map every predictor of the schema, in schema order {names}; got {got}")
        cols = [np.asarray(leaf_codes[n]) for n in names] + [np.asarray(class_codes)]
        w = np.asarray(counts)
        m = w.shape[0] if w.ndim == 1 else -1
        for label, c in zip(names + ["class_codes", "counts"], cols + [w]):
            if c.ndim != 1 or c.shape[0] != m:
                raise ValueError(f"{label} must be a 1-D array with one entry per cell (like counts)")
            if c.size and c.dtype.kind not in "iu":
                raise ValueError(f"{label} must hold integers, got dtype {c.dtype}")
        sizes = [schema[n].taxonomy.n_leaves for n in names] + [schema.n_classes]
        for label, c, s in zip(names + ["class_codes"], cols, sizes):
            if c.size and (c.min() < 0 or c.max() >= s):
                raise ValueError(f"{label} must lie in 0..{s - 1}")
        if w.size and w.min() < 0:
            raise ValueError("counts must be ≥ 0")
        # canonical form: merged duplicates, no empty cells, lexicographic order
        grouped, sums = group_counts(cols, sizes, w)
        self.schema = schema
        self.leaf_codes: dict[str, np.ndarray] = {n: g.astype(np.int32) for n, g in zip(names, grouped[:-1])}
        self.class_codes: np.ndarray = grouped[-1].astype(np.int64)
        self.counts: np.ndarray = sums.astype(np.int64)
        schema.check_rules(leaf_labels(schema, self.leaf_codes))   # a cell that breaks a declared rule

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_codes(cls, schema: Schema, leaf_codes: Mapping[str, Any], class_codes: Any,
                   weights: Any = None) -> "CountTable":
        """Count per-record codes (one entry per record; ``weights`` default to 1)."""
        schema = check_schema(schema)
        y = np.asarray(class_codes)
        w = np.ones(y.shape[0], dtype=np.int64) if weights is None else np.asarray(weights)
        return cls(schema, {n: leaf_codes[n] for n in schema.predictors}, y, w)

    @classmethod
    def from_frame(cls, X: pd.DataFrame, y: Any, schema: Schema) -> "CountTable":
        """The pandas path: validate ``X``/``y`` against ``schema`` and count (in memory).

        Same checks and messages as every method's ``fit(X, y)``.
        """
        schema = check_schema(schema)
        schema.validate(X, None)
        _check_labels(y, len(X), schema)
        codes = schema.leaf_codes(X)
        return cls.from_codes(schema, codes, schema.encode_target(y))

    # ------------------------------------------------------------------ basic facts
    @property
    def attributes(self) -> list[str]:
        """The predictors, in schema order (public)."""
        return self.schema.predictors

    @property
    def n_records(self) -> int:
        """Number of records counted. **Private**: never print it or use it unnoised."""
        return int(self.counts.sum())

    @property
    def n_occupied(self) -> int:
        """Number of occupied (cell, class) entries. **Private** (occupancy reveals the data)."""
        return int(self.counts.shape[0])

    @property
    def leaf_shape(self) -> tuple[int, ...]:
        """Number of taxonomy leaves per predictor (public)."""
        return tuple(self.schema[n].taxonomy.n_leaves for n in self.attributes)

    def __repr__(self) -> str:  # public facts only: no record count, no occupancy
        return (f"CountTable({len(self.attributes)} predictors, {self.schema.n_classes} classes, "
                f"target {self.schema.target!r})")

    def equals(self, other: Any) -> bool:
        """Same schema (as a dict) and the same arrays, in the same order."""
        if not isinstance(other, CountTable):
            return False
        return (self.schema.to_dict() == other.schema.to_dict()
                and all(np.array_equal(self.leaf_codes[n], other.leaf_codes[n]) for n in self.attributes)
                and np.array_equal(self.class_codes, other.class_codes)
                and np.array_equal(self.counts, other.counts))

    def __eq__(self, other: Any) -> bool:
        return self.equals(other) if isinstance(other, CountTable) else NotImplemented

    # ------------------------------------------------------------------ derived views
    def _names(self, attributes: Sequence[str] | None) -> list[str]:
        if attributes is None:
            return self.attributes
        if isinstance(attributes, str):
            attributes = [attributes]
        names = self.schema.check_columns(attributes, "attributes")
        if len(set(names)) != len(names):
            raise ValueError(f"attributes must be distinct, got {names}")
        return names

    def _depths(self, names: list[str], depths: Sequence[int] | Mapping[str, int] | None) -> dict[str, int]:
        """Omitted attributes at their leaves (:func:`~dpexplore.histogram.resolve_grid`)."""
        return dict(zip(names, resolve_grid(depths, names, self.schema, missing="leaf", name="depths")))

    def node_codes(self, attribute: str, depth: int) -> np.ndarray:
        """Node code at ``depth`` of each occupied cell's ``attribute`` (one array lookup)."""
        name = self._names([attribute])[0]
        return self.schema[name].taxonomy.node_codes(self.leaf_codes[name], depth).astype(np.int32)

    def cell_codes(self, grid: Sequence[int] | Mapping[str, int], attributes: Sequence[str] | None = None) -> np.ndarray:
        """Cell index on ``grid`` of each occupied cell: mixed radix, C order, exactly as
        :meth:`dpexplore.histogram.LevelCodes.cell_codes` numbers the records' cells.

        ``grid`` gives one depth per attribute (a mapping defaults missing attributes to depth 0,
        as ``LevelCodes`` does)."""
        names = self._names(attributes)
        depths = dict(zip(names, resolve_grid(grid, names, self.schema)))
        shape = [self.schema[n].taxonomy.level_sizes[depths[n]] for n in names]
        return cell_codes([self.node_codes(n, depths[n]) for n in names], shape)

    def grid_counts(self, grid: Sequence[int] | Mapping[str, int], attributes: Sequence[str] | None = None) -> np.ndarray:
        """Dense counts per (grid cell, class), shape (n_cells, n_classes), empty cells included.

        Equal to ``histogram.class_counts(LevelCodes(X, schema).cell_codes(grid), y, ...)`` on the
        records, at a cost that depends on the occupied cells only.
        """
        names = self._names(attributes)
        cells = self.cell_codes(grid, names)
        g = resolve_grid(grid, names, self.schema)
        n_cells = int(np.prod([float(self.schema[n].taxonomy.level_sizes[d]) for n, d in zip(names, g)]))
        k = self.schema.n_classes
        if n_cells * k > MAX_DENSE_ENTRIES:
            raise ValueError(f"a dense histogram of {n_cells:,} cells × {k} classes is too large; "
                             "use marginal() (occupied cells only)")
        flat = np.bincount(cells * k + self.class_codes, weights=self.counts, minlength=n_cells * k)
        return np.rint(flat).astype(np.int64).reshape(n_cells, k)

    def marginal(self, attributes: Sequence[str] | None = None,
                 depths: Sequence[int] | Mapping[str, int] | None = None) -> Marginal:
        """Counts over ``attributes`` (default all) at ``depths`` (default: the leaves), × class.

        Occupied cells only, in lexicographic order of (node codes, class). For a dense array use
        :meth:`dense`.
        """
        names = self._names(attributes)
        d = self._depths(names, depths)
        cols = [self.node_codes(n, d[n]) for n in names] + [self.class_codes]
        shape = tuple(self.schema[n].taxonomy.level_sizes[d[n]] for n in names)
        grouped, sums = group_counts(cols, list(shape) + [self.schema.n_classes], self.counts)
        codes = {n: g.astype(np.int32) for n, g in zip(names, grouped[:-1])}
        return Marginal(codes, grouped[-1], sums, d, shape)

    def dense(self, attributes: Sequence[str] | None = None,
              depths: Sequence[int] | Mapping[str, int] | None = None, *, max_entries: int = 10_000_000) -> np.ndarray:
        """Counts as a dense array of shape (*nodes per attribute, n_classes), zeros included."""
        names = self._names(attributes)
        d = self._depths(names, depths)
        shape = tuple(self.schema[n].taxonomy.level_sizes[d[n]] for n in names) + (self.schema.n_classes,)
        if np.prod([float(s) for s in shape]) > max_entries:
            raise ValueError(f"a dense array of shape {shape} exceeds max_entries={max_entries:,}; "
                             "use marginal() (occupied cells only) or raise max_entries")
        out = np.zeros(shape, dtype=np.int64)
        idx = tuple(self.node_codes(n, d[n]) for n in names) + (self.class_codes,)
        np.add.at(out, idx, self.counts)
        return out

    def class_totals(self) -> np.ndarray:
        """Count per class, shape (n_classes,), in schema order. **Private.**"""
        return np.bincount(self.class_codes, weights=self.counts,
                           minlength=self.schema.n_classes).round().astype(np.int64)

    # ------------------------------------------------------------------ partitions
    def restrict(self, mask: Any) -> "CountTable":
        """The sub-table of the occupied cells where ``mask`` (bool, one per cell) is True."""
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != self.counts.shape:
            raise ValueError("mask must be a boolean array with one entry per occupied cell "
                             "(build it from leaf_codes / node_codes / class_codes)")
        return self._subset(mask)

    def _subset(self, index: np.ndarray) -> "CountTable":
        new = object.__new__(CountTable)
        new.schema = self.schema
        new.leaf_codes = {n: c[index] for n, c in self.leaf_codes.items()}
        new.class_codes = self.class_codes[index]
        new.counts = self.counts[index]
        return new  # a subset of a canonical table is canonical

    def where(self, **leaves: Sequence[int]) -> "CountTable":
        """Cells whose leaf code of each named attribute is among the given leaf indices."""
        mask = np.ones(self.counts.shape, dtype=bool)
        for name, allowed in leaves.items():
            self._names([name])
            mask &= np.isin(self.leaf_codes[name], np.asarray(list(allowed), dtype=np.int64))
        return self._subset(mask)

    def partition(self, attribute: str, depth: int) -> list["CountTable"]:
        """One sub-table per node of ``attribute`` at ``depth`` (empty ones included: the list
        has the public length ``level_sizes[depth]``)."""
        codes = self.node_codes(attribute, depth)
        n_nodes = self.schema[attribute].taxonomy.level_sizes[depth]
        order = np.argsort(codes, kind="stable")  # keeps the canonical order inside each part
        bounds = np.searchsorted(codes[order], np.arange(n_nodes + 1))
        return [self._subset(np.sort(order[bounds[i]:bounds[i + 1]])) for i in range(n_nodes)]

    def project(self, attributes: Sequence[str]) -> "CountTable":
        """The count table of the same records on a subset of the predictors (schema.subset)."""
        names = self._names(attributes)
        grouped, sums = group_counts([self.leaf_codes[n] for n in names] + [self.class_codes],
                                     [self.schema[n].taxonomy.n_leaves for n in names] + [self.schema.n_classes],
                                     self.counts)
        new = object.__new__(CountTable)
        new.schema = self.schema.subset(names)
        new.leaf_codes = {n: g.astype(np.int32) for n, g in zip(names, grouped[:-1])}
        new.class_codes = grouped[-1].astype(np.int64)
        new.counts = sums
        return new

    # ------------------------------------------------------------------ as weighted records
    def representative_values(self, attribute: str) -> np.ndarray:
        """One raw value per leaf of ``attribute`` that its taxonomy maps back to that leaf.

        Categorical: the leaf text. Numeric: the leaf interval's upper edge, clipped to the
        attribute's public range (leaves are (a, b], the first [a, b]; an occupied leaf holds a
        value ≤ upper, so the clipped edge stays inside it). Integer attributes keep int64 when
        every value is whole.
        """
        name = self._names([attribute])[0]
        attr, tax = self.schema[name], self.schema[name].taxonomy
        if tax.kind == "categorical":
            return np.asarray(tax.leaves, dtype=object)
        high = tax.intervals(tax.height - 1)[:, 1]
        values = np.minimum(high, attr.upper) if attr.upper is not None else high
        if attr.lower is not None:
            values = np.maximum(values, attr.lower)
        if attr.integer and np.all(values == np.floor(values)):
            return values.astype(np.int64)
        return values

    def as_weighted_frame(self, weight: str = "weight") -> pd.DataFrame:
        """The table as weighted records: one row per occupied cell.

        Columns: each predictor (a representative value of the leaf, see
        :meth:`representative_values`), the target (class label text) and ``weight`` (the count).
        ``schema.leaf_codes`` of this frame gives back :attr:`leaf_codes` exactly, so any method
        that sums over records gives the same result on it with ``sample_weight=weight``.
        The weights are **private** counts.
        """
        if weight in self.attributes or weight == self.schema.target:
            raise ValueError(f"weight={weight!r} is already a column of the schema; pick another name")
        data: dict[str, Any] = {n: self.representative_values(n)[self.leaf_codes[n]] for n in self.attributes}
        data[self.schema.target] = np.asarray(self.schema.classes, dtype=object)[self.class_codes]
        data[weight] = self.counts.copy()
        return pd.DataFrame(data)


def _check_labels(y: Any, n_rows: int, schema: Schema) -> None:
    """The target checks of the pandas path (same messages), without its "≥ 2 classes occur"
    rule: which classes occur is private, and the table keeps the declared classes."""
    s = check_target(y, "y", min_classes=1)
    if len(s) != n_rows:
        raise ValueError("X and y have different numbers of rows: pass the labels of the same records")
    if not s.astype(str).isin(schema.classes).all():
        raise ValueError(rule_message("class", schema.target, classes=schema.classes))
