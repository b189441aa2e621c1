"""Values inside a released cell drawn from a DP one-way marginal, so a synthetic table keeps the
shape of each column (README, "Synthetic tables").

A publisher releases cells: a taxonomy node (PrivPfC's grid, Su et al. 2018 Def. 2; DiffGen's
specialisations, Mohammed et al. 2011 §4) or an interval (DiffMulti's splits; the equal-width
bins of a projected histogram, Vinterbo 2012 §2.2). The papers spread the values of a cell evenly
over it. With ``marginal_share`` > 0 every modelled predictor also has a paid Laplace one-way marginal
over the leaves of its :func:`~dpexplore.domain.marginal_taxonomy`; :func:`draw_in_cells` then
picks, for every row, a leaf inside the row's cell with probability ∝ max(noisy count, 0) times the
share of the leaf that lies in the cell (uniform over the cell when every such count is ≤ 0; the
rows of a cell by systematic sampling, :func:`draw_leaves`), and a value uniformly inside that
part of the leaf. Post-processing of released counts: it reads the noisy marginal, public bounds
and the generator only.

>>> import numpy as np
>>> from dpexplore.domain import Attribute, Taxonomy
>>> visits = Attribute.numeric("visits", 0, 40, Taxonomy.equal_width("visits", 0, 40, (2, 4)), integer=True)
>>> noisy = np.array([90.0, -3.0, 2.0, 1.0, 0.5, -1.0, 0.0, 0.2])   # most records hold 0–5
>>> cells = IntervalCells(np.zeros(1000), np.full(1000, 40.0))       # one cell: the whole domain
>>> values, drawn = draw_in_cells(visits, visits.taxonomy, noisy, cells, np.random.default_rng(0))
>>> bool(drawn.all()), float(np.mean(values <= 5)) > 0.9
(True, True)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..domain import Attribute, Schema, Taxonomy
from ..histogram import decode_cells, resolve_grid, sample_within

__all__ = ["NodeCells", "IntervalCells", "grid_cells", "leaf_probabilities", "draw_in_cells", "apportion",
           "draw_leaves", "consistent_counts", "rake"]

RAKE_ROUNDS = 20
"""Passes of :func:`rake` over the columns: a fixed public number (no convergence test on data)."""


def _leaf_ranges(attr: Attribute, tax: Taxonomy) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the values of each leaf of a numeric ``tax`` inside the attribute's public
    bounds: integers low..high for integer attributes (the convention of
    :func:`~dpexplore.histogram.sample_within`: leaves are (a, b], the first one [a, b]), else the
    closed interval."""
    iv = tax.intervals(tax.height - 1)
    lo, hi = np.maximum(iv[:, 0], attr.lower), np.minimum(iv[:, 1], attr.upper)
    if not attr.integer:
        return lo, hi
    closed = (iv[:, 0] == tax.bounds[0]) | (lo > iv[:, 0])
    return np.where(closed, np.ceil(lo), np.floor(lo) + 1), np.floor(hi)


def leaf_measure(attr: Attribute, tax: Taxonomy) -> np.ndarray:
    """How many values each leaf of ``tax`` holds inside the public domain: integers (integer
    attributes), length (other numeric ones), 1 per declared category (0 for a leaf that is not
    one). What "uniform over a cell" weighs its leaves by."""
    if tax.kind == "categorical":
        declared = set(attr.categories)
        return np.array([1.0 if leaf in declared else 0.0 for leaf in tax.leaves])
    low, high = _leaf_ranges(attr, tax)
    return np.maximum(high - low + (1.0 if attr.integer else 0.0), 0.0)


