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
part of the leaf. With two-way tables (a column given its parent), :class:`CellTree` draws the
modelled columns of a row jointly, each child's cell telling its parent which values it admits.
Post-processing of released counts: it reads the noisy marginals, public bounds and the
generator only.

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

__all__ = ["NodeCells", "IntervalCells", "grid_cells", "cell_shares", "leaf_probabilities", "CellTree",
           "values_in_cells", "draw_in_cells", "apportion", "draw_leaves", "draw_grouped_leaves",
           "consistent_counts", "rake"]

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
    return draw_grouped_leaves(np.asarray(weights, dtype=float).reshape(1, -1), np.zeros(int(n), dtype=np.int64), rng)


def draw_grouped_leaves(weights: Any, groups: Any, rng: np.random.Generator) -> np.ndarray:
    """A leaf index for every row from its group's distribution (``weights``: G × leaves, ∝,
    clipped at 0; a row of 0s: uniform), each group's rows by systematic sampling as in
    :func:`draw_leaves`: group g's n_g rows get :func:`apportion`'s cumulative counts with a uniform
    random offset of its own, in random order. Vectorised over the groups.

    >>> leaf = draw_grouped_leaves([[1.0, 1.0], [0.0, 1.0]], [0, 0, 1, 1, 0, 0], np.random.default_rng(0))
    >>> sorted(leaf[[0, 1, 4, 5]].tolist()), leaf[[2, 3]].tolist()
    ([0, 0, 1, 1], [1, 1])
    """
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    groups = np.asarray(groups, dtype=np.int64)
    w = np.where(w.sum(axis=1, keepdims=True) > 0, w, 1.0)
    sizes = np.bincount(groups, minlength=w.shape[0])
    cumulative = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True) * sizes[:, None]
    bounds = np.floor(cumulative + rng.random(w.shape[0])[:, None])
    bounds = np.minimum(np.maximum.accumulate(bounds, axis=1), sizes[:, None])   # float sums: never decreasing
    bounds[:, -1] = sizes
    order = np.lexsort((rng.random(groups.size), groups))   # the rows of each group in random order
    rank = np.empty(groups.size, dtype=np.int64)
    rank[order] = np.arange(groups.size) - np.concatenate([[0], np.cumsum(sizes)])[groups[order]]
    return (bounds[groups] <= rank[:, None]).sum(axis=1)


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


