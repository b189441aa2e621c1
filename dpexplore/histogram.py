"""Counting records on a grid of taxonomy levels, adding noise, and turning counts into rows.

A *grid* picks one depth per attribute; its cells are the Cartesian product of the nodes at
those depths (PrivPfC Def. 2–3). Cells are numbered in mixed radix (C order), so counting a
table on a grid is one ``numpy.bincount`` over ``cell * n_classes + class``.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import mechanisms
from ._validation import RandomState, check_random_state
from .domain import Attribute, Schema, Taxonomy
from .limits import MAX_DENSE_ENTRIES, MAX_SYNTHETIC_ROWS
from .sensitivity import sum_sensitivity

__all__ = ["MAX_SYNTHETIC_ROWS", "LevelCodes", "resolve_grid", "cell_codes", "decode_cells", "class_counts",
           "sparse_class_counts", "noisy_counts", "synthetic_from_counts", "sample_within"]

Grid = Sequence[int] | Mapping[str, int]


def resolve_grid(grid: Grid | None, names: Iterable[str], schema: Schema, *, missing: str = "root",
                 name: str = "grid") -> list[int]:
    """One taxonomy depth per attribute of ``names`` (in that order): a grid picks one level of
    each attribute's taxonomy (Su et al. 2018, Def. 2).

    ``grid`` is a sequence with one depth per attribute, or a mapping {attribute: depth} whose
    omitted attributes get depth 0 (``missing="root"``) or their leaf depth (``missing="leaf"``);
    ``None`` omits every attribute. Every depth must be an integer in 0..height-1. Errors name
    ``name``, the attribute and the rule (public facts only).
    """
    if missing not in ("root", "leaf"):
        raise ValueError(f"missing must be 'root' or 'leaf', got {missing!r}")
    names = list(names)
    taxes: list[Taxonomy] = []
    for a in names:
        taxes.append(schema.taxonomy_of(a))
    if grid is None or isinstance(grid, Mapping):
        given = {} if grid is None else grid
        unknown = [k for k in given if k not in names]
        if unknown:
            raise ValueError(f"{name}: unknown column(s) {unknown}; the attributes are {names}")
        raw = [given.get(a, 0 if missing == "root" else tax.height - 1) for a, tax in zip(names, taxes)]
    else:
        raw = list(grid)
        if len(raw) != len(names):
            raise ValueError(f"{name} needs one depth per predictor ({len(names)}: {names}), got {len(raw)}")
    depths = []
    for a, tax, d in zip(names, taxes, raw):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or not 0 <= d < tax.height:
            raise ValueError(f"{name}: depth of {a!r} must be an integer in 0..{tax.height - 1}, got {d!r}")
        depths.append(int(d))
    return depths


class LevelCodes:
    """Per-attribute, per-depth node codes of a table, computed once and reused for every grid.

    Validates ``X`` against ``schema`` on construction (clear errors for unknown columns, NaN,
    values outside the public domain).
    """

    def __init__(self, X: pd.DataFrame, schema: Schema, attributes: Sequence[str] | None = None):
        names = schema.predictors if attributes is None else schema.check_columns(attributes, "attributes")
        schema.subset(names).validate(X[names] if set(names) <= set(X.columns) else X)
        self.schema = schema
        self.attributes: list[str] = list(names)
        self.n_rows = len(X)
        leaves = schema.leaf_codes(X, names)
        self._codes: dict[str, list[np.ndarray]] = {}
        self.level_sizes: dict[str, tuple[int, ...]] = {}
        for n in names:
            tax = schema[n].taxonomy
            dtype = np.int32
            self._codes[n] = [tax.node_codes(leaves[n], d).astype(dtype) for d in range(tax.height)]
            self.level_sizes[n] = tax.level_sizes

    @classmethod
    def from_table(cls, table: Any, attributes: Sequence[str] | None = None) -> "LevelCodes":
        """The node codes of a :class:`~dpexplore.counts.CountTable`'s occupied cells (one "row"
        per cell: weight them by ``table.counts``). No record is read: the table is already
        validated, and its leaf codes are what ``Schema.leaf_codes`` gives on the records."""
        schema = table.schema
        names = schema.predictors if attributes is None else schema.check_columns(attributes, "attributes")
        self = object.__new__(cls)
        self.schema = schema
        self.attributes = list(names)
        self.n_rows = int(table.counts.shape[0])  # occupied cells (private), not records
        self._codes, self.level_sizes = {}, {}
        for n in names:
            tax = schema[n].taxonomy
            self._codes[n] = [tax.node_codes(table.leaf_codes[n], d).astype(np.int32) for d in range(tax.height)]
            self.level_sizes[n] = tax.level_sizes
        return self

    def codes(self, attribute: str, depth: int) -> np.ndarray:
        """Node code of every row for ``attribute`` generalised to ``depth``."""
        return self._codes[attribute][depth]

    def grid_shape(self, grid: Grid) -> tuple[int, ...]:
        """Number of nodes per attribute at the grid's depths (:func:`resolve_grid`)."""
        depths = resolve_grid(grid, self.attributes, self.schema)
        return tuple(self.level_sizes[a][d] for a, d in zip(self.attributes, depths))

    def cell_codes(self, grid: Grid) -> np.ndarray:
        """Cell index of every row on ``grid`` (mixed radix, C order; :func:`resolve_grid`)."""
        depths = resolve_grid(grid, self.attributes, self.schema)
        shape = tuple(self.level_sizes[a][d] for a, d in zip(self.attributes, depths))
        return cell_codes([self._codes[a][d] for a, d in zip(self.attributes, depths)], shape)