class NodeCells:
    """The cell of every row as a taxonomy node: ``depth`` (one for all rows, or one per row) and
    ``node`` (the node index at that depth), on the same taxonomy as the marginal."""

    def __init__(self, depth: Any, node: Any):
        self.node = np.asarray(node, dtype=np.int64)
        self.depth = np.broadcast_to(np.asarray(depth, dtype=np.int64), self.node.shape)

    def take(self, index: Any) -> "NodeCells":
        """The cells of rows ``index`` (a row per synthetic record)."""
        return NodeCells(self.depth[index], self.node[index])

    def overlap(self, attr: Attribute, tax: Taxonomy) -> tuple[np.ndarray, np.ndarray, None]:
        """(group of every row, share of each leaf inside each group's cell (G × leaves), None)."""
        keys, groups = np.unique(np.column_stack([self.depth, self.node]), axis=0, return_inverse=True)
        share = np.zeros((len(keys), tax.n_leaves))
        for g, (depth, node) in enumerate(keys):
            share[g, tax.leaf_to_node(int(depth)) == node] = 1.0
        return np.ravel(groups), share, None


class IntervalCells:
    """The cell of every row as a numeric interval [``low``, ``high``) (closed at the public upper
    bound), as DiffMulti's regions and a projected histogram's bins are."""

    def __init__(self, low: Any, high: Any):
        self.low, self.high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)

    def take(self, index: Any) -> "IntervalCells":
        """The cells of rows ``index`` (a row per synthetic record)."""
        return IntervalCells(self.low[index], self.high[index])

    def _cell_ranges(self, attr: Attribute, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = bounds[:, 0], bounds[:, 1]
        if not attr.integer:
            return lo, hi
        last = hi >= attr.upper
        return np.ceil(lo), np.where(last, np.floor(np.minimum(hi, attr.upper)), np.ceil(hi) - 1)

    def overlap(self, attr: Attribute, tax: Taxonomy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group of every row, share of each leaf inside each group's cell, the cells' value
        ranges (G × 2): integers low..high, or a closed interval)."""
        keys, groups = np.unique(np.column_stack([self.low, self.high]), axis=0, return_inverse=True)
        cell_lo, cell_hi = self._cell_ranges(attr, keys)
        leaf_lo, leaf_hi = _leaf_ranges(attr, tax)
        inside = (np.minimum(leaf_hi[None, :], cell_hi[:, None]) - np.maximum(leaf_lo[None, :], cell_lo[:, None])
                  + (1.0 if attr.integer else 0.0))
        measure = leaf_measure(attr, tax)
        share = np.where(measure[None, :] > 0, np.clip(inside, 0.0, None) / np.where(measure > 0, measure, 1.0), 0.0)
        return np.ravel(groups), np.minimum(share, 1.0), np.column_stack([cell_lo, cell_hi])


def apportion(weights: Any, n: int, cumulative: bool = False, offset: float = 0.5) -> np.ndarray:
    """Copies per entry, summing to exactly ``n``, proportional to ``weights`` clipped at 0
    (deterministic post-processing; all-zero weights share ``n`` evenly).

    Largest-remainder rounding (ties by position), or with ``cumulative`` the differences of the
    rounded cumulative quotas, ⌊n·W_i/W + offset⌋ − ⌊n·W_{i−1}/W + offset⌋ (systematic rounding;
    ``offset`` 0.5 rounds to nearest): every run of consecutive entries then gets its quota up to
    less than one copy, e.g. each class of a table whose class is its last index. Largest
    remainders hand the missing copies to the largest fractional parts, which after raking can
    all fall in one class. A uniform random ``offset`` in [0, 1) makes it systematic sampling
    (:func:`draw_leaves`): each entry's expected count is then exactly its quota.

    >>> apportion([0.4, 0.4, 0.4, 0.4, 0.4], 2).tolist(), apportion([0.4, 0.4, 0.4, 0.4, 0.4], 2, cumulative=True).tolist()
    ([1, 1, 0, 0, 0], [0, 1, 0, 1, 0])
    """
    w = np.clip(np.asarray(weights, dtype=float).ravel(), 0.0, None)
    n = int(n)
    if w.size == 0:
        return np.zeros(0, dtype=np.int64)
    total = float(w.sum())
    if not total > 0 or not np.isfinite(total):
        w, total = np.ones(w.size), float(w.size)
    if cumulative:
        bounds = np.floor(np.cumsum(w) / total * n + float(offset)).astype(np.int64)
        bounds = np.minimum(np.maximum.accumulate(bounds), n)   # float sums: never decreasing
        bounds[-1] = n
        return np.diff(bounds, prepend=0)
    quota = w / total * n
    base = np.floor(quota).astype(np.int64)
    short = n - int(base.sum())
    if short > 0:
        order = np.argsort(-(quota - base), kind="stable")
        base[order[:short]] += 1
    return base


def draw_leaves(weights: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` leaf indices drawn from the distribution ∝ ``weights`` (clipped at 0; uniform when
    all are 0) by systematic sampling (Madow 1949), in random order: the counts are
    :func:`apportion` with a uniform random offset, so each leaf appears its expected number of
    times, n·p, up to less than one, where independent draws miss by about √(n·p). The synthetic
    table then shows the released distribution rather than that plus sampling noise; every leaf
    keeps probability p for each row. Post-processing of released values and the generator.

    >>> codes = draw_leaves([0.5, 0.3, 0.2], 10, np.random.default_rng(0))
    >>> np.bincount(codes, minlength=3).tolist()
    [5, 3, 2]
    """
    w = np.asarray(weights, dtype=float).ravel()
    counts = apportion(w, n, cumulative=True, offset=rng.random())
    return rng.permutation(np.repeat(np.arange(w.size), counts))


def consistent_counts(noisy: Any, total: float | None = None) -> np.ndarray:
    """The non-negative counts nearest (least squares) to ``noisy`` that sum to ``total`` (default:
    the unclipped sum of ``noisy``, itself an unbiased DP total): max(noisy − τ, 0) with τ chosen
    for the sum (the Euclidean projection onto a scaled simplex). Clipping at 0 alone keeps the
    positive half of the noise of every empty cell, which on a fine partition outweighs the
    records; this keeps the released total. Post-processing; shape of ``noisy`` kept. A total
    ≤ 0 gives the counts clipped at 0."""
    v = np.asarray(noisy, dtype=float)
    total = float(v.sum()) if total is None else float(total)
    if not total > 0 or v.size == 0:
        return np.clip(v, 0.0, None)
    u = np.sort(v.ravel())[::-1]
    excess = np.cumsum(u) - total
    k = np.flatnonzero(u - excess / np.arange(1, u.size + 1) > 0)[-1]
    return np.clip(v - excess[k] / (k + 1), 0.0, None)


def grid_cells(grid: dict, schema: Schema) -> dict[str, NodeCells]:
    """The node of every cell of a grid (cells numbered in C order as
    :func:`~dpexplore.histogram.cell_codes`), per predictor (Su et al. 2018, Def. 2–3)."""
    depths = resolve_grid(grid, schema.predictors, schema)
    shape = [schema[a].taxonomy.level_sizes[d] for a, d in zip(schema.predictors, depths)]
    nodes = decode_cells(np.arange(int(np.prod(shape))), shape)
    return {a: NodeCells(d, node) for a, d, node in zip(schema.predictors, depths, nodes)}


def leaf_probabilities(attr: Attribute, tax: Taxonomy, noisy: Any, cells: NodeCells | IntervalCells
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(group of every row, the leaf distribution inside each group's cell (G × leaves; a row of
    zeros for a cell holding no declared value), the cells' value ranges or None): a leaf with
    probability ∝ max(noisy, 0) × the share of the leaf inside the cell, or ∝ the cell's values in
    the leaf when all of those are ≤ 0 (uniform over the cell)."""
    groups, share, ranges = cells.overlap(attr, tax)
    weight = np.clip(np.asarray(noisy, dtype=float), 0.0, None)[None, :] * share
    uniform = share * leaf_measure(attr, tax)[None, :]
    if tax.kind == "categorical":                      # undeclared leaves are never drawn
        weight = weight * (uniform > 0)
    empty = weight.sum(axis=1) <= 0
    weight[empty] = uniform[empty]
    total = weight.sum(axis=1)
    return groups, weight / np.where(total > 0, total, 1.0)[:, None], ranges


def draw_in_cells(attr: Attribute, tax: Taxonomy, noisy: Any, cells: NodeCells | IntervalCells,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A value for every row inside its cell, from the noisy one-way marginal ``noisy`` over the
    leaves of ``tax``: a leaf from :func:`leaf_probabilities` (the rows of a cell together, by
    :func:`draw_leaves`), then a value uniformly inside the leaf and the cell (a declared
    category, an integer for integer attributes). Returns ``(values, drawn)``; ``drawn`` is False
    for a row whose cell holds no value of the declared domain (its value is left for the
    caller's own rule)."""
    groups, prob, ranges = leaf_probabilities(attr, tax, noisy, cells)
    total = prob.sum(axis=1)
    drawn = total[groups] > 0
    leaf = np.zeros(groups.size, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], np.arange(len(total) + 1))
    for g in np.flatnonzero(total > 0):
        rows = order[starts[g]:starts[g + 1]]
        leaf[rows] = draw_leaves(prob[g], rows.size, rng)
    if tax.kind == "categorical":
        return np.asarray(tax.leaves, dtype=object)[leaf], drawn
    if ranges is None:                                 # node cells are unions of whole leaves
        return sample_within(attr, tax, tax.height - 1, leaf, rng), drawn
    leaf_lo, leaf_hi = _leaf_ranges(attr, tax)
    lo = np.maximum(leaf_lo[leaf], ranges[groups, 0])
    hi = np.maximum(np.minimum(leaf_hi[leaf], ranges[groups, 1]), lo)
    if attr.integer:
        return (lo + np.floor(rng.random(groups.size) * (hi - lo + 1))).astype(np.int64), drawn
    return rng.uniform(lo, hi), drawn


def rake(weights: Any, margins: list[tuple[np.ndarray, np.ndarray, np.ndarray]], rounds: int = RAKE_ROUNDS,
         class_totals: Any = None) -> np.ndarray:
    """Cell weights adjusted so that the one-way distributions they imply match noisy one-way
    marginals (iterative proportional fitting, Deming & Stephan 1940). ``weights``: one row per
    released cell (columns: classes, scaled together); ``margins``: per column (group of each
    cell, its leaf distribution G × leaves from :func:`leaf_probabilities`, the target
    non-negative leaf counts); ``class_totals`` (optional, 2-D weights) the target share of each
    class column. A fixed number of ``rounds``; post-processing of released values. Cells whose
    leaves no target supports drop to 0; the total is kept."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    total = w.sum()
    if not total > 0 or w.ndim != 2:
        return w
    classes = None if class_totals is None else np.clip(np.asarray(class_totals, dtype=float), 0.0, None)
    for _ in range(int(rounds)):
        for groups, prob, target in margins:
            per_cell = w.sum(axis=1)
            implied = np.bincount(groups, weights=per_cell, minlength=prob.shape[0]) @ prob
            goal = np.asarray(target, dtype=float)
            if not goal.sum() > 0:
                continue
            goal = goal / goal.sum() * implied.sum()
            ratio = np.divide(goal, implied, out=np.zeros_like(goal), where=implied > 0)
            w = w * (prob @ ratio)[groups][:, None]
        if classes is not None and classes.sum() > 0:
            implied = w.sum(axis=0)
            goal = classes / classes.sum() * implied.sum()
            w = w * np.divide(goal, implied, out=np.zeros_like(goal), where=implied > 0)[None, :]
    return w / w.sum() * total if w.sum() > 0 else np.clip(np.asarray(weights, dtype=float), 0.0, None)