def cell_shares(attr: Attribute, tax: Taxonomy, cells: NodeCells | IntervalCells
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(group of every row, the share of each leaf inside each group's cell (G × leaves; 0 for a
    category leaf that is not declared), the cell's values in each leaf (what "uniform over the
    cell" weighs the leaves by), the cells' value ranges or None)."""
    groups, share, ranges = cells.overlap(attr, tax)
    uniform = share * leaf_measure(attr, tax)[None, :]
    if tax.kind == "categorical":                      # undeclared leaves are never drawn
        share = share * (uniform > 0)
    return groups, share, uniform, ranges


def leaf_probabilities(attr: Attribute, tax: Taxonomy, noisy: Any, cells: NodeCells | IntervalCells
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(group of every row, the leaf distribution inside each group's cell (G × leaves; a row of
    zeros for a cell holding no declared value), the cells' value ranges or None): a leaf with
    probability ∝ max(noisy, 0) × the share of the leaf inside the cell, or ∝ the cell's values in
    the leaf when all of those are ≤ 0 (uniform over the cell)."""
    groups, share, uniform, ranges = cell_shares(attr, tax, cells)
    weight = np.clip(np.asarray(noisy, dtype=float), 0.0, None)[None, :] * share
    empty = weight.sum(axis=1) <= 0
    weight[empty] = uniform[empty]
    total = weight.sum(axis=1)
    return groups, weight / np.where(total > 0, total, 1.0)[:, None], ranges


def _joint_codes(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a code per distinct combination of the integer ``codes`` of every row, numbered 0..,
    the first row of each): rows with the same codes share one."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    for c in codes:
        c = np.asarray(c, dtype=np.int64) + 1                 # −1 (an undrawn parent) is a code too
        key = np.unique(key * (int(c.max()) + 1) + c, return_inverse=True)[1].ravel()
    _, first, key = np.unique(key, return_index=True, return_inverse=True)
    return np.ravel(key), first


class CellTree:
    """A tree of conditionals restricted to each row's cells:
    P(x | row) ∝ Π_a C_a[x_pa(a), x_a] · share_a[cell_a(row), x_a], over the columns of
    ``conditionals`` (in order, each after its parent).

    ``conditionals[a]``: parent leaves × leaves of ``a`` (rows summing to 1, or 0); ``parents[a]``:
    a column of the tree, or None (a root: its conditional's row is given per row, or 0);
    ``cells[a]``: (the cell of every row, the share of each leaf inside each cell, the cell's values
    in each leaf), as :func:`cell_shares` gives them. A column in ``quiet`` sends its parent no
    message (its conditional does not describe every record).

    Each child sends its parent the chance, for each parent leaf, that its own subtree falls
    inside the row's cells, m(u) = Σ_v C[u, v] · share[v] · Π m_child(v) (belief propagation on a
    tree, Pearl 1988 §4.2). Rows with the same cells in a subtree share its message, computed
    once. Post-processing: it reads released counts and cells only.

    >>> C = {"net": np.array([[0.7, 0.3]]), "tv": np.array([[0.0, 1.0], [0.5, 0.5]])}   # net "no" → tv "n/a"
    >>> every = (np.zeros(6, dtype=int), np.ones((1, 2)), np.ones((1, 2)))
    >>> tv_yes = (np.zeros(6, dtype=int), np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]))  # a cell: tv "yes" only
    >>> tree = CellTree(C, {"net": None, "tv": "net"}, {"net": every, "tv": tv_yes})
    >>> out = tree.draw({}, np.random.default_rng(0))
    >>> out["net"].tolist(), out["tv"].tolist()          # "yes" needs net "yes": no row breaks the rule
    ([1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0])
    >>> tree.likelihood({}).round(2).tolist()[:2]        # P(tv "yes") = 0.3 · 0.5
    [0.15, 0.15]
    """

    def __init__(self, conditionals: dict[str, np.ndarray], parents: dict[str, str | None],
                 cells: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], quiet: Any = ()):
        self.columns, quiet = list(conditionals), set(quiet)
        self.conditionals = {a: np.clip(np.asarray(c, dtype=float), 0.0, None) for a, c in conditionals.items()}
        self.parents, self.cells = parents, cells
        self.children = {a: [c for c in self.columns if parents[c] == a and c not in quiet] for a in self.columns}
        self.subtree: dict[str, np.ndarray] = {}     # per row: the code of its cells in the column's subtree
        self.messages: dict[str, np.ndarray] = {}    # per subtree code: the message to the parent's leaves
        for a in reversed(self.columns):             # children first
            groups = cells[a][0]
            self.subtree[a], first = _joint_codes(groups, *[self.subtree[c] for c in self.children[a]])
            if parents[a] is not None and a not in quiet:
                self.messages[a] = self._with_children(a, cells[a][1][groups[first]], first) @ self.conditionals[a].T

    def _with_children(self, a: str, weights: np.ndarray, rows: np.ndarray, steady: bool = False) -> np.ndarray:
        """``weights`` (one row per row of ``rows``) times the messages of ``a``'s children;
        ``steady``: each message scaled to a peak of 1, and one of all 0s replaced by 1s."""
        for c in self.children[a]:
            m = self.messages[c][self.subtree[c][rows]]
            if steady:
                peak = m.max(axis=1, keepdims=True)
                m = np.where(peak > 0, m / np.where(peak > 0, peak, 1.0), 1.0)
            weights = weights * m
        return weights

    def _base(self, a: str, parent_leaf: np.ndarray | None, n: int) -> np.ndarray:
        """Each row's conditional of ``a`` given its parent's leaf (−1: unknown, every leaf 1)."""
        leaf = np.zeros(n, dtype=np.int64) if parent_leaf is None else np.asarray(parent_leaf, dtype=np.int64)
        return np.where((leaf >= 0)[:, None], self.conditionals[a][np.maximum(leaf, 0)], 1.0)

    def likelihood(self, given: dict[str, np.ndarray | None]) -> np.ndarray:
        """The chance of every row's cells under the tree: the product over its roots of
        Σ_v C[given, v] · share[v] · Π m_child(v) (``given[a]``: each row's conditional row of a
        root; absent or None: 0)."""
        n = len(self.cells[self.columns[0]][0]) if self.columns else 0
        out = np.ones(n)
        rows = np.arange(n)
        for a in self.columns:
            if self.parents[a] is None:
                groups, share, _ = self.cells[a]
                out *= (self._base(a, given.get(a), n) * self._with_children(a, share[groups], rows)).sum(axis=1)
        return out

    def draw(self, given: dict[str, np.ndarray | None], rng: np.random.Generator) -> dict[str, np.ndarray]:
        """A leaf of every column for every row, drawn jointly: each column given its parent's
        drawn leaf (a root: ``given``), times its children's messages, so a parent value that a
        child's cell excludes is not drawn. Fallbacks for a row whose weights are all 0: uniform
        over the cell times the messages, then the parent's conditional alone in the cell, then
        uniform over the cell. Rows with the same parent leaf, cell and subtree cells are drawn
        together by systematic sampling (:func:`draw_grouped_leaves`). Returns {column: leaf per
        row, −1 where the cell holds no declared value}."""
        leaves: dict[str, np.ndarray] = {}
        for a in self.columns:
            groups, share, uniform = self.cells[a]
            parent_leaf = leaves[self.parents[a]] if self.parents[a] is not None else given.get(a)
            parent_leaf = np.zeros(len(groups), dtype=np.int64) if parent_leaf is None else np.asarray(parent_leaf)
            draw_group, first = _joint_codes(parent_leaf, self.subtree[a])
            base = self._base(a, parent_leaf[first], len(first))
            weights = base * self._with_children(a, share[groups[first]], first, steady=True)
            for fallback in (self._with_children(a, uniform[groups[first]], first, steady=True),
                             base * share[groups[first]], uniform[groups[first]]):
                empty = weights.sum(axis=1) <= 0
                weights[empty] = fallback[empty]
            leaf = draw_grouped_leaves(weights, draw_group, rng)
            leaves[a] = np.where((weights.sum(axis=1) > 0)[draw_group], leaf, -1)
        return leaves


def values_in_cells(attr: Attribute, tax: Taxonomy, leaf: np.ndarray, cells: NodeCells | IntervalCells,
                    rng: np.random.Generator) -> np.ndarray:
    """A value for every row inside its ``leaf`` of ``tax`` and its cell, uniformly: the leaf's
    declared category, or a number (an integer for integer attributes) in leaf ∩ cell."""
    leaf = np.asarray(leaf, dtype=np.int64)
    if tax.kind == "categorical":
        return np.asarray(tax.leaves, dtype=object)[leaf]
    groups, _, ranges = cells.overlap(attr, tax)
    if ranges is None:                                 # node cells are unions of whole leaves
        return sample_within(attr, tax, tax.height - 1, leaf, rng)
    leaf_lo, leaf_hi = _leaf_ranges(attr, tax)
    lo = np.maximum(leaf_lo[leaf], ranges[groups, 0])
    hi = np.maximum(np.minimum(leaf_hi[leaf], ranges[groups, 1]), lo)
    if attr.integer:
        return (lo + np.floor(rng.random(groups.size) * (hi - lo + 1))).astype(np.int64)
    return rng.uniform(lo, hi)


def draw_in_cells(attr: Attribute, tax: Taxonomy, noisy: Any, cells: NodeCells | IntervalCells,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A value for every row inside its cell, from the noisy one-way marginal ``noisy`` over the
    leaves of ``tax``: a leaf with the probability of :func:`leaf_probabilities` (the one-column
    case of :class:`CellTree`: the rows of a cell together, by systematic sampling), then a
    value uniformly inside the leaf and the cell (:func:`values_in_cells`). Returns
    ``(values, drawn)``; ``drawn`` is False for a row whose cell holds no value of the declared
    domain (its value is left for the caller's own rule)."""
    conditional = np.clip(np.asarray(noisy, dtype=float), 0.0, None)[None, :]
    leaf = CellTree({attr.name: conditional}, {attr.name: None},
                    {attr.name: cell_shares(attr, tax, cells)[:3]}).draw({}, rng)[attr.name]
    drawn = leaf >= 0
    return values_in_cells(attr, tax, np.maximum(leaf, 0), cells, rng), drawn