def cell_codes(level_codes: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
    """Combine per-attribute node codes into one cell index (mixed radix, C order)."""
    if len(level_codes) != len(shape):
        raise ValueError("need one code array per grid dimension")
    sizes = [int(s) for s in shape]
    if any(s < 1 for s in sizes):
        raise ValueError(f"shape must hold positive sizes, got {tuple(shape)}")
    if np.prod([float(s) for s in sizes]) >= 2.0 ** 63:
        raise ValueError(f"a grid of shape {tuple(sizes)} has too many cells to number in int64")
    n = len(level_codes[0]) if level_codes else 0
    out = np.zeros(n, dtype=np.int64)
    for dim, (codes, size) in enumerate(zip(level_codes, sizes)):
        codes = np.asarray(codes)
        if codes.shape != (n,):
            raise ValueError(f"level_codes[{dim}] has shape {codes.shape}, expected ({n},)")
        if n and (codes.min() < 0 or codes.max() >= size):
            raise ValueError(f"level_codes[{dim}] must lie in 0..{size - 1} (the grid's size there)")
        if size > 1:  # depth-0 dimensions (one node) do not change the cell
            out *= size
            out += codes
    return out


def decode_cells(cells: Any, shape: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Per-dimension node codes of cell indices (inverse of :func:`cell_codes`)."""
    return np.unravel_index(np.asarray(cells, dtype=np.int64), tuple(int(s) for s in shape))


def class_counts(cells: np.ndarray, y_codes: np.ndarray, n_cells: int, n_classes: int) -> np.ndarray:
    """True counts per (cell, class), shape (n_cells, n_classes), empty cells included.

    One ``numpy.bincount`` over ``cell * n_classes + class``. For grids too large to hold densely
    use :func:`sparse_class_counts`.
    """
    n_cells, n_classes = int(n_cells), int(n_classes)
    if n_cells < 1 or n_classes < 1:
        raise ValueError(f"n_cells and n_classes must be ≥ 1, got {n_cells} and {n_classes}")
    if n_cells * n_classes > MAX_DENSE_ENTRIES:
        raise ValueError(f"a dense histogram of {n_cells:,} cells × {n_classes} classes is too large; "
                         "use sparse_class_counts (non-empty cells only)")
    cells, y = _check_cells_and_classes(cells, y_codes, n_classes, n_cells)
    key = cells * n_classes + y
    return np.bincount(key, minlength=n_cells * n_classes).reshape(n_cells, n_classes)


def _check_cells_and_classes(cells: Any, y_codes: Any, n_classes: int,
                             n_cells: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Both as int64 arrays of one length, each inside its range: a class code ≥ n_classes would
    otherwise be counted silently in the next cell."""
    c, y = np.asarray(cells), np.asarray(y_codes)
    if c.ndim != 1 or y.ndim != 1 or c.shape != y.shape:
        raise ValueError(f"cells and y_codes must be 1-D of one length, got shapes {c.shape} and {y.shape}")
    for arr, name in ((c, "cells"), (y, "y_codes")):
        if arr.size and arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integer codes, got dtype {arr.dtype}")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y_codes must lie in 0..{n_classes - 1} (n_classes = {n_classes})")
    if c.size and (c.min() < 0 or (n_cells is not None and c.max() >= n_cells)):
        bound = "" if n_cells is None else f"..{n_cells - 1}"
        raise ValueError(f"cells must lie in 0{bound}")
    return c.astype(np.int64, copy=False), y.astype(np.int64, copy=False)


def sparse_class_counts(cells: np.ndarray, y_codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the non-empty cells only: (sorted cell indices, counts of shape (m, n_classes)).

    For grids with more cells than rows (e.g. every attribute at its leaves). Releasing such a
    histogram privately still needs every cell, empty ones included: see the sparse release in
    :mod:`dpexplore.publish.projected` (Vinterbo 2012, §2.1; the sparse construction is ours).
    """
    cells, y = _check_cells_and_classes(cells, y_codes, int(n_classes))
    unique, inverse = np.unique(cells, return_inverse=True)
    counts = np.bincount(inverse * int(n_classes) + y, minlength=unique.size * int(n_classes))
    return unique, counts.reshape(unique.size, int(n_classes))


def noisy_counts(counts: Any, *, epsilon: float, mechanism: str = "laplace",
                 random_state: RandomState = None) -> np.ndarray:
    """Counts with noise on every entry, empty ones included (never only the non-zero ones).

    Under add/remove-one neighbours the whole (cell × class) count vector, a histogram over a
    partition of the records, has L1 sensitivity 1 (:func:`~dpexplore.sensitivity.sum_sensitivity`),
    so ε-DP needs Laplace(1/ε) (or two-sided geometric with α = e^-ε) on each entry. The caller
    records ``epsilon`` with its BudgetAccountant.
    """
    if mechanism not in ("laplace", "geometric"):
        raise ValueError(f"mechanism must be 'laplace' or 'geometric', got {mechanism!r}")
    delta = sum_sensitivity()
    if mechanism == "laplace":
        return mechanisms.laplace(np.asarray(counts), epsilon=epsilon, sensitivity=delta,
                                  random_state=random_state)
    return mechanisms.geometric(np.asarray(counts), epsilon=epsilon, sensitivity=delta,
                                random_state=random_state).astype(float)


def synthetic_from_counts(counts: Any, grid: Grid, schema: Schema,
                          attributes: Sequence[str] | None = None, *, values: str = "generalized",
                          rounding: str = "round", random_state: RandomState = None,
                          max_rows: int | None = None) -> pd.DataFrame:
    """Rows from a (noisy) histogram: each (cell, class) is repeated by its rounded count.

    ``max_rows`` (default :data:`MAX_SYNTHETIC_ROWS`, a public cap) is checked before any row is
    materialised: at a tiny ε the noisy counts, hence the row count, can be astronomically large.

    Negative noisy counts give no rows (post-processing, Su et al. 2018, Alg. 2 line 22). ``values``:
    "generalized" writes the node label of each cell (attributes at depth 0 get the root label,
    e.g. "Any"); "sampled" draws a leaf category uniformly under the node, or a number uniformly
    inside the interval (integers for integer attributes). Columns: predictors + target.
    """
    names = schema.predictors if attributes is None else schema.check_columns(attributes)
    if values not in ("generalized", "sampled"):
        raise ValueError(f"values must be 'generalized' or 'sampled', got {values!r}")
    if rounding not in ("round", "floor"):
        raise ValueError(f"rounding must be 'round' or 'floor', got {rounding!r}")
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[1] != schema.n_classes:
        raise ValueError(f"counts must have shape (n_cells, {schema.n_classes})")
    if not np.all(np.isfinite(counts)):
        raise ValueError("counts must be finite (no NaN or infinity)")
    depths = resolve_grid(grid, names, schema)
    taxes = [schema[a].taxonomy for a in names]
    shape = tuple(t.level_sizes[d] for t, d in zip(taxes, depths))
    if int(np.prod(shape)) != counts.shape[0]:
        raise ValueError(f"counts has {counts.shape[0]} cells but the grid has {int(np.prod(shape))}")
    if rounding == "round":
        reps = np.rint(np.clip(counts, 0, None)).astype(np.int64)
    else:
        reps = np.floor(np.clip(counts, 0, None)).astype(np.int64)
    flat = reps.ravel()
    limit = MAX_SYNTHETIC_ROWS if max_rows is None else int(max_rows)
    total = float(flat.sum(dtype=np.float64))
    if total > limit:
        raise ValueError(f"the synthetic table would have about {total:,.0f} rows, more than max_rows = {limit:,} "
                         "(noisy counts at a small ε are huge); raise max_rows, or use the counts themselves "
                         "(e.g. PrivPfC.weighted_table(): one row per cell with its copy count)")
    idx = np.repeat(np.arange(flat.size), flat)
    cells, labels = np.divmod(idx, schema.n_classes)
    node = decode_cells(cells, shape) if shape else ()
    rng = check_random_state(random_state)
    data: dict[str, Any] = {}
    for a, tax, d, codes in zip(names, taxes, depths, node):
        if values == "generalized":
            data[a] = np.asarray(tax.labels(d), dtype=object)[codes]
        else:
            data[a] = sample_within(schema[a], tax, d, codes, rng)
    data[schema.target] = np.asarray(schema.classes, dtype=object)[labels]
    return pd.DataFrame(data, columns=list(names) + [schema.target])


def sample_within(attr: Attribute, tax: Taxonomy, depth: int, codes: Any, rng: np.random.Generator) -> np.ndarray:
    """A raw value drawn uniformly inside each node ``codes`` at ``depth`` of the taxonomy ``tax``
    of ``attr`` (its own, or the bins of a one-way marginal): a declared leaf category under the
    node, or a number in the node's interval clipped to the public bounds (an integer for integer
    attributes). Post-processing of a released histogram: it reads public facts and ``rng`` only."""
    codes = np.asarray(codes)
    if tax.kind == "numeric":
        iv = tax.intervals(depth)[codes]
        lo = np.maximum(iv[:, 0], attr.lower if attr.lower is not None else -np.inf)
        hi = np.minimum(iv[:, 1], attr.upper if attr.upper is not None else np.inf)
        if attr.integer:
            # nodes are (a, b] except the first, [a, b]; clipping at the attribute's lower bound
            # makes the node closed there too
            closed = (iv[:, 0] == tax.bounds[0]) | (lo > iv[:, 0])
            low_int = np.where(closed, np.ceil(lo), np.floor(lo) + 1)
            high_int = np.floor(hi)
            high_int = np.maximum(high_int, low_int)
            return (low_int + np.floor(rng.random(len(codes)) * (high_int - low_int + 1))).astype(np.int64)
        return rng.uniform(lo, hi)
    leaf_to_node = tax.leaf_to_node(depth)
    allowed = set(attr.categories)
    out = np.empty(len(codes), dtype=object)
    leaves = np.asarray(tax.leaves, dtype=object)
    for node in np.unique(codes):
        members = [i for i in np.flatnonzero(leaf_to_node == node) if leaves[i] in allowed]
        if not members:
            members = list(np.flatnonzero(leaf_to_node == node))
        where = codes == node
        out[where] = leaves[rng.choice(members, size=int(where.sum()))]
    return out