def rake(weights: Any, margins: list[tuple[np.ndarray, np.ndarray, np.ndarray]], rounds: int = RAKE_ROUNDS,
         class_totals: Any = None, band: float | None = None, class_of: Any = None) -> np.ndarray:
    """Cell weights adjusted so that the distributions they imply match noisy marginals (iterative
    proportional fitting, Deming & Stephan 1940). ``weights``: one row per released cell (columns:
    classes); ``margins``: per marginal (the group of each cell, whose classes are then scaled
    together, or of each (cell, class) entry in C order; each group's distribution over the
    marginal's entries, G × K, e.g. a column's leaves from :func:`leaf_probabilities` or a pair's
    leaf pairs; the target non-negative counts, K); ``class_totals`` (optional) the target share of
    each class: of each class column of 2-D weights, or, with ``class_of`` (the class of each row
    of one-column weights), of the rows of each class. ``band`` (optional): no entry moves further
    than that from its starting weight, up to the final rescaling to the total (a noisy count's
    noise band: the fit stays consistent with the counts themselves, as well as with the
    marginals); the class shares, met last in every round, are not held by it. A fixed
    number of ``rounds``; post-processing of released values. Cells whose entries no target
    supports drop to 0; the total is kept."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    total = w.sum()
    if not total > 0 or w.ndim != 2:
        return w
    shape, flat = w.shape, w.ravel()
    low, high = (0.0, np.inf) if band is None else (np.clip(flat - band, 0.0, None), flat + band)
    per_entry = [np.asarray(groups, dtype=np.int64) if len(groups) == flat.size
                 else np.repeat(np.asarray(groups, dtype=np.int64), shape[1]) for groups, _, _ in margins]
    classes = None if class_totals is None else np.clip(np.asarray(class_totals, dtype=float), 0.0, None)
    class_of = None if class_of is None else np.asarray(class_of, dtype=np.int64)
    for _ in range(int(rounds)):
        for groups, (_, prob, target) in zip(per_entry, margins):
            implied = np.bincount(groups, weights=flat, minlength=prob.shape[0]) @ prob
            goal = np.asarray(target, dtype=float).ravel()
            if not goal.sum() > 0:
                continue
            goal = goal / goal.sum() * implied.sum()
            ratio = np.divide(goal, implied, out=np.zeros_like(goal), where=implied > 0)
            flat = np.clip(flat * (prob @ ratio)[groups], low, high)
        if classes is not None and classes.sum() > 0:
            implied = (flat.reshape(shape).sum(axis=0) if class_of is None
                       else np.bincount(class_of, weights=flat, minlength=classes.size))
            goal = classes / classes.sum() * implied.sum()
            ratio = np.divide(goal, implied, out=np.zeros_like(goal), where=implied > 0)
            flat = (flat.reshape(shape) * ratio[None, :]).ravel() if class_of is None else flat * ratio[class_of]
    w = flat.reshape(shape)
    return w / w.sum() * total if w.sum() > 0 else np.clip(np.asarray(weights, dtype=float), 0.0, None)
